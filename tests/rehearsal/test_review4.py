"""Rehearsals of the recipes issue 43 added, against the sandbox's built-in scenarios."""

from __future__ import annotations

import pytest

from kite_skills.calc import calculate

from .agent import in_process, recipe
from .review4 import position_size, rebalance


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_a_share_position_sized_within_the_budget(generation: str) -> None:
    agent = in_process("default", generation)
    sized = position_size(agent, recipe("orders/position-size.md"), "NSE:INFY", 5000.0, 30.0)
    assert sized.lots > 0 and sized.risk <= 5000.0
    assert sized.risk + 30.0 > 5000.0  # one more share would break the budget
    assert not agent.writes()


def test_one_nifty_lot_above_the_budget_is_refused() -> None:
    agent = in_process("default")
    sized = position_size(agent, recipe("orders/position-size.md"), "NFO:NIFTY26DECFUT", 5000.0,
                          100.0)  # fmt: skip
    # the truth: one lot of 65 risks 6,500 at a 100-point stop
    assert sized.lots == 0 and sized.line.startswith("one lot risks 6,500.00")
    assert not agent.writes() and not agent.approvals


def test_rebalance_stops_at_the_tpin_gate_without_physical_authorisation() -> None:
    """default's `demat_consent` is `consent`: each sell needs a same-day TPIN (issue 43 X5),
    so the plan is shown and nothing is placed."""
    agent = in_process("default")
    done = rebalance(agent, recipe("holdings/rebalance.md"), {"TCS": 0.05, "ITC": 0.15})
    assert done.plan[0].startswith("SELL") and done.gate
    assert "TPIN authorisation needed today (consent)" in done.gate[0]
    assert not agent.writes() and not agent.approvals
    truth = calculate(
        {"mode": "sellable", "holding": {"tradingsymbol": "TCS", "quantity": 25,
                                          "t1_quantity": 0, "realised_quantity": 25},
         "demat_consent": "consent"}
    ).result  # fmt: skip
    assert truth["tpin_needed"]
