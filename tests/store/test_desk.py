"""PersonDesk: the person's typed entry point (issue 40). The CLI and the dashboard make every
write of a person through one, opened for their door; an agent's view has none of its
methods, and no desk opens for the agent's door."""

from __future__ import annotations

from pathlib import Path

import pytest

from kite_skills.errors import IllegalTransition
from kite_skills.store import VIA_CLI, VIA_DASHBOARD, VIA_MCP, AgentView, Store
from kite_skills.store.desk import PersonDesk
from kite_skills.store.verbs import PERSON_VERBS, Asked

from .helpers import archived, counts, draft, live

# What a person may do to a store, and nothing an agent does: adding to this list is adding a
# person's write (give it its verb row, if it is one, in store/verbs.py).
SURFACE = {
    "accept_revision",
    "archive",
    "check_reviewed",
    "create",
    "delete",
    "edit",
    "import_skills",
    "move_to_draft",
    "publish",
    "purge",
    "reject_revision",
    "resolve_revision",
    "restore",
    "revert",
    "set_read_receipts",
}


def test_the_desk_offers_exactly_the_persons_writes(store: Store) -> None:
    public = {n for n in dir(PersonDesk) if not n.startswith("_")}
    assert public == SURFACE
    desk = PersonDesk(store, via=VIA_CLI, who="pat")
    assert all(n.startswith("_") for n in vars(desk)), vars(desk)  # the store is not handed out


@pytest.mark.parametrize("via", [VIA_MCP, "", "CLI", "web"])
def test_no_desk_opens_for_any_door_but_the_persons(store: Store, db_path: Path, via: str) -> None:
    before = counts(db_path)
    with pytest.raises(ValueError, match="via must be one of"):
        PersonDesk(store, via=via, who="bot 1.0")
    assert counts(db_path) == before


@pytest.mark.parametrize("via", [VIA_CLI, VIA_DASHBOARD])
def test_each_verb_is_audited_under_the_desks_door_and_person(store: Store, via: str) -> None:
    """Every row of PERSON_VERBS runs through the desk: the audit names its door and person."""
    draft(store, "to-publish")
    live(store, "to-accept")
    live(store, "to-reject")
    for name in ("to-accept", "to-reject"):  # a revision waits beside each
        AgentView(store).save(name, "A better way", "# Better\n", who="bot 1.0")
    live(store, "to-draft")
    live(store, "to-archive")
    archived(store, "to-restore")
    draft(store, "to-delete")
    proposed = store.get("to-accept").proposed
    assert proposed is not None
    asked = {
        "publish": Asked(rev=store.get("to-publish").revision),
        "accept": Asked(rev=proposed.revision),
        "reject": Asked(reason="name the fund"),
    }
    desk = PersonDesk(store, via=via, who="pat")
    for word, verb in PERSON_VERBS.items():
        result = verb.run(desk, f"to-{word}", asked.get(word, Asked()))
        assert result.changed, word
        [entry] = store.audit(limit=1, name=f"to-{word}")
        assert (entry.action, entry.via, entry.who) == (verb.action.value, via, "pat"), word


def test_the_other_writes_are_audited_under_the_desks_door_and_person(store: Store) -> None:
    desk = PersonDesk(store, via=VIA_DASHBOARD, who="asha")
    desk.create("mine", description="How I do it", body="# Mine\n")
    first = store.get("mine").revision
    desk.edit("mine", rev=first, body="# Mine, better\n")
    desk.import_skills([("theirs", "Imported", "# Theirs\n")], live=True)
    [first_text] = [t for t in store.history("mine") if t.revision == first]
    desk.revert("mine", text_id=first_text.id)
    desk.delete("theirs")
    desk.purge("theirs")
    assert [(e.skill, e.action, e.via, e.who) for e in reversed(store.audit())] == [
        ("mine", "create", VIA_DASHBOARD, "asha"),
        ("mine", "edit", VIA_DASHBOARD, "asha"),
        ("theirs", "import", VIA_DASHBOARD, "asha"),
        ("mine", "revert", VIA_DASHBOARD, "asha"),
        ("theirs", "delete", VIA_DASHBOARD, "asha"),
        ("theirs", "purge", VIA_DASHBOARD, "asha"),
    ]
    assert "off" in desk.set_read_receipts(False)
    assert not store.read_receipts_on()


def test_an_agent_can_never_reach_a_persons_verb(store: Store, db_path: Path) -> None:
    """The agent's view shares no name with the desk, so no verb runs on it: each row of
    PERSON_VERBS, handed an AgentView, fails before it writes anything."""
    view = AgentView(store)
    agent_names = {n for n in dir(AgentView) if not n.startswith("_")}
    assert agent_names & SURFACE == set()
    draft(store, "compare-funds")
    for word, verb in PERSON_VERBS.items():
        before = counts(db_path)
        rev = store.get("compare-funds").revision
        with pytest.raises(AttributeError):
            verb.run(view, "compare-funds", Asked(rev=rev))  # type: ignore[arg-type]
        assert counts(db_path) == before, word
    assert store.get("compare-funds").status == "draft"
    with pytest.raises(IllegalTransition):  # and its own republish cannot publish a draft
        view.republish("compare-funds", who="bot 1.0")
