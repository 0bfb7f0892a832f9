"""/holdings/positions with a position closed today (Day -3, Net 0) and a carried one, and
/orders/funds-check with margin already blocked by an open order (`net` already excludes it),
each compared with the truth the scenario was built with."""

from __future__ import annotations

import pytest

from .agent import in_process, recipe
from .scripts import funds_check, positions


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_positions_closed_today_and_carried(generation: str) -> None:
    agent = in_process("positions-closed", generation)
    books = positions(agent, recipe("holdings/positions.md"), "11:20:00")
    assert [(d["tradingsymbol"], d["quantity"]) for d in books.day] == [
        ("CRUDEOIL26DECFUT", -3), ("INFY", 0)]  # fmt: skip
    assert books.lines == [
        "Positions as of 11:20:00 IST (market open), Net book",
        "NIFTY26DECFUT NFO NRML qty 65 avg 25,890.00 ltp 26,030.10 pnl +9,106.50",
        "CRUDEOIL26DECFUT MCX NRML qty 0 (closed today) realised +12,000.00",
        "INFY NSE MIS qty 0 (closed today) realised +420.00",
        "Day book: CRUDEOIL26DECFUT bought 0 sold 3, INFY bought 20 sold 20",
        "Total Net P&L +21,526.50; Console figures are end-of-day and include charges.",
    ]  # fmt: skip
    # the truth: carried 3 lots bought at 6,210 and sold at 6,250 (x100), 65 NIFTY from 25,890
    # to the last price, and a 20-share round trip from 1,600 to 1,621
    assert books.total == round(3 * 100 * (6250 - 6210) + 65 * (26030.1 - 25890) + 20 * 21, 2)
    assert not agent.writes()


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_funds_check_does_not_count_blocked_margin_twice(generation: str) -> None:
    scenario = "funds-blocked"
    agent = in_process(scenario, generation)
    funds = funds_check(agent, recipe("orders/funds-check.md"), "NSE:INFY", 30, "10:40:00")
    assert funds.lines == [
        "Equity margin as of 10:40:00 IST: net 55,000.00 (cash 100,000.00, collateral 0.00, "
        "debits 45,000.00)",
        "Order: BUY 30 INFY CNC LIMIT 1,634.60 -> needs about 49,038.00 + charges (cash)",
        "Context, already inside net: open BUY orders block about 45,000.00; today's m2m 0.00",
        "Verdict: enough (5,962.00 to spare before charges).",
    ]
    assert not agent.writes()
    # the truth: Kite accepts the order with the HDFCBANK order still open
    truth = in_process(scenario).simulation
    assert truth is not None
    placed = truth.place_order(
        variety="regular", exchange="NSE", tradingsymbol="INFY", transaction_type="BUY",
        quantity=30, product="CNC", order_type="LIMIT", price=1634.6,
    )  # fmt: skip
    (row,) = [o for o in truth.orders() if o["order_id"] == placed["order_id"]]
    assert row["status"] != "REJECTED", row["status_message"]
