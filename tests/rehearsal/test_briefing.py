"""/daily-review/account-briefing on the default account: every read the recipe names, in its
order, and the counting lines of the briefing against the simulation's state."""

from __future__ import annotations

import pytest

from .agent import in_process, recipe
from .scripts import briefing


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_the_briefing_counts(generation: str) -> None:
    agent = in_process("default", generation)
    lines = briefing(agent, recipe("daily-review/account-briefing.md"),
                     recipe("holdings/positions.md"))  # fmt: skip
    kite = agent.simulation
    assert kite is not None
    margins = kite.margins()["equity"]
    holdings = kite.holdings()
    value = sum(h["quantity"] * h["last_price"] for h in holdings)
    assert lines[0].startswith(f"Funds (equity): net {margins['net']:,.2f}")
    assert lines[2] == f"Holdings: {len(holdings)}, value {value:,.2f}"
    net = kite.positions()["net"]
    opened = sum(1 for p in net if p["quantity"])
    assert lines[3] == f"Positions: {opened} open, {len(net) - opened} closed today"
    assert opened == 2  # the carried NIFTY future and this morning's RELIANCE buy
    assert lines[4] == (
        f"Orders today: 3 (1 COMPLETE, 1 OPEN, 1 REJECTED); trades {len(kite.trades())}"
    )
    alerts = 0 if generation == "legacy-oldest" else 1  # the oldest server has no alerts tool
    assert lines[5] == f"GTTs: 2 active; alerts: {alerts} enabled"
    assert not agent.writes()
