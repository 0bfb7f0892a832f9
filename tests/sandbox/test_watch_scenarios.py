"""Issue 41 §4: the scenarios a rehearsal of the watch needs each do what docs/sandbox-scenarios.md
says they do."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kite_skills.sandbox.sim import KiteConnectError, Simulation, load_scenario
from kite_skills.sandbox.sim.events import Finding


def started(name: str) -> tuple[Simulation, list[Finding]]:
    s = Simulation(load_scenario(name))
    return s, [n for n in s.take_notes() if isinstance(n, Finding)]


def test_the_hedged_book_starts_covered_on_every_side() -> None:
    s, found = started("hedged-book")
    assert found == []
    net = {p["tradingsymbol"]: p["quantity"] for p in s.positions()["net"]}
    assert len(net) == 9 and sum(1 for q in net.values() if q < 0) == 4
    s.advance_to(s.now + timedelta(hours=3))  # the close, nothing squared off (all NRML)
    assert [n for n in s.take_notes() if isinstance(n, Finding)] == []


def test_the_mis_hedge_is_a_mismatch_until_the_square_off_breaks_it() -> None:
    s, found = started("mis-hedge")
    assert [(f.rule, f.phase) for f in found] == [("product-mismatch", "began")]
    s.advance_to(s.now.replace(hour=15, minute=24, second=59))
    assert [n for n in s.take_notes() if isinstance(n, Finding)] == []
    s.advance_to(s.now.replace(hour=15, minute=25))
    notes = s.take_notes()
    assert [n.kind for n in notes if not isinstance(n, Finding)][:2] == ["auto square-off", "fill"]
    assert [(n.rule, n.phase) for n in notes if isinstance(n, Finding)] == [
        ("hedge-broken", "began"),
        ("product-mismatch", "ended"),
    ]


def test_a_released_amo_is_cancelled_with_variety_regular_only() -> None:
    s, _ = started("amo-released")
    (row,) = s.orders()
    assert (row["variety"], row["status"]) == ("amo", "OPEN")
    with pytest.raises(KiteConnectError) as info:
        s.cancel_order("amo", row["order_id"])
    assert info.value.error_type == "NetworkException"
    s.cancel_order("regular", row["order_id"])
    assert s.orders()[0]["status"] == "CANCELLED"


def test_the_partial_fill_is_made_by_the_engine() -> None:
    s, _ = started("partial-fill")
    (row,) = s.orders()
    assert row["filled_quantity"] == 0
    s.advance_to(s.now + timedelta(minutes=30))
    history = s.order_history(row["order_id"])
    assert [h["filled_quantity"] for h in history if h["status"] == "OPEN"] == [0, 100, 200]
    assert history[-1]["status"] == "COMPLETE"


@pytest.mark.parametrize(
    ("name", "fires"),
    [("demat-physical", False), ("demat-consent", True), ("demat-empty", True)],
)
def test_a_sell_gtt_for_the_demat_shares_can_fire_only_under_physical(
    name: str, fires: bool
) -> None:
    s, found = started(name)
    assert found == [] and name.endswith(s.profile()["meta"]["demat_consent"])
    last = s.ltp("NSE:INFY")["NSE:INFY"]["last_price"]
    leg = {"transaction_type": "SELL", "quantity": 100, "price": 1400.0, "product": "CNC"}
    s.place_gtt("single", "INFY", "NSE", [1401.0], last, [leg])
    began = [n.rule for n in s.after_call() if isinstance(n, Finding) and n.phase == "began"]
    assert began == (["stop-cannot-fire"] if fires else [])


def test_the_ddpi_gtt_is_above_its_demat_quantity() -> None:
    s, found = started("ddpi-gtt")
    assert [f.rule for f in found] == ["stop-cannot-fire"]
    assert s.profile()["meta"]["demat_consent"] == "physical"
