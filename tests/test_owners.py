"""One owner per rule (issue 21): each rule below is decided in one module, and every other
module asks it. These tests read the source (``ast`` and text, nothing runs) and fail when a
rule gains a second owner; each failure names the owner to use instead.

docs/development.md, "Who owns each rule", lists every rule with its owner and its test here.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

import pytest

import kite_skills
from kite_skills.dashboard.app import _environment
from kite_skills.store import Store
from kite_skills.store.desk import PersonDesk
from kite_skills.store.lifecycle import (
    STATES,
    VIAS,
    Action,
    person_actions,
    waiting_audit_actions,
)

PACKAGE = Path(kite_skills.__file__).parent
REPO = PACKAGE.parent
TEMPLATES = PACKAGE / "dashboard" / "templates"


def _python_files() -> list[Path]:
    """Every Python file of the package and of tools/ (what ships and what builds it)."""
    return sorted([*PACKAGE.rglob("*.py"), *(REPO / "tools").glob("*.py")])


def _rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@cache
def _strings(path: Path) -> tuple[tuple[int, str], ...]:
    """``(line, text)`` of every string in ``path``'s code: literals and the literal parts of
    f-strings, but not docstrings (nor any other string standing alone as a statement).
    Kept per file, as the tree is: every test reads them."""
    nodes = list(ast.walk(_tree(path)))
    prose = {
        id(node.value)
        for node in nodes
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    return tuple(
        (node.lineno, node.value)
        for node in nodes
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
    )


def _where(path: Path, line: int) -> str:
    return f"{_rel(path)}:{line}"


def _found(
    predicate: Callable[[str], object],
    *,
    skip: frozenset[str] = frozenset(),
    files: list[Path] | None = None,
) -> list[str]:
    """``path:line`` of each string in the code (outside ``skip``) that ``predicate`` accepts."""
    return [
        _where(path, line)
        for path in files or _python_files()
        if _rel(path) not in skip
        for line, text in _strings(path)
        if predicate(text)
    ]


def _template_lines() -> Iterator[tuple[str, int, str]]:
    for path in sorted(TEMPLATES.glob("*.html")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            yield _rel(path), number, line


def _name_of(node: ast.expr) -> str:
    """The last name of ``x``, ``a.b.x`` or ``x(...)``; "" for anything else."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


@cache
def _compares(path: Path) -> tuple[tuple[int, list[ast.expr]], ...]:
    return tuple(
        (node.lineno, [node.left, *node.comparators])
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Compare)
    )


def _outside(folder: str) -> list[Path]:
    return [p for p in _python_files() if not _rel(p).startswith(folder)]


# ---- the skill-name pattern and the name/description limits --------------------------------

SKILL_RULES = "kite_skills/skill_rules.py"


def test_the_skill_name_pattern_is_written_only_in_skill_rules() -> None:
    # [a-z0-9]+(?:-[a-z0-9]+)*, with or without ?: (in Python, or a template's pattern=)
    pattern = re.compile(r"\[a-z0-9\][+*]\((\?:)?-")
    copies = _found(pattern.search, skip=frozenset({SKILL_RULES}))
    copies += [f"{p}:{n}" for p, n, line in _template_lines() if pattern.search(line)]
    assert copies == [], (
        "the skill-name pattern is written again: use kite_skills.skill_rules "
        "(is_skill_name, NAME_PATTERN)"
    )
    in_words = "lowercase letters, digits and single hyphens"
    again = _found(lambda text: in_words in text, skip=frozenset({SKILL_RULES}))
    again += [f"{p}:{n}" for p, n, line in _template_lines() if in_words in line]
    assert again == [], (
        "the skill-name rule is put in words again: use kite_skills.skill_rules "
        "(NAME_SHAPE, NAME_CHARS, NAME_RULE; the dashboard has NAME_CHARS)"
    )


