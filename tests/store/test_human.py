"""Every human action from every state: allowed, no-op or refused, and the audit row it writes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kite_skills.errors import IllegalTransition, InvalidSkill, StaleRevision, UnknownSkill
from kite_skills.store import Store, agent, human

from .helpers import BODY, archived, audit_rows, counts, draft, live

SETUP = {"draft": draft, "live": live, "archived": archived}


def _act(action, store: Store, name: str, **kw: str):  # type: ignore[no-untyped-def]
    """Call ``action``, naming the reviewed revision when it needs one (publish, accept)."""
    if action in (human.publish, human.accept_revision):
        try:
            skill = store.get(name)
        except UnknownSkill:
            kw["rev"] = "0" * 32
        else:
            text = skill.proposed if action is human.accept_revision else skill
            kw["rev"] = text.revision if text is not None else "0" * 32
    return action(store, name, **kw)


# (action, from state) -> (to state, message) for every allowed status move
ALLOWED = {
    (human.publish, "draft"): ("live", "published 'compare-funds' (draft -> live)"),
    (human.restore, "archived"): ("live", "restored 'compare-funds' (archived -> live)"),
    (human.archive, "live"): ("archived", "archived 'compare-funds' (live -> archived)"),
    (human.move_to_draft, "live"): (
        "draft",
        "moved 'compare-funds' back to draft (live -> draft); agents can no longer read it "
        "or publish it",
    ),
    (human.move_to_draft, "archived"): (
        "draft",
        "moved 'compare-funds' back to draft (archived -> draft); agents can no longer publish it",
    ),
}
NOOPS = {
    (human.publish, "live"): "'compare-funds' is already live; nothing changed",
    (human.restore, "live"): "'compare-funds' is already live; nothing changed",
    (human.archive, "archived"): "'compare-funds' is already archived; nothing changed",
    (human.move_to_draft, "draft"): "'compare-funds' is already a draft; nothing changed",
}
REFUSED = {
    (human.publish, "archived"): (
        "cannot publish 'compare-funds': it is archived; put it back with "
        "'kite-skills skills restore compare-funds' (Restore on the dashboard)"
    ),
    (human.restore, "draft"): (
        "cannot restore 'compare-funds': it is a draft; publish it with "
        "'kite-skills skills publish compare-funds' (Publish on the dashboard)"
    ),
    (human.archive, "draft"): (
        "cannot archive 'compare-funds': it is a draft, so it is not in service; delete it "
        "with 'kite-skills skills delete compare-funds' if you no longer want it"
    ),
}


def test_every_status_action_and_state_is_covered() -> None:
    pairs = set(ALLOWED) | set(NOOPS) | set(REFUSED)
    actions = (human.publish, human.restore, human.archive, human.move_to_draft)
    assert pairs == {(a, s) for a in actions for s in SETUP}


@pytest.mark.parametrize(
    ("action", "state"), list(ALLOWED), ids=lambda x: getattr(x, "__name__", x)
)
def test_allowed(store: Store, action, state: str) -> None:  # type: ignore[no-untyped-def]
    SETUP[state](store, "compare-funds")
    to_state, message = ALLOWED[(action, state)]
    result = _act(action, store, "compare-funds", via="dashboard", who="alice")
    assert (result.from_status, result.to_status, result.changed, result.message) == (
        state,
        to_state,
        True,
        message,
    )
    assert store.get("compare-funds").status == to_state
    assert audit_rows(store)[-1] == (
        "compare-funds",
        result.action,
        state,
        to_state,
        "dashboard",
        "alice",
        "",
    )


@pytest.mark.parametrize(("action", "state"), list(NOOPS), ids=lambda x: getattr(x, "__name__", x))
def test_noop(store: Store, db_path: Path, action, state: str) -> None:  # type: ignore[no-untyped-def]
    SETUP[state](store, "compare-funds")
    before = counts(db_path)
    result = _act(action, store, "compare-funds", via="cli", who="alice")
    assert (result.changed, result.message) == (False, NOOPS[(action, state)])
    assert counts(db_path) == before
    assert store.get("compare-funds").status == state


@pytest.mark.parametrize(
    ("action", "state"), list(REFUSED), ids=lambda x: getattr(x, "__name__", x)
)
def test_refused(store: Store, db_path: Path, action, state: str) -> None:  # type: ignore[no-untyped-def]
    SETUP[state](store, "compare-funds")
    before = counts(db_path)
    with pytest.raises(IllegalTransition) as info:
        _act(action, store, "compare-funds", via="cli", who="alice")
    assert str(info.value) == REFUSED[(action, state)]
    assert counts(db_path) == before


def test_publish_sets_published_at_once(db_path: Path) -> None:
    times = iter(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=i) for i in range(100))
    with Store.open(db_path, clock=lambda: next(times)) as store:
        draft(store, "compare-funds")
        human.publish(
            store, "compare-funds", rev=store.get("compare-funds").revision, via="cli", who="alice"
        )
        first = store.get("compare-funds").published_at
        assert first is not None and first.endswith("Z")
        human.move_to_draft(store, "compare-funds", via="cli", who="alice")
        assert store.get("compare-funds").published_at == first
        human.publish(
            store, "compare-funds", rev=store.get("compare-funds").revision, via="cli", who="alice"
        )
        human.archive(store, "compare-funds", via="cli", who="alice")
        human.restore(store, "compare-funds", via="cli", who="alice")
        skill = store.get("compare-funds")
        assert skill.published_at == first
        assert skill.updated_at > first


@pytest.mark.parametrize("state", ["draft", "live", "archived"])
def test_accept_revision(store: Store, state: str) -> None:
    SETUP[state](store, "compare-funds")
    if state == "draft":  # a draft gets no proposals from agents; a hand-made one still works
        with store.transaction() as conn:
            conn.execute(
                "UPDATE skills SET proposed_description = 'New', proposed_body = '# new',"
                " proposed_at = 'T', proposed_by = 'bot 1'"
            )
    else:
        agent.save(store, "compare-funds", "New", "# new", who="bot 1")
    proposed_at = store.get("compare-funds").proposed.proposed_at  # type: ignore[union-attr]
    result = human.accept_revision(
        store,
        "compare-funds",
        rev=store.get("compare-funds").proposed.revision,
        via="cli",
        who="alice",
    )
    assert result.message == (
        f"accepted the proposed revision of 'compare-funds'; it is now the text ({state})"
    )
    skill = store.get("compare-funds")
    assert (skill.description, skill.body, skill.status, skill.proposed) == (
        "New",
        "# new",
        state,
        None,
    )
    assert audit_rows(store)[-1] == (
        "compare-funds",
        "accept",
        state,
        state,
        "cli",
        "alice",
        f"revision proposed by bot 1 at {proposed_at}",
    )


def test_accepted_revision_of_a_live_skill_is_served_and_searchable(store: Store) -> None:
    live(store, "compare-funds")
    agent.save(store, "compare-funds", "Compare funds", "mention zebra here", who="bot")
    assert store.search("zebra") == []
    human.accept_revision(
        store,
        "compare-funds",
        rev=store.get("compare-funds").proposed.revision,
        via="cli",
        who="alice",
    )
    assert [s.name for s in store.search("zebra")] == ["compare-funds"]
    assert store.read_live("compare-funds").body == "mention zebra here"


@pytest.mark.parametrize("state", ["live", "archived"])
def test_reject_revision(store: Store, state: str) -> None:
    SETUP[state](store, "compare-funds")
    agent.save(store, "compare-funds", "New", "# new", who="bot 1")
    result = human.reject_revision(store, "compare-funds", via="dashboard", who="alice")
    assert result.message == (
        f"rejected the proposed revision of 'compare-funds'; the text is unchanged ({state})"
    )
    skill = store.get("compare-funds")
    assert (skill.body, skill.proposed) == (BODY, None)
    assert audit_rows(store)[-1][:6] == (
        "compare-funds",
        "reject",
        state,
        state,
        "dashboard",
        "alice",
    )


@pytest.mark.parametrize("action", [human.accept_revision, human.reject_revision])
def test_accept_or_reject_without_a_proposal_is_refused(
    store: Store, db_path: Path, action
) -> None:  # type: ignore[no-untyped-def]
    live(store, "compare-funds")
    before = counts(db_path)
    if action is human.accept_revision:  # the reviewed revision is checked first
        with pytest.raises(StaleRevision, match="it has no proposed revision any more"):
            _act(action, store, "compare-funds", via="cli", who="alice")
    else:
        with pytest.raises(IllegalTransition) as info:
            _act(action, store, "compare-funds", via="cli", who="alice")
        assert str(info.value) == (
            "'compare-funds' has no proposed revision; an agent proposes one by saving over a "
            "live or archived skill"
        )
    assert counts(db_path) == before


@pytest.mark.parametrize("state", ["draft", "live", "archived"])
def test_edit(store: Store, state: str) -> None:
    SETUP[state](store, "compare-funds")
    result = human.edit(
        store,
        "compare-funds",
        rev=store.get("compare-funds").revision,
        body="# edited\n",
        via="dashboard",
        who="alice",
    )
    assert result.message == f"edited 'compare-funds' ({state})"
    skill = store.get("compare-funds")
    assert (skill.description, skill.body, skill.status) == (
        "When comparing two funds",
        "# edited\n",
        state,
    )
    human.edit(
        store,
        "compare-funds",
        rev=store.get("compare-funds").revision,
        description="Another",
        via="dashboard",
        who="alice",
    )
    assert store.get("compare-funds").description == "Another"
    assert audit_rows(store)[-1] == (
        "compare-funds",
        "edit",
        state,
        state,
        "dashboard",
        "alice",
        "description 7 chars, body 9 bytes",
    )


def test_edit_needs_something_to_change(store: Store, db_path: Path) -> None:
    live(store, "compare-funds")
    before = counts(db_path)
    with pytest.raises(InvalidSkill, match="nothing to change in 'compare-funds'"):
        human.edit(
            store, "compare-funds", rev=store.get("compare-funds").revision, via="cli", who="alice"
        )
    with pytest.raises(InvalidSkill, match="body of 'compare-funds' is empty"):
        human.edit(
            store,
            "compare-funds",
            rev=store.get("compare-funds").revision,
            body="  \n",
            via="cli",
            who="alice",
        )
    assert counts(db_path) == before


@pytest.mark.parametrize("state", ["draft", "live", "archived"])
def test_delete_keeps_the_history(store: Store, state: str) -> None:
    SETUP[state](store, "compare-funds")
    result = human.delete(store, "compare-funds", via="cli", who="alice")
    assert result.message == f"deleted 'compare-funds' (was {state})"
    assert store.list_all() == []
    with pytest.raises(UnknownSkill):
        store.get("compare-funds")
    assert store.search("compare") == []
    rows = audit_rows(store)
    assert rows[-1] == ("compare-funds", "delete", state, None, "cli", "alice", "")
    assert rows[0][1] == "create"
    # the name is free again, and a new skill by it starts as a never-published draft
    draft(store, "compare-funds")
    assert store.get("compare-funds").published_at is None


@pytest.mark.parametrize(
    "action",
    [
        human.publish,
        human.restore,
        human.archive,
        human.move_to_draft,
        human.delete,
        human.accept_revision,
        human.reject_revision,
    ],
)
def test_unknown_skill(store: Store, action) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UnknownSkill, match="no skill named 'ghost'"):
        _act(action, store, "ghost", via="cli", who="alice")
    with pytest.raises(UnknownSkill):
        human.edit(store, "ghost", rev="0" * 32, body="x", via="cli", who="alice")


def test_human_actions_only_accept_human_channels(store: Store) -> None:
    draft(store, "compare-funds")
    with pytest.raises(ValueError, match="via must be one of"):
        human.publish(
            store, "compare-funds", rev=store.get("compare-funds").revision, via="mcp", who="bot"
        )
    assert store.get("compare-funds").status == "draft"


def test_import_skills_is_all_or_nothing(store: Store, db_path: Path) -> None:
    n = human.import_skills(
        store, [("a-one", "first", "# one"), ("a-two", "second", "# two")], via="cli", who="al"
    )
    assert n == 2
    assert [s.name for s in store.list_live()] == ["a-one", "a-two"]
    assert all(store.get(x).published_at for x in ("a-one", "a-two"))
    before = counts(db_path)
    with pytest.raises(InvalidSkill):
        human.import_skills(
            store, [("b-one", "ok", "# ok"), ("B two", "x", "y")], via="cli", who="al"
        )
    with pytest.raises(IllegalTransition, match="already exists"):
        human.import_skills(
            store, [("b-one", "ok", "# ok"), ("a-one", "x", "y")], via="cli", who="al"
        )
    assert counts(db_path) == before
