"""/triggers-and-alerts/gtt and /triggers-and-alerts/audit with T+1 shares: holdings
`quantity` already includes `t1_quantity`, so a sell GTT for "all my INFY" is sized from the
demat shares (100 of 150, never 150 + 50); a GTT sized above them is rejected when it
triggers, which the audit flags beforehand; and a GTT place that timed out is found in the
list, not placed twice."""

from __future__ import annotations

import pytest

from kite_skills.sandbox import handlers

from .agent import in_process, recipe
from .scripts import audit_gtts, sell_gtt

T1_GTT = "t1-gtt"
GTT = recipe("triggers-and-alerts/gtt.md")
RESOLVE = recipe("market-data/resolve.md")


@pytest.mark.parametrize("generation", ["grouped", "legacy"])
def test_a_sell_gtt_is_sized_from_the_demat_shares(generation: str) -> None:
    agent = in_process(T1_GTT, generation)
    done = sell_gtt(agent, GTT, RESOLVE, "NSE:INFY", 1650.0)
    assert done.capacity == 100
    (write,) = agent.writes()
    assert write.arguments["quantity"] == 100 and write.arguments["last_price"] == 1612
    assert done.summary[-1] == "Not included: 50 T+1 shares (sellable only as BTST)"
    assert [g["status"] for g in done.listed] == ["active"]
    kite = agent.simulation
    assert kite is not None
    agent.wait(minutes=30)  # 11:00: the price crossed 1650 at 10:50
    kite.advance_to(agent.now)
    assert kite.get_gtts()[0]["status"] == "triggered"
    (order,) = kite.orders()
    assert (order["status"], order["filled_quantity"]) == ("COMPLETE", 100)


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_a_gtt_above_the_demat_quantity_is_flagged_and_then_rejected(generation: str) -> None:
    agent = in_process("t1-holdings", generation)
    (line,) = audit_gtts(agent, recipe("triggers-and-alerts/audit.md"))
    assert line.endswith("holding 100, GTT 150 -> will fail; needs TPIN on the day")
    assert not agent.writes()
    kite = agent.simulation
    assert kite is not None
    agent.wait(minutes=30)
    kite.advance_to(agent.now)  # the truth: the price crosses 1650 at 10:50
    assert not kite.orders()  # the triggered sell never became an order
    (line,) = audit_gtts(agent, recipe("triggers-and-alerts/audit.md"))
    assert line == "- 100001 INFY SELL: triggered 2026-12-02 10:50, no order found -> not executed"


def test_a_gtt_place_that_timed_out_is_found_not_placed_twice() -> None:
    agent = in_process(T1_GTT)
    done = sell_gtt(agent, GTT, RESOLVE, "NSE:INFY", 1650.0, lost=True)
    assert done.answer is None  # the agent never saw the trigger id
    (found,) = done.listed
    assert found["condition"]["trigger_values"] == [1650.0] and found["status"] == "active"
    assert len(agent.writes()) == 1
    kite = agent.simulation
    assert kite is not None and len(kite.get_gtts()) == 1
    # what a retry without the recipe's check would have done: GTTs carry no tag, and Kite
    # accepts the same definition twice
    again = handlers.grouped(lambda: kite.now).handlers["gtt"](
        kite, {"mode": "place", **done.definition}
    )
    assert not again.is_error and len(kite.get_gtts()) == 2