def test_the_name_and_description_limits_are_numbers_only_in_skill_rules() -> None:
    limits = {"MAX_NAME_CHARS", "MAX_DESCRIPTION_CHARS"}
    defined = [
        _where(path, node.lineno)
        for path in _python_files()
        if _rel(path) != SKILL_RULES
        for node in ast.walk(_tree(path))
        for target in (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if _name_of(target) in limits
    ]
    compared = [
        _where(path, line)
        for path in _python_files()
        if _rel(path) != SKILL_RULES
        for line, operands in _compares(path)
        if any(_name_of(o) == "len" for o in operands)
        and any(isinstance(o, ast.Constant) and o.value in (64, 1024) for o in operands)
    ]
    assert defined + compared == [], (
        "a skill name's or description's limit is kept again: use "
        "kite_skills.skill_rules.MAX_NAME_CHARS / MAX_DESCRIPTION_CHARS"
    )


def test_no_template_writes_a_limit_of_its_own() -> None:
    """A length in a template (a hint, a maxlength) is a copy of a library's limit: pass the
    library's constant (NAME_CHARS, MAX_REASON_CHARS) to the template instead."""
    numbers = re.compile(r"\b(64|1000|1024|65536)\b|maxlength=\"\d")
    found = [f"{p}:{n}" for p, n, line in _template_lines() if numbers.search(line)]
    assert found == [], (
        "a template writes a limit: pass the owner's constant (skill_rules.NAME_CHARS, "
        "store.human.MAX_REASON_CHARS) as a global in dashboard/app.py's _environment"
    )


def test_the_revision_id_lengths_are_only_in_records() -> None:
    copies = re.compile(r"\b32 hex|\bprefix of \d+\b|\b\d+ or more (hex )?digits")
    found = _found(copies.search, skip=frozenset({"kite_skills/store/records.py"}))
    assert found == [], (
        "a revision id's length is written again: use kite_skills.store.records "
        "(REVISION_ID_CHARS, MIN_REVISION_PREFIX)"
    )


# ---- "did you mean" ---------------------------------------------------------------------------


def test_a_near_miss_is_judged_only_in_suggest() -> None:
    """Which known words are offered for a mistyped one, and the phrase that offers them:
    help keys, commands, choices and skill names all ask kite_skills/suggest.py."""
    owner = "kite_skills/suggest.py"
    phrase = _found(lambda s: "did you mean" in s.lower(), skip=frozenset({owner}))
    judged = [
        f"{_rel(path)}:{node.lineno}"
        for path in _python_files()
        if _rel(path) != owner
        for node in ast.walk(_tree(path))
        if _name_of(node) in ("get_close_matches", "real_quick_ratio", "quick_ratio")
        and isinstance(node, ast.Call)
    ]
    assert phrase + judged == [], (
        "a near miss is judged or offered outside kite_skills/suggest.py: use its similar(), "
        "Likeness and did_you_mean()"
    )


def test_the_short_revision_is_cut_only_in_records() -> None:
    """Lists, tables and buttons show a revision's first SHORT_REVISION_CHARS digits: the CLI
    and the dashboard ask records.short_revision (the dashboard's markup, with the whole id on
    hover and copy, is render.revision_html); no module or template cuts one itself."""
    owner = "kite_skills/store/records.py"
    cut = re.compile(r"(rev\w*|revision|seen|now)\)?\s*\[\s*:|\[\s*:\s*SHORT_REVISION_CHARS")
    python = [
        f"{_rel(path)}:{number}"
        for path in _python_files()
        if _rel(path) != owner
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if cut.search(line)
    ]
    templates = [f"{p}:{n}" for p, n, line in _template_lines() if re.search(r"\[\s*:", line)]
    assert python + templates == [], (
        "a revision is cut short outside kite_skills/store/records.py: use short_revision "
        "(the dashboard: the revision_html or short_revision filter)"
    )


# ---- what counts as a recipe ----------------------------------------------------------------


def test_what_counts_as_a_recipe_is_decided_only_by_the_loader() -> None:
    defined = [
        _where(path, node.lineno)
        for path in _python_files()
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.FunctionDef) and node.name == "is_recipe"
    ]
    assert [where.split(":")[0] for where in defined] == ["kite_skills/catalog/loader.py"], (
        f"is_recipe is defined at {defined}: keep the one in kite_skills/catalog/loader.py"
    )
    # "a Markdown file that is not the skill's SKILL.md": nobody else compares a file name
    # with SKILL.md
    again = [
        _where(path, line)
        for path in _python_files()
        if _rel(path) != "kite_skills/catalog/loader.py"
        for line, operands in _compares(path)
        if any(
            _name_of(o) == "SKILL_FILE" or (isinstance(o, ast.Constant) and o.value == "SKILL.md")
            for o in operands
        )
    ]
    assert again == [], (
        "what counts as a recipe is decided again: use kite_skills.catalog.loader.is_recipe "
        "(recipe_paths, catalog.recipe_prompts)"
    )


# ---- "waiting for a person" -----------------------------------------------------------------


def test_waiting_for_a_person_is_asked_of_skill_waiting() -> None:
    """Outside the store, no module compares a status with ``draft`` (a draft is waiting, or
    may be published: ask ``Skill.waiting`` or ``person_actions``), nor with a state written
    as a string (use the lifecycle's constants)."""
    found = [
        _where(path, line)
        for path in _outside("kite_skills/store/")
        for line, operands in _compares(path)
        if any(_name_of(o) == "status" for o in operands)
        and any(
            (isinstance(o, ast.Constant) and o.value in (*STATES, "proposed"))
            or _name_of(o) == "DRAFT"
            for o in operands
        )
    ]
    found += [
        f"{p}:{n}"
        for p, n, line in _template_lines()
        if re.search(r"status\s*(==|!=|in\b)\s*(\(|\[|DRAFT|[\"'](draft|proposed))", line)
    ]
    assert found == [], (
        "'waiting for a person' (or the state a skill is in) is decided again: use "
        "Skill.waiting (kite_skills/store/records.py) or lifecycle.person_actions"
    )


def test_the_audit_actions_that_leave_text_waiting_come_from_the_lifecycle_table() -> None:
    assert waiting_audit_actions() == {"create", "save_draft", "propose"}
    found = _found(
        lambda text: text in ("save_draft", "propose"),
        files=_outside("kite_skills/store/"),
    )
    assert found == [], (
        "the audit actions that leave text waiting are listed again: use "
        "kite_skills.store.lifecycle.waiting_audit_actions"
    )


def test_who_wrote_what_waits_is_decided_only_in_the_store() -> None:
    """Store.waiting() names who wrote each waiting text: no door scans the audit log for
    the actions that leave text waiting (the dashboard once did, so it and the CLI could name
    different authors)."""
    found = [
        _where(path, node.lineno)
        for path in _outside("kite_skills/store/")
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Name) and node.id in {"waiting_audit_actions", "sends_back"}
    ]
    assert found == [], "who wrote what waits is decided outside the store: ask Store.waiting()"


# ---- the via values, and filtering the audit log by via -------------------------------------

LIFECYCLE = "kite_skills/store/lifecycle.py"


