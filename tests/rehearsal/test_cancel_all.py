"""/orders/cancel-all on the default account: one approved list (every working order and every
active GTT), the lists read again after the approval, one call per item, and nothing left."""

from __future__ import annotations

import pytest

from .agent import in_process, recipe
from .scripts import cancel_all


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_cancel_everything_from_one_approved_list(generation: str) -> None:
    agent = in_process("default", generation)
    kite = agent.simulation
    assert kite is not None
    done = cancel_all(agent, recipe("orders/cancel-all.md"))
    assert len(done.summary) == 3  # the open SBIN buy, the ITC two-leg and the TCS GTT
    assert done.summary[0].startswith("1. cancel order ") and "SBIN BUY 50" in done.summary[0]
    assert not done.left_orders and not done.left_gtts
    assert [m.mode for m in agent.writes()] == ["cancel", "delete", "delete"]
    # the truth: the book has no working order and no active GTT
    assert all(o["status"] in ("COMPLETE", "CANCELLED", "REJECTED") for o in kite.orders())
    assert not [g for g in kite.get_gtts() if g["status"] == "active"]
