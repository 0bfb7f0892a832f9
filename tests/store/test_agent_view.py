"""AgentView: what the MCP server is given of a store — the reads an agent may make (live skills
only), the agent's actions, the live skills' changes and read receipts — and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from kite_skills.errors import SkillNotLive, StoreUnavailable
from kite_skills.store import AgentView, LiveChange, ReadReceipt, Store, human

from .helpers import archived, draft, live

# Adding to this list widens what every MCP client may do: a person's actions (publish,
# accept, edit, delete...) and the Store itself never belong here.
SURFACE = {
    "close",
    "keeps_receipts",
    "list_live",
    "live",
    "live_names",
    "live_skills",
    "now",
    "open",
    "read_live",
    "receipt_writer",
    "republish",
    "save",
    "search",
    "unpublish",
}


def test_the_view_offers_exactly_what_an_agent_may_do() -> None:
    public = {n for n in dir(AgentView) if not n.startswith("_")}
    assert public == SURFACE
    view_attributes = set(vars(AgentView(Store.open(":memory:"))))
    assert all(n.startswith("_") for n in view_attributes), view_attributes


def test_reads_see_live_skills_only(store: Store) -> None:
    live(store, "compare-funds", description="How I compare funds")
    draft(store, "a-draft", description="Compare funds, a draft")
    archived(store, "old-way", description="Compare funds, the old way")
    view = AgentView(store)
    assert [s.name for s in view.list_live()] == ["compare-funds"]
    assert [s.name for s in view.search("compare funds")] == ["compare-funds"]
    assert [s.name for s in view.live_skills()] == ["compare-funds"]
    assert view.live_names() == ["compare-funds"]
    assert view.read_live("compare-funds").description == "How I compare funds"
    for hidden in ("a-draft", "old-way"):
        with pytest.raises(SkillNotLive):
            view.read_live(hidden)


def test_the_actions_are_the_agents_and_are_seen_by_its_look(store: Store) -> None:
    view = AgentView(store)
    assert view.live is view.live  # one judge per view
    assert view.live.look().first
    saved = view.save("compare-funds", "How I compare funds", "# Steps\n", who="bot 1.0")
    assert (saved.outcome, saved.status) == ("created", "draft")
    assert view.live.look() == LiveChange()  # a draft is not live
    human.publish(
        store, "compare-funds", rev=store.get("compare-funds").revision, via="cli", who="pat"
    )
    view.live.look()
    assert view.unpublish("compare-funds", who="bot 1.0").to_status == "archived"
    assert view.live.look() == LiveChange(came_or_went=True, changed=("compare-funds",))
    assert view.republish("compare-funds", who="bot 1.0").to_status == "live"
    assert view.live.look().came_or_went
    assert {(e.action, e.via, e.who) for e in store.audit(name="compare-funds")} >= {
        ("create", "mcp", "bot 1.0"),
        ("unpublish", "mcp", "bot 1.0"),
        ("republish", "mcp", "bot 1.0"),
    }


def test_read_receipts_go_to_the_file_on_a_connection_of_their_own(store: Store) -> None:
    live(store, "compare-funds")
    view = AgentView(store)
    assert view.keeps_receipts
    writer = view.receipt_writer()
    try:
        at = view.now()
        writer.record([ReadReceipt("skill", "compare-funds", "bot 1.0", "skillRead", at)])
    finally:
        writer.close()
    [receipt] = store.reads("skill", "compare-funds")
    assert (receipt.client, receipt.via, receipt.at) == ("bot 1.0", "skillRead", at)


def test_a_store_in_memory_keeps_no_receipts() -> None:
    with AgentView(Store.open(":memory:")) as view:
        assert not view.keeps_receipts
        with pytest.raises(ValueError, match="in memory"):
            view.receipt_writer()


def test_open_and_close(db_path: Path) -> None:
    view = AgentView.open(db_path, command="kite-test")
    assert db_path.exists()
    view.save("compare-funds", "How I compare funds", "# Steps\n", who="bot")
    view.close()
    with pytest.raises(StoreUnavailable):
        view.list_live()
    with Store.open(db_path) as store:
        assert store.get("compare-funds").status == "draft"