def test_the_via_values_are_written_only_in_the_lifecycle_module() -> None:
    sql = re.compile(r"\bvia\s*(=|!=|<>|IN)\s*['(]|'(mcp|cli|dashboard)'", re.IGNORECASE)
    found = _found(sql.search, skip=frozenset({LIFECYCLE}))
    for path in _python_files():
        if _rel(path) == LIFECYCLE:
            continue
        for line, operands in _compares(path):
            if any(_name_of(o).endswith("via") for o in operands) and any(
                isinstance(o, ast.Constant) and isinstance(o.value, str) and o.value
                for o in operands
            ):
                found.append(_where(path, line))
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.keyword) and node.arg == "via":
                if isinstance(node.value, ast.Constant) and node.value.value:
                    found.append(_where(path, node.value.lineno))
            if isinstance(node, ast.Assign) and any(
                _name_of(t).startswith("VIA") for t in node.targets
            ):
                found.append(_where(path, node.lineno))
    quoted_via = re.compile(r"""(['"])(mcp|cli|dashboard)\1""")
    found += [f"{p}:{n}" for p, n, line in _template_lines() if quoted_via.search(line)]
    assert found == [], (
        "a via value is written again: use kite_skills.store.lifecycle (VIA_MCP, VIA_CLI, "
        "VIA_DASHBOARD, VIAS), bound as an SQL parameter (a template: the VIAS global)"
    )


def test_the_sql_checks_on_via_allow_exactly_the_lifecycle_vias() -> None:
    """The migrations' CHECKs are frozen history, so they are tested against the one owner
    rather than derived from it: a new via value fails here until a migration allows it."""
    checks = [
        match.group(1)
        for path in sorted((PACKAGE / "store" / "migrations").glob("*.sql"))
        for match in re.finditer(r"via IN \(([^)]*)\)", path.read_text(encoding="utf-8"))
    ]
    assert checks, "no CHECK on a via column found in the migrations"
    for allowed in checks:
        assert sorted(v.strip(" '") for v in allowed.split(",")) == sorted(VIAS), allowed


def test_messages_in_the_store_ask_the_store_for_the_command() -> None:
    """A hint naming a command says it as this program was started (Store.command, the
    ``{kite}`` of the lifecycle's messages): 'python3 kite-skills.pyz skills …' when that is
    how it runs, never a hard-coded 'kite-skills skills …'."""
    store = [p for p in _python_files() if _rel(p).startswith("kite_skills/store/")]
    commands = "|".join(sorted(_cli_commands()))
    # "their kite-skills dashboard" names the page, not a command
    names_one = re.compile(rf"(?<!their )(?<!the )kite-skills ({commands})\b")
    found = _found(names_one.search, files=store)
    # and no default of its own: a store opened without a command says invocation.NAME
    found += [
        _where(path, default.lineno)
        for path in store
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.arguments)
        for arg, default in _defaults(node)
        if arg.arg in ("command", "kite") and isinstance(default, ast.Constant)
    ]
    assert found == [], (
        "a store message names a kite-skills command itself: use store.command (the command "
        "kite_skills.invocation says started this program)"
    )


def _defaults(node: ast.arguments) -> list[tuple[ast.arg, ast.expr]]:
    """Each parameter that has a default, with it."""
    positional = [*node.posonlyargs, *node.args]
    given = zip(positional[len(positional) - len(node.defaults) :], node.defaults, strict=True)
    keywords = zip(node.kwonlyargs, node.kw_defaults, strict=True)
    return [*given, *((a, d) for a, d in keywords if d is not None)]


def _cli_commands() -> set[str]:
    """The top-level commands of ``kite-skills`` (skills, dashboard, settings, doctor …)."""
    from kite_skills.cli import build_parser

    return {
        name
        for action in build_parser()._subparsers._group_actions  # type: ignore[union-attr]
        for name in getattr(action, "choices", None) or ()
    }


def test_the_audit_log_is_filtered_by_via_in_sql_only() -> None:
    found = [
        _where(path, line)
        for path in _outside("kite_skills/store/")
        for line, operands in _compares(path)
        if any(isinstance(o, ast.Attribute) and o.attr == "via" for o in operands)
    ]
    assert found == [], (
        "audit rows are filtered by via in Python: ask Store.audit(via=…), which filters in SQL"
    )


# ---- which actions a person may take in each state ------------------------------------------


def test_no_template_encodes_which_actions_a_state_allows() -> None:
    """The skill page shows a button for each action ``person_actions`` allows: a template
    asks ``"publish" in actions``, never the skill's state."""
    found = [
        f"{p}:{n}"
        for p, n, line in _template_lines()
        if re.search(r"status\s*(==|!=|\bin\b|\bnot in\b)\s*[\"'(\[]", line)
        or re.search(r"\bif\b[^%]*\bproposed\b[^%]*%\}[^{]*<(form|button)", line)
    ]
    source = (TEMPLATES / "skill.html").read_text(encoding="utf-8")
    for state in STATES:
        for action in person_actions(state, proposed=True, published=False, agent_text=True) - {
            Action.REVERT
        }:  # history page
            assert f'"{action.value}" in actions' in source, (
                f"skill.html: no button asks '\"{action.value}\" in actions'"
            )
    assert found == [], (
        "a template decides which actions a state allows: pass person_actions(...) "
        "(kite_skills/store/lifecycle.py) as 'actions' and ask '\"X\" in actions'"
    )


def test_the_cli_describes_each_move_from_the_lifecycle_table() -> None:
    arrows = re.compile(r"\b(draft|live|archived)(/\w+)*\s*->\s*(draft|live|archived)")
    found = _found(
        arrows.search,
        skip=frozenset({LIFECYCLE}),
        files=[p for p in _python_files() if _rel(p).startswith("kite_skills/cli")],
    )
    assert found == [], (
        "the CLI writes a move between states itself: use kite_skills.store.lifecycle.moves"
    )


