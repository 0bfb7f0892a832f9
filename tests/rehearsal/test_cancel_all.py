"""/orders/cancel-all on the default account: one approved list (every working order and every
active GTT, the ones that protect a holding or position marked and kept unless the person
strikes them: issue 43 X6), the lists read again after the approval, one call per item."""

from __future__ import annotations

import pytest

from .agent import in_process, recipe
from .scripts import cancel_all


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_cancel_everything_keeps_what_protects_a_holding(generation: str) -> None:
    agent = in_process("default", generation)
    kite = agent.simulation
    assert kite is not None
    done = cancel_all(agent, recipe("orders/cancel-all.md"))
    # the ITC two-leg GTT sells ITC held: it protects the holding and is kept
    assert [k.split(":")[1] for k in done.kept] == [" protects ITC"]
    assert done.summary[0].startswith("1. cancel order ") and "SBIN BUY 50" in done.summary[0]
    assert len(done.summary) == 2 and "TCS" in done.summary[1]
    assert not done.left_orders and [g["condition"]["tradingsymbol"] for g in done.left_gtts] == [
        "ITC"
    ]
    assert [m.mode for m in agent.writes()] == ["cancel", "delete"]
    # the truth: no working order; the one active GTT is ITC's
    assert all(o["status"] in ("COMPLETE", "CANCELLED", "REJECTED") for o in kite.orders())
    active = [g for g in kite.get_gtts() if g["status"] == "active"]
    assert [g["condition"]["tradingsymbol"] for g in active] == ["ITC"]


def test_cancel_everything_the_person_struck_the_protection_from() -> None:
    agent = in_process("default")
    kite = agent.simulation
    assert kite is not None
    done = cancel_all(agent, recipe("orders/cancel-all.md"), strike_protection=True)
    assert len(done.summary) == 3 and not done.kept  # the SBIN buy, the ITC and TCS GTTs
    assert [m.mode for m in agent.writes()] == ["cancel", "delete", "delete"]
    assert not [g for g in kite.get_gtts() if g["status"] == "active"]
