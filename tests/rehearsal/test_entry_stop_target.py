"""/orders/entry-stop-target: a NIFTY future bought with a LIMIT, then protected by a two-leg
GTT sized from what filled; two writes, two approvals, each after its re-check."""

from __future__ import annotations

import pytest

from .agent import in_process, recipe
from .scripts import entry_with_oco


@pytest.mark.parametrize("generation", ["grouped", "legacy"])
def test_entry_then_two_leg_protection(generation: str) -> None:
    agent = in_process("default", generation)
    summary, entry, gtt = entry_with_oco(
        agent, recipe("orders/entry-stop-target.md"), recipe("orders/reconcile.md"),
        "NIFTY27JANFUT", 0.01, 0.02,
    )  # fmt: skip
    assert [m.mode for m in agent.writes()] == ["place", "place"]
    assert [m.tool for m in agent.writes()] == ["orders", "gtt"]
    assert len(agent.approvals) == 2
    assert summary[1].startswith("two-leg GTT SELL 65 NIFTY27JANFUT NRML")
    stop, target = gtt["condition"]["trigger_values"]
    assert stop < entry["price"] < target
    assert [leg["quantity"] for leg in gtt["orders"]] == [65, 65]
    assert all(leg["product"] == "NRML" for leg in gtt["orders"])
    kite = agent.simulation
    assert kite is not None
    net = kite.positions()["net"]
    assert [p["quantity"] for p in net if p["tradingsymbol"] == "NIFTY27JANFUT"] == [65]