# ---- the login name; the unreadable-UTF-8 message; one line ---------------------------------


def test_the_login_name_and_its_fallback_are_only_in_person() -> None:
    asks = re.compile(r"\b(getpass|getuser|getlogin|pw_name)\b")
    found = [
        _where(path, number)
        for path in _python_files()
        if _rel(path) != "kite_skills/person.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if asks.search(line) and not line.lstrip().startswith("#")
    ]
    found += _found(lambda t: t in ("LOGNAME", "USER", "USERNAME"))
    assert found == [], "the login name is found again: use kite_skills.person.login_name"


def test_the_unreadable_utf8_message_is_only_in_errors() -> None:
    """A skill whose stored text is not UTF-8 is described by one message; the catalog's
    own message is for a file of the catalog (save it as UTF-8), not for stored text."""
    found = _found(
        lambda text: "not valid UTF-8" in text,
        skip=frozenset({"kite_skills/errors.py", "kite_skills/catalog/loader.py"}),
    )
    assert found == [], (
        "a message for a skill's text that is not UTF-8 is written again: use "
        "kite_skills.errors.UnreadableSkill.bad_utf8"
    )


def test_flattening_text_to_one_line_is_only_display_one_line() -> None:
    """``" ".join(text.split())`` is :func:`kite_skills.display.one_line`; the catalog's
    Markdown folds link labels the same way for CommonMark's own rule, not for display."""
    allowed = {"kite_skills/display.py", "kite_skills/catalog/_markdown.py"}
    found = [
        _where(path, node.lineno)
        for path in _python_files()
        if _rel(path) not in allowed
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and isinstance(node.func.value, ast.Constant)
        and node.func.value.value == " "
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Call)
        and _name_of(node.args[0]) == "split"
        and not node.args[0].args
    ]
    assert found == [], "text is flattened to one line again: use kite_skills.display.one_line"


def test_an_error_for_a_log_line_is_only_display_error_line() -> None:
    """``one_line(str(exc)) or type(exc).__name__`` is :func:`kite_skills.display.error_line`."""
    found = [
        _where(path, node.lineno)
        for path in _python_files()
        if _rel(path) != "kite_skills/display.py"
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.BoolOp)
        and isinstance(node.op, ast.Or)
        and _name_of(node.values[0]) == "one_line"
        and _name_of(node.values[-1]) == "__name__"
    ]
    assert found == [], "an error is made a log line again: use kite_skills.display.error_line"


def test_the_user_skill_tools_ask_the_store_for_its_limits() -> None:
    """The ``skills`` tool's limit (1-100, 20 by default) and the body's 64 KiB are the
    store's (``MAX_LIMIT``, ``DEFAULT_LIMIT``, ``MAX_BODY_BYTES``): a schema that wrote them
    as numbers would drift from what the store accepts."""
    path = PACKAGE / "server" / "user_skills.py"
    numbers = [
        _where(path, node.lineno)
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Dict)
        for key, value in zip(node.keys, node.values, strict=True)
        if isinstance(key, ast.Constant)
        and key.value in {"maximum", "default"}
        and isinstance(value, ast.Constant)
    ]
    written = _found(lambda text: re.search(r"\d\s*KiB", text), files=[path])
    assert numbers + written == [], (
        "a user-skill tool writes a store limit itself: use kite_skills.store's MAX_LIMIT, "
        "DEFAULT_LIMIT and MAX_BODY_BYTES"
    )


# ---- escaping text for display ---------------------------------------------------------------


def test_escaping_helpers_have_one_name_each() -> None:
    """No helper called ``visible``, ``shown`` or ``plain`` besides display.visible: every
    other one says what it does (visible_html, for_terminal, quoted, decoded, cmdline…)."""

    def vague(path: str, name: str) -> bool:
        if name in ("visible", "_visible", "shown", "_shown"):
            return not (path == "kite_skills/display.py" and name == "visible")
        # "plain" says nothing about escaping where text is shown (elsewhere it means the
        # sandbox's unconverted reply or a schema's simple check)
        shows = path.startswith(("kite_skills/dashboard/", "kite_skills/cli"))
        return shows and name in ("plain", "_plain")

    found = [
        _where(path, node.lineno)
        for path in _python_files()
        for node in ast.walk(_tree(path))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and vague(_rel(path), node.name)
    ]
    assert found == [], (
        "a helper with a vague name (visible/shown/plain): name it for what it does, or use "
        "kite_skills.display (visible, for_terminal, quoted, decoded, clipped, one_line)"
    )


def test_each_template_filter_is_named_after_the_function_it_runs() -> None:
    """``| visible`` in a template is display.visible, ``| visible_html`` is
    render.visible_html: a name means one thing in Python and in a template."""
    filters = _environment().filters
    ours = ("visible", "visible_html", "cell_html", "diff_html", "local_time", "seen_field")
    assert [(name, filters[name].__name__) for name in ours] == [(n, n) for n in ours]
    from kite_skills.display import visible

    assert filters["visible"] is visible
    for path, number, line in _template_lines():
        assert not re.search(r"\|\s*(plain|cell|diff_text|seen)\b(?!_)", line), (
            f"{path}:{number}: an old filter name"
        )


# ---- OS folders, --db, the Skills extension, writing to the store ---------------------------

# The zipapp's start (kite_skills/launcher/preamble.py, start.py) picks shiv's cache root from
# LOCALAPPDATA before the package can be imported: the launcher's own rule (issue 21 §2).
LAUNCHER = frozenset({"kite_skills/launcher/preamble.py", "kite_skills/launcher/start.py"})


