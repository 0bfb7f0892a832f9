"""``kite-skills skills …``: the person's side of the user-skill store in a terminal.

Each handler opens the store, makes one library call and prints the result. Errors are
``KiteError`` subclasses that ``kite_skills.cli.main`` prints and turns into exit status 1;
usage errors exit 2 (argparse). Read commands never create a store: a missing file is
refused, so a typo in ``--db`` shows. Agent-written text is printed through
:func:`kite_skills.display.for_terminal`, so it cannot move the cursor or hide a line.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

from kite_skills.cli import common
from kite_skills.cli import confirm as cli_confirm
from kite_skills.cli.common import (
    Command,
    Handler,
    Refused,
    ask,
    ask_text,
    colour,
    confirm,
    confirm_in_service,
    kite_command,
    open_store,
    paint,
    person_desk,
)
from kite_skills.cli.db import add_db_option, db_named, db_parent, db_path
from kite_skills.display import (
    MIN_BLANK_RUN,
    blank_lines,
    blank_runs,
    body_lines,
    count_hidden,
    for_terminal,
    local_time,
    text_size,
)
from kite_skills.errors import UnreadableSkill
from kite_skills.look_alikes import is_new_draft, look_alikes
from kite_skills.rtl import lines_with_rtl, rtl_runs
from kite_skills.store import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    VIAS,
    AuditEntry,
    Author,
    Skill,
    SkillSummary,
    Store,
)
from kite_skills.store.lifecycle import (
    STATES,
    Action,
    moves,
    person_actions,
    puts_text_in_service,
)
from kite_skills.store.records import MIN_REVISION_PREFIX, REVISION_ID_CHARS
from kite_skills.store.verbs import PERSON_VERBS, Asked, Verb


def _t(text: str) -> str:
    return for_terminal(text)


def _body(text: str) -> str:
    return for_terminal(text.rstrip("\n"), multiline=True)


def _source(text: str) -> str:
    """A body as ``show`` prints it: :func:`_body`, each run of blank lines as one line that
    says how many (issue 38: 400 blank lines scroll a text's start off the screen)."""
    lines = body_lines(for_terminal(text, multiline=True))
    runs = blank_runs(lines)
    out: list[str] = []
    index = 0
    while index < len(lines):
        if index in runs:
            out.append(f"({blank_lines(runs[index], index + 1)})")
            index += runs[index]
        else:
            out.append(lines[index])
            index += 1
    return "\n".join(out)


def _collapsed(diff: list[str]) -> list[str]:
    """A unified diff's runs of blank added, removed or kept lines, each as one line."""
    out: list[str] = []
    index = 0
    while index < len(diff):
        end = index
        while end < len(diff) and diff[end] in ("+", "-", " ") and diff[end] == diff[index]:
            end += 1
        if end - index >= MIN_BLANK_RUN:
            out.append(f"{diff[index]}({blank_lines(end - index)})")
            index = end
        else:
            out.append(diff[index])
            index += 1
    return out


def _rtl_note(description: str, body: str) -> list[str]:
    """The lines holding right-to-left characters, which are printed escaped: a terminal
    that does bidi would reorder the numbers around them (issue 38)."""
    found = [("description", description)] if rtl_runs(description) else []
    found += [(f"line {n}", line) for n, line in lines_with_rtl(body)]
    if not found:
        return []
    return [
        f"!! this text holds right-to-left characters, shown escaped (\\u05c0) in the order "
        f"stored; agents read them in stored order ({len(found)} line(s)):",
        *(f"   {where}: {_t(line)}" for where, line in found),
    ]


def _hidden_note(*texts: tuple[str, bool]) -> list[str]:
    hidden = sum(count_hidden(t, multiline=m) for t, m in texts)
    if not hidden:
        return []
    return [
        f"!! {hidden} control or invisible character(s) (bidi, zero-width, tag…) in this "
        "text are shown escaped (\\x.., \\u...., \\U........): agents will read them as they are"
    ]


def _constructs_note(body: str) -> list[str]:
    """What a rendered view of ``body`` would hide, one line each (issue 23)."""
    from kite_skills.catalog import hidden_constructs

    found = hidden_constructs(body)
    if not found:
        return []
    return [
        f"!! {len(found)} construct(s) that a rendered view does not show (agents read them "
        "as text):",
        *(
            f"   line {h.line}: {h.kind}: {_t(h.text)}"
            + ("" if h.decodes_to is None else f" (shows as {_t(h.decodes_to)})")
            for h in found
        ),
    ]


# ---- rendering ----------------------------------------------------------------------------


def _looks(store: Store, skill: Skill) -> list[tuple[str, str]]:
    """The names a new draft's name looks like (:mod:`kite_skills.look_alikes`)."""
    if not is_new_draft(skill):
        return []
    return look_alikes(store.list_all(), name=skill.name).get(skill.name, [])


def _looks_note(name: str, looks: Sequence[tuple[str, str]]) -> list[str]:
    if not looks:
        return []
    names = ", ".join(f"{other} ({where})" for other, where in looks)
    return [
        f"!! the name '{name}' looks like {names}: an agent may have named it to pass for "
        "that one; check it is the skill you mean before you publish"
    ]


def _show(skill: Skill, looks: Sequence[tuple[str, str]] = ()) -> str:
    lines = [
        f"name:         {_t(skill.name)}",
        *_looks_note(skill.name, looks),
        f"status:       {skill.status}",
        f"revision:     {skill.revision}",
        f"written by:   {_t(skill.written_by.label())}",
        f"description:  {_t(skill.description)}",
        f"created:      {local_time(skill.created_at)}",
        f"updated:      {local_time(skill.updated_at)}",
        f"published:    {local_time(skill.published_at) or 'never'}",
        *_hidden_note((skill.description, False), (skill.body, True)),
        *_rtl_note(skill.description, skill.body),
        *_constructs_note(skill.body),
        "",
        _source(skill.body),
    ]
    if skill.proposed is not None:
        p = skill.proposed
        lines += [
            "",
            f"--- proposed revision {p.revision} by {_t(p.author.label())} at "
            f"{local_time(p.proposed_at)}"
            f" (see it with '{kite_command()} skills diff {skill.name}'; accept or reject it with "
            f"'{kite_command()} skills accept|reject {skill.name}')",
            f"description:  {_t(p.description)}",
            *_hidden_note((p.description, False), (p.body, True)),
            *_rtl_note(p.description, p.body),
            *_constructs_note(p.body),
            "",
            _source(p.body),
        ]
    if Action.PUBLISH in person_actions(skill.status, **skill.facts):
        lines += [
            "",
            f"publish it with: {kite_command()} skills publish {skill.name} --rev {skill.revision}"
            f" ({text_size(skill.body)})",
        ]
    return "\n".join(lines)


def _diff(skill: Skill, *, coloured: bool = False) -> str:
    p = skill.proposed
    if p is None:
        raise Refused(
            f"'{skill.name}' has no proposed revision; nothing to compare "
            f"(see its text with '{kite_command()} skills show {skill.name}')"
        )
    old = [f"description: {_t(skill.description)}", "", *_body(skill.body).split("\n")]
    new = [f"description: {_t(p.description)}", "", *_body(p.body).split("\n")]
    lines = list(
        difflib.unified_diff(
            old,
            new,
            fromfile=f"{skill.name} revision {skill.revision} ({skill.status})",
            tofile=f"{skill.name} revision {p.revision} (proposed by {_t(p.author.label())})",
            lineterm="",
        )
    )
    if not lines:
        lines = ["(the proposed revision is the same text)"]
    lines = _collapsed(lines)
    if coloured:
        lines = [paint(line) for line in lines]
    return "\n".join(
        [
            *lines,
            *_hidden_note((p.description, False), (p.body, True)),
            *_rtl_note(p.description, p.body),
            *_constructs_note(p.body),
            "",
            f"accept it with: {kite_command()} skills accept {skill.name} --rev {p.revision}"
            f" ({text_size(p.body)})",
        ]
    )


def _skill_json(skill: Skill, *, body: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": skill.name,
        "status": skill.status,
        "description": skill.description,
        "revision": skill.revision,
        "created_at": skill.created_at,
        "updated_at": skill.updated_at,
        "published_at": skill.published_at,
        "written_by": _author_json(skill.written_by),
    }
    if body:
        out["body"] = skill.body
    p = skill.proposed
    out["proposed"] = (
        None
        if p is None
        else {
            "revision": p.revision,
            "description": p.description,
            **({"body": p.body} if body else {}),
            "proposed_by": p.proposed_by,
            "proposer": _author_json(p.author),
            "proposed_at": p.proposed_at,
        }
    )
    return out


def _author_json(author: Author) -> dict[str, Any]:
    kind = "agent" if author.is_agent else "person" if author.via else "unknown"
    return {"kind": kind, "via": author.via or None, "who": author.who or None}


def _print_json(value: object) -> None:
    # ensure_ascii: every control or bidi character leaves as a \u escape.
    print(json.dumps(value, indent=2, ensure_ascii=True))


# ---- read commands ------------------------------------------------------------------------


def no_skills_yet() -> str:
    """What ``skills list`` says on a fresh install: how a first skill comes to be."""
    kite = kite_command()
    return (
        "No skills yet. Your agent saves one when you ask it to remember a procedure (its "
        "skillSave tool), or write one yourself:\n"
        f"  {kite} skills new NAME --description 'when it applies' --body-file FILE.md\n"
        f"Each new skill waits as a draft until you publish it: '{kite} skills review' "
        f"or '{kite} dashboard'."
    )


def _fresh_install(args: argparse.Namespace) -> bool:
    """No store at the default place (no --db, no KITE_SKILLS_DB): nothing saved yet, rather
    than a path typed wrong, which is still refused."""
    return not db_named(args) and not db_path(args).exists()


def _list(args: argparse.Namespace) -> int:
    if _fresh_install(args):
        skills: list[Skill] = []
    else:
        with open_store(args) as store:
            skills = list(store.list_all())
    looks = look_alikes(skills) if not args.json else {}
    if args.status:
        skills = [s for s in skills if s.status == args.status]
    if args.pending:
        skills = [s for s in skills if s.waiting]
    if args.json:
        _print_json([_skill_json(s, body=False) for s in skills])
        return 0
    if not skills and (args.status or args.pending):
        print("no skills match")
    elif not skills:
        print(no_skills_yet())
    for s in skills:
        mark = f" (revision {s.proposed.revision} proposed)" if s.proposed else ""
        if looks.get(s.name):
            mark += " !! looks like " + ", ".join(f"{n} ({w})" for n, w in looks[s.name])
        print(f"{_t(s.name):<32} {s.status:<9} {_t(s.description)}{mark}")
    return 0


def _search(args: argparse.Namespace) -> int:
    """The live skills an agent's ``skills`` tool finds for ``QUERY``, in its order (the
    store's own search: one ranking for both)."""
    if _fresh_install(args):
        found: list[SkillSummary] = []
    else:
        with open_store(args) as store:
            found = store.search(args.query, args.limit)
    if args.json:
        _print_json([{"name": s.name, "description": s.description} for s in found])
        return 0
    if not found:
        print(f"no live skill matches {_t(repr(args.query))}")
    for rank, s in enumerate(found, 1):
        print(f"{rank:>3}. {_t(s.name):<32} {_t(s.description)}")
    return 0


def _show_cmd(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        skill = store.get(args.name)
        looks = [] if args.json else _looks(store, skill)
    if args.json:
        _print_json(_skill_json(skill, body=True))
    else:
        print(_show(skill, looks))
    return 0


def _diff_cmd(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        skill = store.get(args.name)
    print(_diff(skill, coloured=colour()))
    return 0


def _entry_json(e: AuditEntry) -> dict[str, Any]:
    return {
        "id": e.id,
        "at": e.at,
        "skill": e.skill,
        "action": e.action,
        "from_status": e.from_status,
        "to_status": e.to_status,
        "via": e.via,
        "who": e.who,
        "detail": e.detail,
        "revision": e.revision,
    }


def _log(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        entries = store.audit(limit=args.limit, name=args.skill, via=args.via)
        if args.skill and not entries:
            store.get(args.skill)  # a name never used: "did you mean"
    if args.json:
        _print_json([_entry_json(e) for e in entries])
        return 0
    for e in entries:  # every field as another tool may have written it: escaped
        move = f"{_t(e.from_status or '-')} -> {_t(e.to_status or '-')}"
        detail = f"  ({_t(e.detail)})" if e.detail else ""
        who = f"{_t(e.via)}:{_t(e.who)}"
        at = _t(local_time(e.at))
        print(f"{at}  {_t(e.skill):<24} {_t(e.action):<13} {move:<20} {who}{detail}")
    return 0


def _export(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        document = store.get(args.name).document()
    if args.output:
        Path(args.output).write_text(document, encoding="utf-8")
        print(f"wrote '{args.name}' to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(document)  # the raw text, for files and pipes
    return 0


# ---- reviewed actions (publish, accept) ---------------------------------------------------


def _reviewed(
    args: argparse.Namespace,
    person_verb: Verb,
    shows: str,
    render: Callable[[Skill], str],
    rev_of: Callable[[Skill], str | None],
) -> int:
    action = person_verb.action
    verb, proposed = action.value, action is Action.ACCEPT
    with open_store(args) as store:
        desk = person_desk(store)
        rev = args.rev
        skill = store.get(args.name)
        if rev is not None:  # a prefix is expanded to the full id, or refused
            rev = desk.resolve_revision(args.name, rev, proposed=proposed)
        else:
            if not common.interactive():
                raise Refused(
                    f"{verb} needs the revision you reviewed: run '{kite_command()} skills {shows} "
                    f"{args.name}' and pass its id with --rev (nothing changed)"
                )
            rev = rev_of(skill)
            print(render(skill))
            if rev is None:
                raise Refused(f"did not {verb} '{args.name}'; nothing changed")
            if not puts_text_in_service(action, skill.status) and (
                ask(f"\n{verb} revision {rev} of '{args.name}'? [y/N] ") != "y"
            ):
                raise Refused(f"did not {verb} '{args.name}'; nothing changed")
        desk.check_reviewed(args.name, rev, proposed=proposed)
        confirm_in_service(action, skill, f"revision {rev}")
        print(person_verb.run(desk, args.name, Asked(rev=rev)).message)
    return 0


def _publish(args: argparse.Namespace) -> int:
    return _reviewed(args, PERSON_VERBS["publish"], "show", _show, lambda s: s.revision)


def _accept(args: argparse.Namespace) -> int:
    def rev_of(skill: Skill) -> str | None:
        return skill.proposed.revision if skill.proposed else None

    return _reviewed(args, PERSON_VERBS["accept"], "diff", _diff, rev_of)


def _plain_verb(verb: Verb) -> Callable[[argparse.Namespace], int]:
    """A verb that needs nothing but the skill's name (draft, archive, restore)."""

    def run(args: argparse.Namespace) -> int:
        with open_store(args) as store:
            confirm_in_service(verb.action, store.get(args.name), "")
            print(verb.run(person_desk(store), args.name, Asked()).message)
        return 0

    return run


PLAIN_VERBS: Final = ("draft", "archive", "restore")
"""The person's verbs the CLI serves with the skill's name alone (PERSON_VERBS' rows)."""


def _delete(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        try:
            skill = store.get(args.name)
            what = f"{skill.status}, revision {skill.revision}"
        except UnreadableSkill:  # written by another tool: deleting it is the way out
            what = "a row kite-skills cannot read"
        confirm(args, f"delete {for_terminal(repr(args.name))} ({what})?")
        print(for_terminal(person_desk(store).delete(args.name).message))
    return 0


def _purge(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        confirm(args, f"forget every text the deleted skill {for_terminal(repr(args.name))} had?")
        print(person_desk(store).purge(args.name).message)
    return 0


# ---- writing text -------------------------------------------------------------------------


def _read_file(path: str) -> str:
    """The UTF-8 text of ``path``; ``-`` is standard input (``--body-file -``)."""
    try:
        if path == "-":
            return sys.stdin.buffer.read().decode("utf-8")
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Refused(f"cannot read {path}: {exc}; give a UTF-8 text file") from exc


def _editor(initial: str, suffix: str = ".md") -> str:
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor or not common.interactive():
        raise Refused(
            "no text given: pass --body-file FILE, or set $EDITOR and run this in a terminal"
        )
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / f"skill{suffix}"
        file.write_text(initial, encoding="utf-8")
        if subprocess.run([*shlex.split(editor), str(file)], check=False).returncode != 0:
            raise Refused(f"the editor ({editor}) failed; nothing changed")
        return file.read_text(encoding="utf-8")


def _new(args: argparse.Namespace) -> int:
    body = _read_file(args.body_file) if args.body_file else _editor("# " + args.name + "\n\n")
    with open_store(args, create=True) as store:
        result = person_desk(store).create(args.name, description=args.description, body=body)
    print(result.message)
    return 0


def _edit(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        desk = person_desk(store)
        current = store.get(args.name)
        description = args.description
        if args.body_file or description is not None:
            if args.rev is None:
                raise Refused(
                    f"edit needs the revision you started from: pass --rev ID (it is now "
                    f"{current.revision}, as '{kite_command()} skills show {args.name}' prints); "
                    "nothing changed"
                )
            rev = desk.resolve_revision(args.name, args.rev, proposed=False)
            body = _read_file(args.body_file) if args.body_file else None
        else:  # $EDITOR: the revision it opened is the one this edit starts from
            rev = current.revision
            if args.rev is not None:  # and it must be the one the person named
                rev = desk.resolve_revision(args.name, args.rev, proposed=False)
            body = _editor(current.body)
        confirm_in_service(Action.EDIT, current, "with your new text")
        result = desk.edit(args.name, rev=rev, description=description, body=body)
    print(result.message)
    return 0


def _parse_skill_file(path: str) -> tuple[str, str, str]:
    from kite_skills.catalog._frontmatter import FrontmatterProblem, normalise, split

    text = _read_file(path)
    try:
        parsed = split(normalise(text))
    except FrontmatterProblem as exc:
        raise Refused(f"{path}:{exc.line}: {exc.message}") from exc
    data = parsed.frontmatter or {}
    name, description = data.get("name"), data.get("description")
    if not isinstance(name, str) or not isinstance(description, str):
        raise Refused(
            f"{path}: needs frontmatter with 'name' and 'description' (text), as in SKILL.md "
            f"('{kite_command()} skills export NAME' writes one); nothing was imported"
        )
    return name, description, parsed.body.lstrip("\n")


def _import(args: argparse.Namespace) -> int:
    skills = [_parse_skill_file(f) for f in args.files]
    if args.live:  # puts text into service: the person types each name (issue 38)
        for name, _, _ in skills:
            what = "straight into service (live): agents will read it"
            cli_confirm.confirm("import", name, what, kite=kite_command())
    with open_store(args, create=True) as store:
        count = person_desk(store).import_skills(skills, live=args.live)
    state = "live" if args.live else "draft(s); publish each after review"
    print(f"imported {count} skill(s) as {state}")
    return 0


# ---- review -------------------------------------------------------------------------------


def _review(args: argparse.Namespace) -> int:
    if not common.interactive():
        raise Refused(
            "review asks questions, so it needs a terminal; in a script use 'skills list "
            "--pending', 'skills show|diff NAME' and 'skills publish|accept NAME --rev ID'"
        )
    with open_store(args) as store:
        waiting = [s for s in store.list_all() if s.waiting]
        if not waiting:
            print("nothing is waiting for you")
            return 0
        done: dict[str, list[str]] = {}
        for index, skill in enumerate(waiting, 1):
            print(f"\n=== {index}/{len(waiting)}: {_t(skill.name)} ===")
            outcome = _review_one(store, skill)
            if outcome == "quit":
                break
            done.setdefault(outcome, []).append(skill.name)
        print("\n" + _review_summary(done, len(waiting)))
    return 0


_REVIEW_OUTCOMES = ("published", "accepted", "rejected", "deleted", "skipped")


def _review_one(store: Store, skill: Skill) -> str:
    """Show one waiting skill, ask what to do, do it; returns what was done (or ``quit``)."""
    desk = person_desk(store)
    allowed = person_actions(skill.status, **skill.facts)
    if skill.proposed is not None:  # the revision waits: decide it
        print(_diff(skill, coloured=colour()))
        menu = {
            Action.ACCEPT: "[a]ccept",
            Action.REJECT: "[r]eject",
            Action.DELETE: "[d]elete the skill",
        }
    else:  # the draft waits
        print(_show(skill, _looks(store, skill)))
        menu = {Action.PUBLISH: "[p]ublish", Action.REJECT: "[r]eject", Action.DELETE: "[d]elete"}
    offered = {action: label for action, label in menu.items() if action in allowed}
    answer = ask(", ".join([*offered.values(), "[s]kip", "[q]uit"]) + "? ")
    if answer == "q":
        return "quit"
    if answer == "a" and Action.ACCEPT in offered and skill.proposed is not None:
        rev = skill.proposed.revision
        print(desk.accept_revision(skill.name, rev=rev).message)
        return "accepted"
    if answer == "r" and Action.REJECT in offered:
        reason = ask_text("why (optional; the agent's next save is told)? ")
        print(desk.reject_revision(skill.name, reason=reason).message)
        return "rejected"
    if answer == "p" and Action.PUBLISH in offered:
        rev = skill.revision
        print(desk.publish(skill.name, rev=rev).message)
        return "published"
    if answer == "d" and Action.DELETE in offered:
        what = f"{skill.status}; its audit history stays"
        if ask(f"delete {for_terminal(repr(skill.name))} ({what})? [y/N] ") == "y":
            print(for_terminal(desk.delete(skill.name).message))
            return "deleted"
    return "skipped"


def _review_summary(done: dict[str, list[str]], waiting: int) -> str:
    """``Reviewed 3 of 4: published 1 (a), deleted 1 (b), skipped 1 (c); 1 not looked at.``"""
    seen = sum(len(names) for names in done.values())
    parts = [
        f"{outcome} {len(done[outcome])} ({', '.join(_t(n) for n in done[outcome])})"
        for outcome in _REVIEW_OUTCOMES
        if outcome in done
    ]
    summary = f"Reviewed {seen} of {waiting}: " + (", ".join(parts) or "nothing")
    if seen < waiting:
        summary += f"; {waiting - seen} not looked at (run '{kite_command()} skills review' again)"
    return summary + "."


# ---- parser -------------------------------------------------------------------------------


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``skills`` and its subcommands to the main parser's subparsers."""
    fmt = argparse.RawDescriptionHelpFormatter
    skills = subparsers.add_parser(
        "skills",
        help="review, publish and manage your own skills",
        description="Review and manage your own skills (the user-skill store). "
        "Exit status: 0 done, 1 refused (the reason is printed), 2 usage error.",
        epilog="example:\n  kite-skills skills list --pending",
        formatter_class=fmt,
    )
    add_db_option(skills)
    parent = db_parent()  # also accepted after the subcommand ("skills list --db PATH")
    sub = skills.add_subparsers(dest="skills_command", metavar="COMMAND", required=True)

    def command(name: str, help_text: str, example: str, run: Handler) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = sub.add_parser(
            name,
            help=help_text,
            formatter_class=fmt,
            parents=[parent],
            epilog=f"example:\n  kite-skills skills {example}",
        )
        p.set_defaults(run=run)
        return p

    _register_reading(command)
    _register_reviewing(command)
    _register_writing(command)
    _register_records(command)


def _register_reading(command: Command) -> None:
    """list, search, show and diff: what reads one skill or the list."""
    p = command("list", "list skills with their status", "list --pending", _list)
    p.add_argument("--status", choices=STATES, help="only this status")
    p.add_argument("--pending", action="store_true", help="only what waits for you")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p = command(
        "search",
        "search your live skills as an agent's 'skills' tool does: the same matches, best "
        "first (drafts and archived skills are not searched)",
        "search 'compare funds'",
        _search,
    )
    p.add_argument(
        "query", metavar="QUERY", help="words to look for (blank: the live skills by name)"
    )
    p.add_argument(
        "--limit",
        metavar="K",
        type=int,
        default=DEFAULT_LIMIT,
        help=f"how many, 1-{MAX_LIMIT} (default {DEFAULT_LIMIT}, as for the tool)",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p = command(
        "show",
        "show one skill's text, status, revision id and any proposed revision",
        "show compare-funds",
        _show_cmd,
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p = command("diff", "unified diff of a proposed revision", "diff compare-funds", _diff_cmd)
    p.add_argument("name", metavar="NAME")


def _register_reviewing(command: Command) -> None:
    """publish, accept, the plain verbs, reject/history/revert/reads, delete, purge, review."""
    p = command(
        "publish",
        f"{PERSON_VERBS['publish'].meaning} ({moves(Action.PUBLISH)}), naming the revision you "
        "reviewed; you confirm by typing its name at the terminal",
        "publish compare-funds --rev 3f2a9c01b7de44a06b1c2d3e4f5a6b7c",
        _publish,
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument(
        "--rev",
        metavar="ID",
        help=f"the revision id 'skills show' printed ({REVISION_ID_CHARS} hex digits; a prefix "
        f"of {MIN_REVISION_PREFIX} or more is expanded when no other text of the skill starts "
        "with it)",
    )
    p = command(
        "accept",
        f"{PERSON_VERBS['accept'].meaning}, naming the revision you reviewed; you confirm at the "
        "terminal when the skill is live or archived",
        "accept compare-funds --rev 9b1e0c7d2a4f6e8b0c1d2e3f4a5b6c7d",
        _accept,
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument(
        "--rev",
        metavar="ID",
        help=f"the revision id 'skills diff' printed ({REVISION_ID_CHARS} hex digits, or a "
        f"prefix of {MIN_REVISION_PREFIX} or more)",
    )
    for word in PLAIN_VERBS:
        verb = PERSON_VERBS[word]
        note = "; you confirm at the terminal" if verb.asks_first else ""
        help_text = f"{verb.meaning} ({moves(verb.action)}{note})"
        p = command(word, help_text, f"{word} compare-funds", _plain_verb(verb))
        p.add_argument("name", metavar="NAME")
    from kite_skills.cli import history as cli_history  # reject, history, revert, reads

    cli_history.register(command)
    p = command("delete", "delete a skill (its audit history stays)", "delete x --yes", _delete)
    p.add_argument("name", metavar="NAME")
    p.add_argument("--yes", action="store_true", help="do not ask (for scripts)")
    p = command(
        "purge",
        "forget every text a deleted skill had (its history), freeing the space; the audit "
        "log keeps its record",
        "purge compare-funds --yes",
        _purge,
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("--yes", action="store_true", help="do not ask (for scripts)")
    p = command(
        "review",
        "walk through each waiting draft and proposed revision: publish, accept, reject "
        "or delete each, then a summary (needs a terminal)",
        "review",
        _review,
    )


def _register_writing(command: Command) -> None:
    """new, edit and import: what writes a person's own text."""
    p = command(
        "new",
        "write a new skill as a draft (body from a file or $EDITOR)",
        "new compare-funds --description 'When comparing funds' --body-file funds.md",
        _new,
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("--description", required=True, help="one line: when the skill applies")
    p.add_argument(
        "--body-file", metavar="FILE", help="the procedure, in Markdown ('-': standard input)"
    )
    p = command(
        "edit",
        "change a skill's description and/or body ($EDITOR when no option is given); "
        "refused if the text changed since you started",
        "edit compare-funds --rev 3f2a9c01 --body-file funds.md",
        _edit,
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument(
        "--rev",
        metavar="ID",
        help="the revision you started from ('skills show' prints it); needed with "
        "--description/--body-file; with $EDITOR, the revision the editor opens",
    )
    p.add_argument("--description", help="a new description")
    p.add_argument(
        "--body-file", metavar="FILE", help="a new body, in Markdown ('-': standard input)"
    )
    p = command(
        "import",
        "add SKILL.md-style files (frontmatter name/description, then the body) as drafts",
        "import funds.md orders.md",
        _import,
    )
    p.add_argument("files", metavar="FILE.md", nargs="+")
    p.add_argument(
        "--live",
        action="store_true",
        help="straight into service (you type each skill's name at the terminal first)",
    )


def _register_records(command: Command) -> None:
    """export and log: a skill as a file, and the audit log."""
    p = command("export", "write a skill as a SKILL.md-style file", "export x -o x.md", _export)
    p.add_argument("name", metavar="NAME")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    p = command(
        "log", "show the audit log, newest first", "log --skill compare-funds --via mcp", _log
    )
    p.add_argument("--skill", "--name", dest="skill", metavar="NAME", help="only this skill")
    p.add_argument("--via", choices=VIAS, help="only actions made this way")
    p.add_argument("--limit", metavar="K", type=int, default=50, help="how many (default 50)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
