"""The troubleshooting recipes: why an order was rejected (execution), whether the session
works (authentication), and quote keys that came back missing (data)."""

from __future__ import annotations

import pytest

from .agent import in_process, recipe, step
from .scripts import missing_keys, session_check, why_rejected


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_a_rejection_for_funds_is_explained_not_retried(generation: str) -> None:
    agent = in_process("default", generation)
    lines = why_rejected(
        agent, recipe("troubleshooting/execution.md"), recipe("orders/reconcile.md"), "WIPRO"
    )
    assert lines == [
        "Attempted: BUY 5000 WIPRO CNC LIMIT 249.50",
        "Now: REJECTED (Insufficient funds. Required margin is 1247500.00 but available margin "
        "is 492310.00. Check the orderbook for open orders.)",
        "Cause: insufficient funds: required 1,247,500.00, available 492,310.00",
        "Options: a new order through Prepare an order, with a fresh approval",
    ]
    assert not agent.writes()


def test_the_sandbox_session_works() -> None:
    agent = in_process("default")
    assert session_check(agent, recipe("troubleshooting/authentication.md")) == (
        "authenticated; Kite answers: yes"
    )


def test_a_quote_key_left_out_is_found_and_fixed() -> None:
    agent = in_process("default")
    data = recipe("troubleshooting/data.md")
    missing, got = missing_keys(agent, data, ["NSE:NIFTY50", "NSE:INFY"])
    assert missing == ["NSE:NIFTY50"] and "NSE:INFY" in got
    step(data, 3, "indices are `NSE:NIFTY 50` with a\n   space")
    fixed, _ = missing_keys(agent, data, ["NSE:NIFTY 50"])
    assert fixed == []
