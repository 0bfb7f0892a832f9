"""docs/sandbox.md's example conversation and journal quote figures: each comes from the
default scenario, replayed here at the journal's simulated times, so the page cannot drift
from the product."""

from __future__ import annotations

import re
from pathlib import Path

from kite_skills.sandbox.sim import Simulation
from kite_skills.sandbox.sim.scenario import load_scenario

PAGE = Path(__file__).resolve().parents[2] / "docs" / "sandbox.md"


def found(pattern: str, text: str) -> str:
    match = re.search(pattern, text)
    assert match, f"docs/sandbox.md no longer has {pattern!r}: update this test with the page"
    return match.group(1)


def test_the_sandbox_pages_figures_are_the_default_scenarios() -> None:
    page = PAGE.read_text(encoding="utf-8")
    sim = Simulation(load_scenario("default"))
    clock = found(r"scenario default, tools grouped, clock (\d{4}-\d\d-\d\d \d\d:\d\d) ", page)
    assert sim.now.strftime("%Y-%m-%d %H:%M") == clock
    margins_at = found(r"(\d\d:\d\d:\d\d) IST  #1  portfolio mode=margins", page)
    place_at = found(r"(\d\d:\d\d:\d\d) IST  #2  orders mode=place", page)

    def at(hms: str) -> None:
        h, m, s = map(int, hms.split(":"))
        sim.advance_to(sim.now.replace(hour=h, minute=m, second=s))

    at(margins_at)
    net = sim.margins()["equity"]["net"]
    assert found(r'"net":([\d.]+),', page) == str(net)
    assert found(r"of the ₹([\d.]+) lakh available", page) == f"{net / 1e5:.1f}"
    at(place_at)
    order_id = sim.place_order(
        variety="regular",
        exchange="NSE",
        tradingsymbol="INFY",
        transaction_type="BUY",
        quantity=5,
        product="CNC",
        order_type="MARKET",
        market_protection=-1,
    )["order_id"]
    (placed,) = [o for o in sim.orders() if o["order_id"] == order_id]
    assert placed["status"] == "COMPLETE"
    assert found(r'"order_id":"(\d+)"', page) == order_id
    assert found(r"order (\d+) is COMPLETE", page) == order_id
    assert found(r"5 filled at ₹([\d,.]+)\.", page) == f"{placed['average_price']:,.2f}"
    assert (
        found(r"about ₹([\d,]+) of the", page) == f"{round(5 * placed['average_price'], -2):,.0f}"
    )