def test_os_folders_are_found_only_in_os_dirs() -> None:
    variables = {"XDG_DATA_HOME", "XDG_CONFIG_HOME", "APPDATA", "LOCALAPPDATA"}
    found = _found(
        lambda text: (
            text in variables
            or text.startswith("XDG_")
            or text in ("Application Support", ".local/share")
        ),
        skip=frozenset({"kite_skills/os_dirs.py"}) | LAUNCHER,
    )
    assert found == [], (
        "an OS folder is worked out again: use kite_skills.os_dirs (home, data_dir, "
        "config_dir, bin_dir)"
    )


def test_db_is_declared_and_resolved_only_in_cli_db() -> None:
    found = []
    for path in _python_files():
        if _rel(path) == "kite_skills/cli/db.py":
            continue
        for node in ast.walk(_tree(path)):
            if not isinstance(node, ast.Call):
                continue
            args = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if _name_of(node) == "add_argument" and "--db" in args:
                found.append(_where(path, node.lineno))
            if _name_of(node) == "getattr" and "db" in args:
                found.append(_where(path, node.lineno))
    found += _found(lambda text: "(default: $KITE_SKILLS_DB" in text)
    # the store's hint to choose another file is store/_failures.py's ELSEWHERE
    found += _found(
        lambda text: "with --db or" in text, skip=frozenset({"kite_skills/store/_failures.py"})
    )
    found = [f for f in found if not f.startswith("kite_skills/cli/db.py")]
    assert found == [], (
        "--db is declared or read again: use kite_skills.cli.db (add_db_option, db_parent, "
        "db_path, db_named, DB_DEFAULT)"
    )


def test_the_skills_extension_id_is_written_only_in_its_module() -> None:
    owner = "kite_skills/server/skills_extension.py"
    found = _found(lambda text: "io.modelcontextprotocol/skills" in text, skip=frozenset({owner}))
    assert found == [], (
        "the Skills extension's id is written again: use "
        "kite_skills.server.skills_extension.SKILLS_EXTENSION"
    )


def test_writers_use_the_public_store_transaction() -> None:
    assert not hasattr(Store, "_write"), "Store.transaction() is the writers' way in"
    found = [
        _where(path, node.lineno)
        for path in _python_files()
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "_write"
        and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "self")
    ]
    # Only the store opens its own write transactions (the read-receipt writer has its own
    # connection, in the store too).
    found += _found(
        lambda text: bool(re.match(r"\s*BEGIN\b", text)),
        skip=frozenset({"kite_skills/store/db.py", "kite_skills/store/receipts.py"}),
    )
    assert found == [], (
        "a writer reaches into the store: use 'with store.transaction() as conn' "
        "(kite_skills/store/db.py)"
    )


def test_the_right_to_left_class_is_decided_only_in_rtl() -> None:
    """Issue 38: which characters reorder a line (the displays isolate or escape them, the
    store refuses a line mixing them) is one rule: nothing else reads a bidi class."""
    found = [
        _where(path, node.lineno)
        for path in _python_files()
        if _rel(path) != "kite_skills/rtl.py"
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Call) and _name_of(node) == "bidirectional"
    ]
    assert found == [], (
        "a bidi class is read outside kite_skills/rtl.py: ask it (is_rtl, rtl_runs, "
        "lines_with_rtl, mixed_at)"
    )


def test_which_names_look_alike_is_decided_only_in_look_alikes() -> None:
    """Issue 38: the look-alike letter groups are written once."""
    found = _found(
        lambda text: text in ("rn", "vv", "cl"), skip=frozenset({"kite_skills/look_alikes.py"})
    )
    assert found == [], "a look-alike rule is written again: ask kite_skills.look_alikes"


# ---- the fat-finger guard's thresholds ------------------------------------------------------

FAT_FINGER_OWNER = "kite_skills/calc/orders.py"
_GUARD_WORDS = re.compile(r"guard \d+ ?%|above \d+ ?% of net|more than \d+ times")


def test_the_fat_finger_thresholds_are_only_in_calc() -> None:
    """calc/orders.py's ``FAT_FINGER`` owns the guard's defaults: prepare.md states the same
    numbers, and no other code (the rehearsals' scripts included) writes one of its own."""
    from kite_skills.calc.orders import FAT_FINGER

    files = [*_python_files(), REPO / "tests" / "rehearsal" / "scripts.py"]
    found = _found(_GUARD_WORDS.search, skip=frozenset({FAT_FINGER_OWNER}), files=files)
    assert found == [], (
        f"a fat-finger threshold written outside {FAT_FINGER_OWNER}: {found} — use "
        "kite_skills.calc.orders.FAT_FINGER"
    )
    step = (
        " ".join(
            (REPO / "skills_catalog" / "orders" / "prepare.md").read_text(encoding="utf-8").split()
        )
        .split("Fat-finger guard.")[1]
        .split(" 12. ")[0]
    )
    for phrase in (
        f"`net` (default {FAT_FINGER.net_share_pct}%)",
        f"more than {FAT_FINGER.usual_size_multiple} times",
        f"more than {FAT_FINGER.price_distance_pct}% from `last_price`",
    ):
        assert phrase in step, f"orders/prepare.md step 11 no longer says {phrase!r}"


# ---- the localhost door ---------------------------------------------------------------------

LOCALHOST_DOOR = "kite_skills/mcpkit/localhost.py"
_DOOR_HEADERS = frozenset({"host", "origin", "sec-fetch-site"})
_DOOR_NAMES = frozenset({"H11Protocol", "RLIMIT_NOFILE", "set_exception_handler", "Config"})


