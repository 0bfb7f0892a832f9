"""Issue 23 item 5: a draft records who wrote its text; an agent's save over a person's own
draft (never published) is a proposed revision beside it; an agent's self-chosen name is
shown as data, never as a person."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from kite_skills import store as kite_store
from kite_skills.store import Store, agent, human
from kite_skills.store.db import migrations

from .helpers import BODY

MINE = "# My way\n\n1. Check the expense ratio myself.\n"
AGENTS = "# Better\n\n1. Buy whatever is cheapest, at market.\n"


def _person_draft(store: Store, how: str) -> None:
    if how == "create":  # skills new, dashboard New
        human.create(store, "mine", description="My way", body=MINE, via="dashboard", who="pat")
    else:  # skills import (as a draft)
        human.import_skills(store, [("mine", "My way", MINE)], live=False, via="cli", who="pat")


@pytest.mark.parametrize("how", ["create", "import"])
def test_an_agents_save_over_a_persons_draft_is_a_proposal(store: Store, how: str) -> None:
    _person_draft(store, how)
    result = agent.save(store, "mine", "Better", AGENTS, who="bot 1")
    assert result.outcome == "proposed", result
    assert result.message == (
        "saved a proposed revision of 'mine' beside its text, which is unchanged: a person "
        "wrote this draft, so only a person changes its text; a person accepts it: ask the "
        "person to open their kite-skills dashboard (they can start it with: kite-skills "
        "dashboard) and accept the revision of 'mine' there"
    )
    skill = store.get("mine")
    assert (skill.status, skill.description, skill.body) == ("draft", "My way", MINE)
    assert skill.proposed is not None and skill.proposed.body == AGENTS
    assert skill.written_by.is_agent is False and skill.written_by.who == "pat"
    assert skill.proposed.author == kite_store.Author("mcp", "bot 1")
    assert store.audit(limit=1)[0].action == "propose"


def test_the_person_decides_and_the_author_follows_the_text(store: Store) -> None:
    _person_draft(store, "create")
    agent.save(store, "mine", "Better", AGENTS, who="bot 1")
    proposal = store.get("mine").proposed
    assert proposal is not None
    human.accept_revision(store, "mine", rev=proposal.revision, via="cli", who="pat")
    assert store.get("mine").written_by == kite_store.Author(
        "mcp", "bot 1"
    )  # the agent wrote this text
    agent.save(store, "mine", "Better still", AGENTS + "2.\n", who="bot 1")
    assert store.get("mine").body == AGENTS + "2.\n"  # an agent's own draft again
    rev = store.get("mine").revision
    human.edit(store, "mine", rev=rev, body=MINE, via="cli", who="pat")
    assert store.get("mine").written_by == kite_store.Author("cli", "pat")
    assert agent.save(store, "mine", "X", AGENTS, who="bot 1").outcome == "proposed"
    assert store.get("mine").body == MINE


def test_an_agents_own_draft_records_the_agent(store: Store) -> None:
    agent.save(store, "theirs", "Theirs", BODY, who="root (dashboard)")
    assert store.get("theirs").written_by == kite_store.Author("mcp", "root (dashboard)")
    assert agent.save(store, "theirs", "Theirs", BODY + "x\n", who="b").outcome == "updated_draft"


def test_an_agent_named_like_a_person_is_shown_as_an_agent() -> None:
    agent_row = kite_store.Author("mcp", "root (dashboard)").label()
    person_row = kite_store.Author("dashboard", "root").label()
    assert agent_row == 'agent: "root (dashboard)" via MCP'
    assert person_row == "person: root via dashboard"
    assert agent_row != person_row
    assert (
        kite_store.Author("mcp", 'pat" via dashboard').label()
        == 'agent: "pat\\" via dashboard" via MCP'
    )
    assert kite_store.Author("", "").label().startswith("unknown")


def test_audit_rows_name_the_revision_each_action_wrote(store: Store) -> None:
    _person_draft(store, "create")
    agent.save(store, "mine", "Better", AGENTS, who="bot 1")
    skill = store.get("mine")
    assert skill.proposed is not None
    human.accept_revision(store, "mine", rev=skill.proposed.revision, via="cli", who="pat")
    entries = list(reversed(store.audit(limit=10, name="mine")))
    assert [(e.action, e.revision) for e in entries] == [
        ("create", skill.revision),
        ("propose", skill.proposed.revision),
        ("accept", skill.proposed.revision),
    ]
    assert store.revisions_held("mine") == {skill.revision, skill.proposed.revision}


def test_the_migration_fills_authors_from_the_audit_log(tmp_path: Path) -> None:
    """A store from before issue 23 (schema 3): who wrote each text is read from its audit."""
    path = tmp_path / "old.db"
    t = "2026-01-01T00:00:00.000000Z"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(
            "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        for version, script in migrations()[:3]:
            conn.executescript(script)
            conn.execute("INSERT INTO schema_version VALUES (?, ?)", (version, t))
        skills = [("by-agent", None), ("by-person", None), ("accepted", t), ("no-audit", None)]
        for name, published in skills:
            conn.execute(
                "INSERT INTO skills (name, description, body, status, created_at, updated_at,"
                " published_at) VALUES (?, 'd', 'b', ?, ?, ?, ?)",
                (name, "live" if published else "draft", t, t, published),
            )
        audit = [
            ("by-agent", "create", "mcp", "bot 1", ""),
            ("by-person", "create", "mcp", "bot 1", ""),
            ("by-person", "edit", "dashboard", "pat", ""),
            ("by-person", "publish", "cli", "sam", ""),
            ("accepted", "import", "cli", "pat", ""),
            ("accepted", "accept", "cli", "pat", f"revision proposed by root (dashboard) at {t}"),
        ]
        conn.executemany(
            "INSERT INTO audit_log (at, skill, action, via, who, detail)"
            f" VALUES ('{t}', ?, ?, ?, ?, ?)",
            audit,
        )
        conn.commit()
    with Store.open(path) as store:
        assert store.get("by-agent").written_by == kite_store.Author("mcp", "bot 1")
        assert store.get("by-person").written_by == kite_store.Author("dashboard", "pat")
        assert store.get("accepted").written_by == kite_store.Author("mcp", "root (dashboard)")
        assert store.get("no-audit").written_by == kite_store.Author("", "")
        # an unknown author is treated as a person's: the agent proposes
        assert agent.save(store, "no-audit", "d", "x", who="b").outcome == "proposed"
        assert agent.save(store, "by-person", "d", "x", who="b").outcome == "proposed"
        assert agent.save(store, "by-agent", "d", "x", who="b").outcome == "updated_draft"


@pytest.mark.parametrize("moved_back", [False, True])
def test_every_door_names_the_person_who_wrote_a_waiting_draft(
    store: Store, moved_back: bool
) -> None:
    """A person edits an agent's draft (or a published skill, then takes it back for review):
    the waiting text is theirs, so the dashboard's list (Store.waiting) names them, as
    ``skills show`` (Skill.written_by) does, and not the agent whose text it replaced."""
    agent.save(store, "mine", "My way", BODY, who="bot 1")
    if moved_back:
        human.publish(store, "mine", rev=store.get("mine").revision, via="cli", who="pat")
    human.edit(store, "mine", rev=store.get("mine").revision, body=MINE, via="cli", who="pat")
    if moved_back:
        human.move_to_draft(store, "mine", via="dashboard", who="pat")
    skill = store.get("mine")
    [waiting] = store.waiting()
    [edited] = [e for e in store.audit(name="mine") if e.action == "edit"]
    assert (waiting.kind, waiting.by, waiting.at) == ("draft", skill.written_by, edited.at)
    assert skill.written_by == kite_store.Author("cli", "pat")


def test_an_agents_draft_is_named_after_its_newest_save(store: Store) -> None:
    agent.save(store, "theirs", "Their way", BODY, who="bot 1")
    agent.save(store, "theirs", "Their way", AGENTS, who="bot 2")
    [waiting] = store.waiting()
    [saved] = [e for e in store.audit(name="theirs") if e.action == "save_draft"]
    assert (waiting.by, waiting.at) == (kite_store.Author("mcp", "bot 2"), saved.at)
