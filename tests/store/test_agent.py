"""Every agent action from every state: allowed, no-op or refused, and the audit row it writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from kite_skills.errors import IllegalTransition, UnknownSkill
from kite_skills.store import Store, agent, human

from .helpers import BODY, archived, audit_rows, counts, draft, live

WHO = "claude-desktop 1.2.3"
# What an agent is told: what to ask the person, never a command to run itself.
PUBLISH_HINT = (
    "a person publishes it: ask the person to open their kite-skills dashboard (they can "
    "start it with: kite-skills dashboard) and publish 'compare-funds' there"
)


def test_save_new_name_creates_a_draft(store: Store) -> None:
    result = agent.save(store, "compare-funds", "When comparing two funds", BODY, who=WHO)
    assert result == agent.SaveResult(
        "compare-funds",
        "created",
        "draft",
        "saved 'compare-funds' as a new draft; agents cannot list or read it until " + PUBLISH_HINT,
    )
    skill = store.get("compare-funds")
    assert (skill.status, skill.published_at, skill.body) == ("draft", None, BODY)
    assert audit_rows(store) == [
        (
            "compare-funds",
            "create",
            None,
            "draft",
            "mcp",
            WHO,
            "description 24 chars, body 62 bytes",
        ),
    ]


def test_save_over_a_draft_updates_its_text(store: Store) -> None:
    draft(store, "compare-funds")
    result = agent.save(store, "compare-funds", "New line", "# New\n", who=WHO)
    assert (result.outcome, result.status) == ("updated_draft", "draft")
    assert result.message == (
        "updated the draft 'compare-funds'; it stays a draft until " + PUBLISH_HINT
    )
    skill = store.get("compare-funds")
    assert (skill.description, skill.body, skill.proposed) == ("New line", "# New\n", None)
    assert audit_rows(store)[-1] == (
        "compare-funds",
        "save_draft",
        "draft",
        "draft",
        "mcp",
        WHO,
        "description 8 chars, body 6 bytes",
    )


@pytest.mark.parametrize("state", ["live", "archived"])
def test_save_over_a_live_or_archived_skill_proposes_a_revision(store: Store, state: str) -> None:
    (live if state == "live" else archived)(store, "compare-funds")
    before = store.get("compare-funds")
    result = agent.save(store, "compare-funds", "Better line", "# Better\n", who=WHO)
    assert (result.outcome, result.status) == ("proposed", state)
    assert "keeps serving" in result.message or "nothing changes" in result.message
    assert result.message.endswith(
        "ask the person to open their kite-skills dashboard (they can start it with: "
        "kite-skills dashboard) and accept the revision of 'compare-funds' there"
    )
    after = store.get("compare-funds")
    # the current text keeps serving, the revision waits beside it
    assert (after.description, after.body, after.status) == (
        before.description,
        before.body,
        state,
    )
    assert after.proposed is not None
    assert (after.proposed.description, after.proposed.body, after.proposed.proposed_by) == (
        "Better line",
        "# Better\n",
        WHO,
    )
    if state == "live":
        assert store.read_live("compare-funds").body == BODY
    assert audit_rows(store)[-1] == (
        "compare-funds",
        "propose",
        state,
        state,
        "mcp",
        WHO,
        "description 11 chars, body 9 bytes",
    )


def test_a_second_proposal_replaces_the_first_and_says_so(store: Store) -> None:
    live(store, "compare-funds")
    agent.save(store, "compare-funds", "One", "# one\n", who="a 1")
    first_at = store.get("compare-funds").proposed.proposed_at  # type: ignore[union-attr]
    agent.save(store, "compare-funds", "Two", "# two\n", who="b 2")
    proposed = store.get("compare-funds").proposed
    assert proposed is not None and proposed.body == "# two\n"
    assert audit_rows(store)[-1][-1] == (
        f"description 3 chars, body 6 bytes; replaces the proposal by a 1 at {first_at}"
    )


def test_unpublish_live_archives_it(store: Store) -> None:
    live(store, "compare-funds")
    result = agent.unpublish(store, "compare-funds", who=WHO)
    assert result == agent.ActionResult(
        "compare-funds",
        "unpublish",
        "live",
        "archived",
        True,
        "took 'compare-funds' out of service (live -> archived); skillPublish puts it back",
    )
    assert store.get("compare-funds").status == "archived"
    assert audit_rows(store)[-1] == (
        "compare-funds",
        "unpublish",
        "live",
        "archived",
        "mcp",
        WHO,
        "",
    )


def test_unpublish_archived_is_a_no_op_without_audit_row(store: Store, db_path: Path) -> None:
    archived(store, "compare-funds")
    before = counts(db_path)
    result = agent.unpublish(store, "compare-funds", who=WHO)
    assert (result.changed, result.message) == (
        False,
        "'compare-funds' is already archived; nothing changed",
    )
    assert counts(db_path) == before


def test_unpublish_draft_is_refused(store: Store, db_path: Path) -> None:
    draft(store, "compare-funds")
    before = counts(db_path)
    with pytest.raises(IllegalTransition) as info:
        agent.unpublish(store, "compare-funds", who=WHO)
    assert str(info.value) == (
        "cannot unpublish 'compare-funds': it is a draft, so it is not in service; nothing changed"
    )
    assert info.value.name == "compare-funds"
    assert counts(db_path) == before


def test_republish_archived_skill_a_person_published(store: Store) -> None:
    archived(store, "compare-funds")
    published_at = store.get("compare-funds").published_at
    result = agent.republish(store, "compare-funds", who=WHO)
    assert (result.changed, result.from_status, result.to_status) == (True, "archived", "live")
    assert result.message == "put 'compare-funds' back in service (archived -> live)"
    skill = store.read_live("compare-funds")
    assert skill.published_at == published_at  # first activation is kept, never reset
    assert audit_rows(store)[-1] == (
        "compare-funds",
        "republish",
        "archived",
        "live",
        "mcp",
        WHO,
        "",
    )


def test_republish_live_is_a_no_op(store: Store, db_path: Path) -> None:
    live(store, "compare-funds")
    before = counts(db_path)
    result = agent.republish(store, "compare-funds", who=WHO)
    assert (result.changed, result.message) == (
        False,
        "'compare-funds' is already live; nothing changed",
    )
    assert counts(db_path) == before


def test_republish_a_never_published_draft_is_refused(store: Store, db_path: Path) -> None:
    draft(store, "compare-funds")
    before = counts(db_path)
    with pytest.raises(IllegalTransition) as info:
        agent.republish(store, "compare-funds", who=WHO)
    assert str(info.value) == (
        "cannot publish 'compare-funds': it is a draft that a person has never published; "
        + PUBLISH_HINT
    )
    assert counts(db_path) == before
    assert store.get("compare-funds").published_at is None


@pytest.mark.parametrize("start", ["live", "archived"])
def test_republish_a_skill_moved_back_to_draft_is_refused(
    store: Store, db_path: Path, start: str
) -> None:
    (live if start == "live" else archived)(store, "compare-funds")
    human.move_to_draft(store, "compare-funds", via="dashboard", who="alice")
    before = counts(db_path)
    with pytest.raises(IllegalTransition) as info:
        agent.republish(store, "compare-funds", who=WHO)
    assert str(info.value) == (
        "cannot publish 'compare-funds': a person moved it back to draft for review, so only "
        "a person can publish it again; " + PUBLISH_HINT
    )
    assert counts(db_path) == before
    assert store.get("compare-funds").status == "draft"


def test_archived_but_never_published_is_refused(store: Store, db_path: Path) -> None:
    """Not reachable through the actions, but a hand-edited or migrated file could hold it."""
    archived(store, "compare-funds")
    with store.transaction() as conn:
        conn.execute("UPDATE skills SET published_at = NULL")
    with pytest.raises(IllegalTransition, match="a person has never put it into service"):
        agent.republish(store, "compare-funds", who=WHO)
    assert store.get("compare-funds").status == "archived"


@pytest.mark.parametrize("action", [agent.unpublish, agent.republish])
def test_unknown_skill(store: Store, action) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UnknownSkill) as info:
        action(store, "no-such-skill", who=WHO)
    assert str(info.value) == ("no skill named 'no-such-skill'; find one with the skills tool")


def test_agent_actions_always_record_via_mcp_and_a_readable_who(store: Store) -> None:
    agent.save(store, "a", "d", "b", who="")
    agent.save(store, "b", "d", "b", who="x\n" + "y" * 500)
    rows = audit_rows(store)
    assert {r[4] for r in rows} == {"mcp"}
    assert rows[0][5] == "unknown"
    assert rows[1][5] == "x " + "y" * 198


@pytest.mark.parametrize("start", ["live", "archived"])
def test_save_over_a_skill_moved_back_to_draft_proposes_and_keeps_the_persons_text(
    store: Store, db_path: Path, start: str
) -> None:
    """Issue 9 item 3: a person published it, then took it back for review; an agent's save
    must not overwrite the text the person approved."""
    (live if start == "live" else archived)(store, "compare-funds")
    human.move_to_draft(store, "compare-funds", via="cli", who="alice")
    before = store.get("compare-funds")
    result = agent.save(store, "compare-funds", "Evil line", "# Buy at market\n", who=WHO)
    assert (result.outcome, result.status) == ("proposed", "draft")
    assert result.message == (
        "saved a proposed revision of 'compare-funds' beside its text, which is unchanged: a "
        "person published it before and moved it back to draft for review, so only a person "
        "changes its text; a person accepts it: ask the person to open their kite-skills "
        "dashboard (they can start it with: kite-skills dashboard) and accept the revision "
        "of 'compare-funds' there"
    )
    after = store.get("compare-funds")
    assert (after.description, after.body, after.status, after.published_at) == (
        before.description,
        before.body,
        "draft",
        before.published_at,
    )
    assert after.proposed is not None
    assert (after.proposed.description, after.proposed.body) == ("Evil line", "# Buy at market\n")
    assert audit_rows(store)[-1] == (
        "compare-funds",
        "propose",
        "draft",
        "draft",
        "mcp",
        WHO,
        "description 9 chars, body 16 bytes",
    )
    # The person still decides: rejecting leaves their text, publishing serves their text.
    human.publish(
        store, "compare-funds", rev=store.get("compare-funds").revision, via="cli", who="alice"
    )
    assert store.read_live("compare-funds").body == BODY


def test_an_agents_own_never_published_draft_is_still_updated(store: Store) -> None:
    draft(store, "compare-funds")
    agent.save(store, "compare-funds", "Second try", "# Second\n", who=WHO)
    skill = store.get("compare-funds")
    assert (skill.description, skill.body, skill.proposed) == ("Second try", "# Second\n", None)