def test_the_localhost_door_is_kept_only_in_its_module() -> None:
    """Host and web-page checks (the request headers they read), half-sent request deadlines
    and connection bounds (uvicorn's h11 protocol, the file-descriptor limit), uvicorn's
    settings and the event loop's logging: one module, which the dashboard and the sandbox's
    listener both use."""
    found = []
    for path in _python_files():
        if _rel(path) == LOCALHOST_DOOR:
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Constant) and isinstance(node.value, bytes):
                if node.value.decode("latin-1").lower() in _DOOR_HEADERS:  # ASGI's header names
                    found.append(_where(path, node.lineno))
            elif isinstance(node, (ast.Attribute, ast.Name, ast.alias)):
                name = (
                    node.name.rsplit(".", 1)[-1] if isinstance(node, ast.alias) else _name_of(node)
                )
                is_uvicorn_config = name == "Config" and "uvicorn" in ast.unparse(node)
                if name in _DOOR_NAMES - {"Config"} or is_uvicorn_config:
                    found.append(_where(path, node.lineno))
    assert found == [], (
        "a listener keeps a door of its own: use kite_skills/mcpkit/localhost.py (Door for the "
        "Host and web-page rules, config and Server for deadlines, bounds and quiet logging)"
    )


def test_which_demat_consent_authorises_a_sell_is_decided_only_in_calc() -> None:
    """Issue 41 §3: the reading of ``demat_consent`` (only ``physical`` is a standing
    authorisation) is ``calc/holdings.py`` ``standing_authorisation``; calc's ``sellable``, the
    sandbox's order path and its watch ask it."""
    found = [
        _where(path, number)
        for path in _python_files()
        if _rel(path) != "kite_skills/calc/holdings.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"demat_consent\s*[!=]=|[!=]=\s*\S*demat_consent", line)
    ]
    assert found == [], (
        "demat_consent is compared again: ask kite_skills.calc.holdings.standing_authorisation"
    )


def test_the_watch_rules_are_only_in_the_watch() -> None:
    """Issue 41 §1: each watch rule is a row of ``sandbox/sim/watch.py`` ``RULES``; the
    fat-finger thresholds the watch applies are the calc tool's ``FAT_FINGER`` (issue 42), which
    no module of the sandbox defines again."""
    found = [
        _where(path, number)
        for path in sorted((PACKAGE / "sandbox").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\b(FAT_FINGER|FatFinger)\s*[:=]", line)
        or (
            _rel(path) != "kite_skills/sandbox/sim/watch.py"
            and re.search(r"\bRULES\s*[:=]|\bRule\(", line)
        )
    ]
    assert found == [], (
        "a watch rule outside sandbox/sim/watch.py, or fat-finger thresholds of the sandbox's "
        "own: add the rule there; import the thresholds from kite_skills.calc.orders"
    )


def test_the_development_guide_names_each_rule_and_its_test() -> None:
    text = (REPO / "docs" / "development.md").read_text(encoding="utf-8")
    section = text.split("\n## Who owns each rule\n", 1)[1].split("\n## ", 1)[0]
    here = test_the_development_guide_names_each_rule_and_its_test.__name__
    tests = [name for name in globals() if name.startswith("test_") and name != here]
    missing = [name for name in tests if f"`{name}`" not in section]
    assert missing == [], (
        f"docs/development.md, 'Who owns each rule', does not name {missing}: add each "
        "rule with its owner and its test"
    )


def test_the_controlling_terminal_is_opened_only_in_cli_confirm() -> None:
    """The person's confirmation before text goes into service is asked in one place
    (issue 38): another module reading /dev/tty or the console would be a second door."""
    found = _found(
        lambda t: t in ("/dev/tty", "CONIN$", "CONOUT$"),
        skip=frozenset({"kite_skills/cli/confirm.py"}),
    )
    assert found == [], "the terminal is asked again: use kite_skills.cli.confirm.confirm"


VERBS = "kite_skills/store/verbs.py"


def test_the_person_verbs_are_tabled_only_in_store_verbs() -> None:
    """The CLI and the dashboard read one verb table (word → typed call, what it needs,
    whether a person is asked first): no other module pairs a word with a call into
    ``store.human`` in a table of its own."""
    found = []
    for path in _python_files():
        if _rel(path) == VERBS:
            continue
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Dict):
                items = [k for k in node.keys if k is not None] + list(node.values)
            elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                items = list(node.elts)
            else:
                continue
            words = any(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in items)
            calls = any(
                isinstance(e, ast.Attribute)
                and (_name_of(e.value) == "human" or e.attr in DESK_METHODS)
                for e in items
            )
            if words and calls:
                found.append(_where(path, node.lineno))
    assert found == [], (
        "a table of the person's verbs outside kite_skills/store/verbs.py: read PERSON_VERBS"
    )


DESK = "kite_skills/store/desk.py"
DESK_METHODS = frozenset(n for n in vars(PersonDesk) if not n.startswith("_"))
DOORS = ("kite_skills/cli/common.py", "kite_skills/dashboard/app.py")
CHECKS_NOT_WRITES = frozenset({"MAX_REASON_CHARS", "field_problems"})  # of store/human.py


def _imports_human(node: ast.AST) -> list[str]:
    """The names a node imports from ``store.human`` (``human`` itself for the module)."""
    if isinstance(node, ast.Import):
        return ["human" for a in node.names if a.name == "kite_skills.store.human"]
    if not isinstance(node, ast.ImportFrom):
        return []
    module = node.module or ""
    if module == "store" or module.endswith(".store"):
        return [a.name for a in node.names if a.name == "human"]
    if module == "human" or module.endswith(".store.human"):
        return [a.name for a in node.names]
    return []


