"""/holdings/concentration and /holdings/mutual-funds on the default account, against the
simulation's own holdings: T+1 shares counted once (inside `quantity`), weights by ISIN, and
the mutual-fund values as of each NAV date."""

from __future__ import annotations

import pytest

from .agent import in_process, recipe
from .scripts import concentration, mutual_funds


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_concentration_counts_t1_shares_once(generation: str) -> None:
    agent = in_process("default", generation)
    weights = concentration(agent, recipe("holdings/concentration.md"))
    kite = agent.simulation
    assert kite is not None
    truth = {h["tradingsymbol"]: h["quantity"] * h["last_price"] for h in kite.holdings()}
    total = sum(truth.values())
    assert {name: value for name, _, value in weights} == {k: round(v, 2) for k, v in truth.items()}
    assert weights[0][1] == round(max(truth.values()) / total * 100, 1)
    infy = next(h for h in kite.holdings() if h["tradingsymbol"] == "INFY")
    assert infy["t1_quantity"] == 20 and infy["quantity"] == 120  # 120 used, never 140
    assert not agent.writes()


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_mutual_funds_valued_at_their_nav_date(generation: str) -> None:
    agent = in_process("default", generation)
    lines = mutual_funds(agent, recipe("holdings/mutual-funds.md"))
    kite = agent.simulation
    assert kite is not None
    rows = kite.mf_holdings()
    assert len(lines) == len(rows) + 1
    for line, row in zip(lines, rows, strict=False):
        assert f"value {row['quantity'] * row['last_price']:,.2f}" in line
        assert f"NAV of {row['last_price_date']}" in line
    assert lines[-1] == "Rows whose pnl differs from value - cost: none"
