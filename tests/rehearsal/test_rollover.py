"""/orders/expiry-rollover: a long NIFTY December future rolled into January, each leg with its
own approval and re-check. The next contract is picked by `expiry_date` from full search rows;
compact rows carry no `expiry_date`, so the recipe's `verbosity` `full` is what makes the pick
possible."""

from __future__ import annotations

import json

import pytest

from .agent import in_process, recipe
from .scripts import rollover

ROLL = recipe("orders/expiry-rollover.md")


@pytest.mark.parametrize("generation", ["grouped", "legacy"])
def test_roll_a_long_future_into_the_next_expiry(generation: str) -> None:
    agent = in_process("default", generation)
    done = rollover(
        agent, ROLL, recipe("orders/reconcile.md"), recipe("holdings/positions.md"),
        "NIFTY26DECFUT",
    )  # fmt: skip
    kite = agent.simulation
    assert kite is not None
    truth = kite.instrument_facts("NFO", "NIFTY27JANFUT")
    assert done.next_row["tradingsymbol"] == "NIFTY27JANFUT"
    assert done.next_row["instrument_token"] == truth.instrument_token
    assert done.next_row["expiry_date"].startswith(truth.expiry)
    assert done.net_after == {"NIFTY26DECFUT": 0, "NIFTY27JANFUT": 65}
    first, second = agent.writes()
    assert (first.arguments["tradingsymbol"], first.arguments["transaction_type"]) == (
        "NIFTY26DECFUT", "SELL")  # fmt: skip
    assert (second.arguments["tradingsymbol"], second.arguments["quantity"]) == (
        "NIFTY27JANFUT", 65)  # fmt: skip
    # each leg after its own approval, the second only once the first had filled
    _, two = agent.approvals
    assert any(m.mode == "history" for m in agent.made[agent.made.index(first) : two])


def test_compact_search_rows_carry_no_expiry_date() -> None:
    agent = in_process("default")
    compact = json.loads(
        agent.transport(
            "market", {"mode": "search", "search_mode": "search", "filter_on": "underlying",
                       "query": "NFO:NIFTY", "limit": 200},
        )[0]
    )["data"]  # fmt: skip
    futures = [row for row in compact if row["tradingsymbol"].endswith("FUT")]
    assert futures and all("expiry_date" not in row for row in futures)