def test_every_write_of_a_person_goes_through_the_desk() -> None:
    """The person's typed entry point (issue 40): outside the store, the CLI and the dashboard
    write only through a PersonDesk (store/desk.py), opened once per door (cli/common.py,
    dashboard/app.py): no module calls store.human's actions itself (its checks and limits,
    which write nothing, may be imported by name) nor opens a write transaction."""
    found = []
    opened = []
    for path in _outside("kite_skills/store/"):
        for node in ast.walk(_tree(path)):
            if set(_imports_human(node)) - CHECKS_NOT_WRITES:
                found.append(_where(path, getattr(node, "lineno", 0)))
            if isinstance(node, ast.Call) and _name_of(node.func) == "transaction":
                found.append(_where(path, node.lineno))
            if isinstance(node, ast.Call) and _name_of(node.func) == "PersonDesk":
                opened.append(_rel(path))
    assert found == [], (
        "a person's write outside the desk: write through the door's PersonDesk "
        "(kite_skills/store/desk.py; the CLI's person_desk, the dashboard's desk)"
    )
    assert sorted(opened) == sorted(DOORS), (
        f"a PersonDesk is opened in {opened}: each door opens one, in {DOORS}"
    )


SESSION = "kite_skills/mcpkit/session.py"
KIT_ALIASES = "kite_skills/mcpkit/aliases.py"


def test_the_session_rules_are_kept_only_in_the_kit() -> None:
    """One initialize per session and the word to a request before it: the kit's
    SessionRules, for the main server and the sandbox alike."""
    said = _found(
        lambda text: (
            "session is already initialized" in text or "session is not initialized" in text
        ),
        skip=frozenset({SESSION}),
    )
    state = [
        _where(path, node.lineno)
        for path in _python_files()
        if _rel(path) != SESSION
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Name)
        and node.id == "MODERN_PROTOCOL_VERSIONS"
        and _rel(path) != "kite_skills/server/protocol.py"  # the log level's era, not the rules
    ]
    assert said + state == [], "session rules outside kite_skills/mcpkit/session.py: use them"


def test_the_request_context_alias_is_declared_only_in_the_kit() -> None:
    """``Context`` is declared once (mcpkit/aliases.py); the ASGI types are starlette's."""
    found = [
        _where(path, node.lineno)
        for path in _python_files()
        if _rel(path) != KIT_ALIASES
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Subscript) and _name_of(node.value) == "ServerRequestContext"
    ]
    asgi = {"Scope", "Message", "Receive", "Send", "ASGIApp"}
    found += [
        _where(path, node.lineno)
        for path in _python_files()
        for node in ast.walk(_tree(path))
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        and any(
            _name_of(t) in asgi
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
    ]
    assert found == [], (
        "a request-context or ASGI alias declared again: import Context from kite_skills.mcpkit, "
        "and Scope, Receive, Send, ASGIApp from starlette.types"
    )


RECEIPTS = "kite_skills/store/receipts.py"


def test_the_read_receipt_writer_is_the_one_second_writer() -> None:
    """Skills, audit and history are written through Store.transaction(); the read receipts
    have their own writer (store/receipts.py: ReceiptWriter, its own connection so a read is
    never held up by a write), and no other module opens a writing connection."""
    found = [
        _where(path, node.lineno)
        for path in _python_files()
        if _rel(path) not in {"kite_skills/store/db.py", RECEIPTS}
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Call)
        and _name_of(node.func) == "connect"
        and not any(isinstance(a, ast.JoinedStr) and "mode=ro" in ast.unparse(a) for a in node.args)
    ]
    assert found == [], (
        "a writing connection outside the store and its read-receipt writer: write through "
        "Store.transaction() (kite_skills/store/db.py)"
    )


def _door_files() -> list[Path]:
    """The doors to the store: the server's user-skill adapter, the dashboard, the CLI."""
    return [
        p
        for p in _python_files()
        if _rel(p) == "kite_skills/server/user_skills.py"
        or _rel(p).startswith(("kite_skills/dashboard/", "kite_skills/cli/"))
    ]


def _untyped_dispatch(tree: ast.Module, path: str) -> list[str]:
    """Where ``tree`` hides a call from a reader: a ``Callable[..., X]``, a function returning
    ``Any``, arguments spread (``*``/``**``) into a callable it was handed rather than one it
    names (``run(ctx, **arguments)``, ``call(store, name, **kwargs)``), or a name looked up
    at run time (``getattr(store, verb)``)."""
    named = {  # what the module itself defines or imports: a call to it is followed by name
        alias.asname or alias.name.split(".")[0]
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    } | {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    found = []
    for node in ast.walk(tree):
        where = f"{path}:{getattr(node, 'lineno', 0)}"
        if (
            isinstance(node, ast.Subscript)
            and _name_of(node.value) == "Callable"
            and isinstance(node.slice, ast.Tuple)
            and isinstance(node.slice.elts[0], ast.Constant)
            and node.slice.elts[0].value is Ellipsis
        ):
            found.append(f"{where}: Callable[..., …]")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
            node.returns is not None and ast.unparse(node.returns) == "Any"
        ):
            found.append(f"{where}: {node.name} returns Any")
        elif isinstance(node, ast.Call):
            spread = any(k.arg is None for k in node.keywords) or any(
                isinstance(a, ast.Starred) for a in node.args
            )
            if spread and isinstance(node.func, ast.Name) and node.func.id not in named:
                found.append(f"{where}: arguments spread into {node.func.id}")
            looked_up = isinstance(node.func, ast.Name) and node.func.id == "getattr"
            if looked_up and len(node.args) > 1 and not isinstance(node.args[1], ast.Constant):
                found.append(f"{where}: getattr by a name known only at run time")
    return found


