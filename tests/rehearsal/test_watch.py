"""Issue 41 §6: the write recipes rehearsed against the hedged book and the watch's scenarios,
with the watch on. A rehearsal passes only when the watch saw nothing begin after its first
call, except what the recipe itself announces to the person and asks approval for (named in
each test).

Where a recipe as written today leaves the account exposed, the test records it in
:data:`KNOWN_FINDINGS` (for the catalog's issue 43, which rewrites the recipes) rather than the
recipe being edited here: such a test fails the day the recipe is fixed, and the entry is then
removed."""

from __future__ import annotations

from pathlib import Path

import pytest

from .agent import harm, in_process, recipe
from .scripts import (
    bull_call_spread,
    cancel_all,
    entry_with_oco,
    exit_every_position,
    modify_to_limit,
    prepare_buy,
    price_alert,
    rollover,
    sell_gtt,
    stop_loss,
)

# (recipe, scenario) -> what the watch sees, with the catalog review's name for it.
KNOWN_FINDINGS: dict[tuple[str, str], list[str]] = {
    # Issue 43 fixed what was recorded here: exit.md squares off in `calc` mode `exit_plan`'s
    # order, one leg after the previous fills (X2); cancel-all keeps what protects a position
    # or holding (X6) and cancels a released AMO as `regular` (X1), as modify-cancel modifies
    # one (X1).
}
POSITIONS = recipe("holdings/positions.md")
RECONCILE = recipe("orders/reconcile.md")


def journal(tmp_path: Path) -> Path:
    return tmp_path / "journal.jsonl"


@pytest.mark.parametrize("scenario", ["hedged-book", "mis-hedge"])
def test_exit_every_position(tmp_path: Path, scenario: str) -> None:
    agent = in_process(scenario, journal_path=journal(tmp_path))
    sent = exit_every_position(agent, recipe("orders/exit.md"), POSITIONS)
    assert sent and not [m for m in agent.writes() if m.is_error]
    assert harm(journal(tmp_path)) == KNOWN_FINDINGS.get(("orders/exit.md", scenario), [])


def test_a_new_spread_beside_the_hedged_book(tmp_path: Path) -> None:
    agent = in_process("hedged-book", journal_path=journal(tmp_path))
    bull_call_spread(
        agent, recipe("derivatives/spreads.md"), RECONCILE, "NIFTY26D1525800CE", "NIFTY26D1526000CE"
    )
    assert harm(journal(tmp_path)) == []


def test_rolling_the_hedged_future(tmp_path: Path) -> None:
    agent = in_process("hedged-book", journal_path=journal(tmp_path))
    rollover(agent, recipe("orders/expiry-rollover.md"), RECONCILE, POSITIONS, "NIFTY26DECFUT")
    assert harm(journal(tmp_path)) == []


@pytest.mark.parametrize("symbol", ["NIFTY26DECFUT", "NIFTY26D1525900CE"])
def test_a_stop_under_a_leg_of_the_hedged_book(tmp_path: Path, symbol: str) -> None:
    agent = in_process("hedged-book", journal_path=journal(tmp_path))
    stop_loss(agent, recipe("orders/stop-loss.md"), POSITIONS, RECONCILE, symbol, 0.02, 20)
    assert harm(journal(tmp_path)) == []


def test_an_entry_with_its_two_leg_gtt_beside_the_hedged_book(tmp_path: Path) -> None:
    agent = in_process("hedged-book", journal_path=journal(tmp_path))
    entry = recipe("orders/entry-stop-target.md")
    entry_with_oco(agent, entry, RECONCILE, "NIFTY27JANFUT", 0.01, 0.02)
    assert harm(journal(tmp_path)) == []


@pytest.mark.parametrize(
    "scenario", ["ddpi-gtt", "amo-released", "partial-fill", "hedged-book", "demat-physical"]
)
def test_cancel_everything(tmp_path: Path, scenario: str) -> None:
    agent = in_process(scenario, journal_path=journal(tmp_path))
    cancel_all(agent, recipe("orders/cancel-all.md"))
    failed = [m.text for m in agent.writes() if m.is_error]
    known = KNOWN_FINDINGS.get(("orders/cancel-all.md", scenario), [])
    assert harm(journal(tmp_path)) + failed == known


@pytest.mark.parametrize("scenario", ["demat-physical", "demat-consent", "demat-empty"])
def test_a_sell_gtt_for_the_demat_shares(tmp_path: Path, scenario: str) -> None:
    agent = in_process(scenario, journal_path=journal(tmp_path))
    done = sell_gtt(
        agent,
        recipe("triggers-and-alerts/gtt.md"),
        recipe("market-data/resolve.md"),
        "NSE:INFY",
        1500.0,
    )
    tpin = [line for line in done.summary if line.startswith("TPIN:")]
    if scenario == "demat-physical":
        assert harm(journal(tmp_path)) == [] and tpin == []
    else:  # announced in the summary the person approved: "stop-cannot-fire" is expected
        assert tpin == ["TPIN: a triggered sell is rejected unless authorised that day"]
        assert harm(journal(tmp_path)) == ["stop-cannot-fire"]


def test_prepare_a_buy_beside_the_hedged_book(tmp_path: Path) -> None:
    agent = in_process("hedged-book", journal_path=journal(tmp_path))
    prepare_buy(agent, recipe("orders/prepare.md"), RECONCILE, "NSE:TCS", 5, 3152.37, "ksTCS1")
    assert harm(journal(tmp_path)) == []


def test_a_price_alert_beside_the_hedged_book(tmp_path: Path) -> None:
    agent = in_process("hedged-book", journal_path=journal(tmp_path))
    price_alert(agent, recipe("triggers-and-alerts/alerts.md"), "NSE:INFY", 1600.0)
    assert harm(journal(tmp_path)) == []


def test_modify_a_released_amo(tmp_path: Path) -> None:
    """A released AMO is modified with `variety` `regular` (issue 43 X1; kite.trade forum
    staff, comment 40302): the modify goes through and the watch sees nothing begin."""
    agent = in_process("amo-released", journal_path=journal(tmp_path))
    kite = agent.simulation
    assert kite is not None
    (order,) = kite.orders()
    done = modify_to_limit(
        agent, recipe("orders/modify-cancel.md"), order["order_id"], "NSE:INFY", 0.1
    )
    assert done.sent["variety"] == "regular"
    assert not [m for m in agent.writes() if m.is_error]
    assert harm(journal(tmp_path)) == []
