"""The lifecycle table and the draft boundary between the agent and human modules."""

from __future__ import annotations

import ast
import sys
import types
from pathlib import Path

import pytest

import kite_skills
from kite_skills.store import agent, lifecycle
from kite_skills.store.lifecycle import (
    ABSENT,
    ARCHIVED,
    DRAFT,
    LIVE,
    RULES,
    STATES,
    Action,
    Actor,
    Outcome,
    find_rule,
)

PACKAGE = Path(kite_skills.__file__).parent
AGENT_ACTIONS = {Action.SAVE, Action.UNPUBLISH, Action.REPUBLISH}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # resolve a relative import against the file's package
                pkg = path.relative_to(PACKAGE.parent).with_suffix("").parts[: -node.level]
                base = ".".join((*pkg, base)) if base else ".".join(pkg)
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}
    return found


def test_every_action_has_a_rule_from_every_state_and_publication() -> None:
    for action in Action:
        actor = Actor.AGENT if action in AGENT_ACTIONS else Actor.HUMAN
        for state in (*STATES, ABSENT):
            for published in (False, True):
                for agent_text in (False, True):
                    for proposed in (False, True):
                        if state == LIVE and not published:
                            continue  # impossible: a CHECK constraint forbids it
                        rule = find_rule(action, actor, state, published, agent_text, proposed)
                        if state == ABSENT and rule is None:
                            continue  # UnknownSkill
                        assert rule is not None, (action, state, published, agent_text, proposed)


def test_rules_do_not_overlap() -> None:
    keys = [(r.action, r.actor, r.from_state, r.published, r.agent_text, r.proposed) for r in RULES]
    assert len(keys) == len(set(keys))
    for action, actor, state, *_ in keys:
        for p in (False, True):
            for t in (False, True):
                for q in (False, True):
                    matching = [
                        k
                        for k in keys
                        if k[:3] == (action, actor, state)
                        and k[3] in (None, p)
                        and k[4] in (None, t)
                        and k[5] in (None, q)
                    ]
                    assert len(matching) <= 1, matching


def test_agent_rules_never_grant_capability() -> None:
    agent_rules = [r for r in RULES if r.actor is Actor.AGENT]
    assert {r.action for r in agent_rules} == AGENT_ACTIONS
    for r in agent_rules:
        assert not r.sets_published_at
        if r.outcome is Outcome.ALLOW and r.to_state == LIVE:
            assert (r.from_state, r.published) in {(LIVE, None), (ARCHIVED, True)}
    assert find_rule(Action.REPUBLISH, Actor.AGENT, DRAFT, True).outcome is Outcome.REFUSE  # type: ignore[union-attr]
    assert find_rule(Action.REPUBLISH, Actor.AGENT, DRAFT, False).outcome is Outcome.REFUSE  # type: ignore[union-attr]


def test_only_human_rules_set_published_at() -> None:
    setters = {r.action for r in RULES if r.sets_published_at}
    assert setters == {Action.PUBLISH, Action.RESTORE, Action.IMPORT}
    assert all(r.actor is Actor.HUMAN for r in RULES if r.sets_published_at)


def test_agent_module_cannot_reach_human_actions() -> None:
    source = Path(agent.__file__).read_text(encoding="utf-8")
    imports = _imports(Path(agent.__file__))
    assert not any(part in i for i in imports for part in ("human", "desk", "verbs")), imports
    assert "published_at" not in source.replace("``published_at``", "")
    assert "Actor.HUMAN" not in source.replace("``Actor.HUMAN``", "")


def test_mcp_server_imports_only_the_agent_writer() -> None:
    """The MCP server reads and writes only through store.agent (its AgentView; see also
    tests/server/test_user_skills_boundary.py, which keeps the Store out of server/)."""
    forbidden = (
        "kite_skills.store.human",
        "kite_skills.store.desk",
        "kite_skills.store.verbs",
        "kite_skills.store._engine",
        "kite_skills.store.lifecycle.Actor",
    )
    for path in sorted((PACKAGE / "server").rglob("*.py")):
        imports = _imports(path)
        bad = [i for i in imports if i.startswith(forbidden)]
        assert bad == [], f"{path.relative_to(PACKAGE)} imports {bad}"
        assert "store.human" not in path.read_text(encoding="utf-8"), path