def test_no_untyped_dispatch_between_a_door_and_the_store() -> None:
    """Issue 40 §4: a reader follows each call from a door (the server's user-skill adapter,
    the dashboard, the CLI) to the store by name: the agent's save to AgentView.save, the
    person's Publish to PersonDesk.publish."""
    found = [
        where for path in _door_files() for where in _untyped_dispatch(_tree(path), _rel(path))
    ]
    assert found == [], (
        "untyped dispatch between a door and the store: give the handler a typed signature "
        "(a dataclass of its arguments; a Verb's run takes a PersonDesk) and call it by name"
    )


@pytest.mark.parametrize(
    "source",
    [
        "async def g(run: Callable[..., Awaitable[int]], a: dict) -> int:\n"
        "    return await run(**a)\n",
        "def g(call: object, store: object, kwargs: dict) -> None:\n"
        "    call(store, 'x', **kwargs)\n",
        "def _call(self, name: str) -> Any: ...\n",
        "def g(store: object, verb: str) -> None:\n    getattr(store, verb)()\n",
    ],
)
def test_the_dispatch_scan_finds_each_untyped_seam(source: str) -> None:
    assert _untyped_dispatch(ast.parse(source), "probe.py"), source


AGENT = "kite_skills/store/agent.py"


def test_the_read_receipts_have_one_writer() -> None:
    """The read receipts' rows and their setting are written in store/receipts.py only: the
    agent's reads through its ReceiptWriter, which only AgentView.receipt_writer (store/
    agent.py) makes, the person's setting through its set_recording. A second writer
    (another INSERT, DELETE or setting row, or a ReceiptWriter made elsewhere) fails here."""
    writes = re.compile(
        r"\b(INSERT(\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM)\s+read_receipts\b"
        r"|'read_receipts'|^read_receipts$",
        re.IGNORECASE,
    )
    found = _found(writes.search, skip=frozenset({RECEIPTS}))
    found += [
        _where(path, node.lineno)
        for path in _python_files()
        if _rel(path) != AGENT
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Call) and _name_of(node.func) == "ReceiptWriter"
    ]
    assert found == [], (
        "a second writer of read receipts: record them through AgentView.receipt_writer() "
        "(kite_skills/store/receipts.py ReceiptWriter), and change the setting through the "
        "person's desk (PersonDesk.set_read_receipts)"
    )


def test_the_upstream_sign_in_and_its_tokens_are_only_in_guard_oauth() -> None:
    """A second OAuth client, or a second token storage, could keep the person's Kite tokens
    somewhere other than memory."""
    names = {"OAuthClientProvider", "TokenStorage"}
    found = []
    for path in _python_files():
        if _rel(path) == "kite_skills/guard/oauth.py":
            continue
        for node in ast.walk(_tree(path)):
            client_auth = isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "mcp.client.auth"
            )
            if client_auth or (
                isinstance(node, ast.Name | ast.Attribute) and _name_of(node) in names
            ):
                found.append(_where(path, getattr(node, "lineno", 0)))
    assert found == [], (
        "the guard's upstream sign-in is set up again: use kite_skills.guard.oauth "
        "(upstream_auth; its tokens stay in MemoryTokens, in memory only)"
    )


# ---- the watch rules both the sandbox and the guard enforce --------------------------------

EXPOSURE = "kite_skills/exposure.py"
WATCH_RULE_NAMES = ("hedge-broken", "short-before-hedge", "over-exit", "protection-removed")
# What the four checks decide with: a function of this name is a second copy of one.
WATCH_CHECKS = {"_hedge_broken", "_short_before_hedge", "_over_exit", "_protection_removed"}


def test_the_four_watch_rules_are_written_only_in_exposure() -> None:
    """The sandbox's watch and the guard's limits take the rows (name, detects, message,
    source, check) from kite_skills/exposure.py; a second copy of a name or a check would let
    the two judge an account differently."""
    named = _found(lambda text: text in WATCH_RULE_NAMES, skip=frozenset({EXPOSURE}))
    checks = [
        _where(path, node.lineno)
        for path in _python_files()
        if _rel(path) != EXPOSURE
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.FunctionDef) and node.name in WATCH_CHECKS
    ]
    assert named + checks == [], (
        "a watch rule the guard enforces is written again: take its row from "
        "kite_skills/exposure.py (RULES, HEDGE_BROKEN …)"
    )


def test_a_kite_symbol_is_read_only_in_calc_exits() -> None:
    """A contract's kind (FUT, CE, PE) and its underlying are read off the symbol in one place
    (kite_skills/calc/exits.py: kind_of, underlying_name), so that exit_plan and the guard
    group the same legs together."""
    suffixes = {"CE", "PE", "FUT"}
    found = [
        _where(path, node.lineno)
        for path in _python_files()
        if _rel(path) != "kite_skills/calc/exits.py"
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Call)
        and _name_of(node.func) == "endswith"
        and any(
            isinstance(c, ast.Constant) and c.value in suffixes
            for a in node.args
            for c in ast.walk(a)
        )
    ]
    found += _found(lambda text: "[A-Z&-]" in text, skip=frozenset({"kite_skills/calc/exits.py"}))
    assert found == [], (
        "a Kite symbol is read again: ask kite_skills.calc.exits (kind_of, underlying_name)"
    )