def test_check_table_rejects_an_agent_rule_that_publishes(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = lifecycle.Rule(Action.REPUBLISH, Actor.AGENT, DRAFT, Outcome.ALLOW, "x", to_state=LIVE)
    monkeypatch.setattr(lifecycle, "RULES", (*RULES, bad))
    with pytest.raises(AssertionError, match="makes a skill live"):
        lifecycle._check_table()


def test_check_table_rejects_an_agent_rule_that_overwrites_published_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bad = lifecycle.Rule(
        Action.SAVE,
        Actor.AGENT,
        ARCHIVED,
        Outcome.ALLOW,
        "x",
        to_state=ARCHIVED,
        effect=lifecycle.Effect.SET_TEXT,
        published=True,
    )
    monkeypatch.setattr(lifecycle, "RULES", (bad, *RULES))
    with pytest.raises(AssertionError, match="overwrites text a person published"):
        lifecycle._check_table()


def test_agent_save_over_an_ever_published_skill_is_always_a_proposal() -> None:
    for state in STATES:
        rule = find_rule(Action.SAVE, Actor.AGENT, state, True)
        assert rule is not None and rule.effect is lifecycle.Effect.PROPOSE, (state, rule)
    own = find_rule(Action.SAVE, Actor.AGENT, DRAFT, False, agent_text=True)
    assert own is not None and own.effect is lifecycle.Effect.SET_TEXT


def test_agent_save_over_a_persons_draft_is_a_proposal() -> None:
    """Issue 23 item 5: a draft a person wrote (never published) keeps its text."""
    for state in STATES:
        for published in (False, True):
            rule = find_rule(Action.SAVE, Actor.AGENT, state, published, agent_text=False)
            if state == LIVE and not published:
                continue
            assert rule is not None and rule.effect is lifecycle.Effect.PROPOSE, (state, rule)


def test_the_check_refuses_an_agent_rule_overwriting_a_persons_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bad = lifecycle.Rule(
        Action.SAVE,
        Actor.AGENT,
        DRAFT,
        Outcome.ALLOW,
        "x",
        to_state=DRAFT,
        effect=lifecycle.Effect.SET_TEXT,
        published=False,
    )
    monkeypatch.setattr(lifecycle, "RULES", (bad, *RULES))
    with pytest.raises(AssertionError, match="overwrites text a person wrote"):
        lifecycle._check_table()


def test_the_table_is_checked_when_the_module_is_imported() -> None:
    """Load a copy of lifecycle.py with one rule that lets an agent publish a draft: the
    import itself must fail, so a broken table can never reach a running server. (Fails if
    the import-time ``_check_table()`` call is removed.)"""
    source = Path(lifecycle.__file__).read_text(encoding="utf-8")
    marker = "RULES: Final[tuple[Rule, ...]] = (\n"
    assert marker in source
    bad_rule = (
        "    Rule(Action.SAVE, Actor.AGENT, DRAFT, Outcome.ALLOW, 'x', to_state=LIVE,"
        " sets_published_at=True),\n"
    )
    name = "kite_skills.store._lifecycle_copy_under_test"
    module = types.ModuleType(name)
    module.__file__ = lifecycle.__file__
    sys.modules[name] = module  # dataclasses look their module up while building Rule
    try:
        code = compile(source.replace(marker, marker + bad_rule, 1), lifecycle.__file__, "exec")
        with pytest.raises(AssertionError, match="sets published_at"):
            exec(code, module.__dict__)
        clean = compile(source, lifecycle.__file__, "exec")
        exec(clean, types.ModuleType(name).__dict__ | {"__name__": name})  # the real table loads
    finally:
        del sys.modules[name]


def test_what_a_person_may_do_in_each_state_comes_from_the_table() -> None:
    mine = {"proposed": False, "published": False, "agent_text": False}
    assert lifecycle.person_actions(DRAFT, **mine) == {"publish", "edit", "revert", "delete"}
    # an agent's new draft can also be sent back with a reason (request changes) ...
    agents = {**mine, "agent_text": True}
    assert lifecycle.person_actions(DRAFT, **agents) == {
        "publish",
        "edit",
        "revert",
        "delete",
        "reject",
    }
    # ... but not one a person published before and took back: its own text is not new
    assert "reject" not in lifecycle.person_actions(DRAFT, **{**agents, "published": True})
    live = {"archive", "move_to_draft", "edit", "revert", "delete"}
    published = {**mine, "published": True}
    assert lifecycle.person_actions(LIVE, **published) == live
    assert lifecycle.person_actions(LIVE, **{**published, "agent_text": True}) == live
    assert lifecycle.person_actions(ARCHIVED, **{**published, "proposed": True}) == {
        "restore",
        "move_to_draft",
        "edit",
        "revert",
        "delete",
        "accept",
        "reject",
    }


def test_the_cli_help_says_the_moves_the_table_allows() -> None:
    assert lifecycle.moves(Action.MOVE_TO_DRAFT) == "live/archived -> draft"
    assert lifecycle.moves(Action.ARCHIVE) == "live -> archived"
    assert lifecycle.moves(Action.RESTORE) == "archived -> live"
    assert lifecycle.moves(Action.PUBLISH) == "draft -> live"


def test_the_person_actions_that_put_text_into_service() -> None:
    """What the CLI asks the person to confirm at the terminal (issue 38): making a skill
    live, and changing the text of a live or archived one; nothing else."""
    from kite_skills.store.lifecycle import ABSENT, STATES, puts_text_in_service

    found = {
        (action.value, state)
        for action in Action
        for state in (*STATES, ABSENT)
        if puts_text_in_service(action, state)
    }
    assert found == {
        ("publish", "draft"),
        ("restore", "archived"),
        ("import", "absent"),
        *(
            (action, state)
            for action in ("accept", "edit", "revert")
            for state in ("live", "archived")
        ),
    }
