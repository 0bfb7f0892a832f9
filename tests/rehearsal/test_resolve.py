"""/market-data/resolve: one exact instrument with its sizes and a fresh quote, on every
generation — on the oldest legacy server (no exact lookups, no `verbosity`) by the recipe's
fallback: a substring search fetched once above its total, keeping the exact `id` only."""

from __future__ import annotations

import json

import pytest

from .agent import in_process, recipe
from .scripts import resolve


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_resolve_an_exact_instrument(generation: str) -> None:
    agent = in_process("default", generation)
    done = resolve(agent, recipe("market-data/resolve.md"), "NSE", "INFY")
    kite = agent.simulation
    assert kite is not None
    facts = kite.instrument_facts("NSE", "INFY")
    assert done.lines == [
        f"Resolved: NSE:INFY (EQ), token {facts.instrument_token}, ISIN {facts.isin}, "
        f"tick {facts.tick_size:g}, lot {facts.lot_size}, active",
        f"Quote {kite.ltp('NSE:INFY')['NSE:INFY']['last_price']:.2f}, last trade 11:30:00 IST",
    ]
    assert done.row["tick_size"] == facts.tick_size


def test_the_oldest_server_is_searched_by_substring_and_kept_exact() -> None:
    agent = in_process("default", "legacy-oldest")
    resolve(agent, recipe("market-data/resolve.md"), "NSE", "INFY")
    first, second, _ = agent.made
    assert first.tool == second.tool == "search_instruments"
    assert "verbosity" not in second.arguments and "mode" not in second.arguments
    rows = json.loads(second.text)
    rows = rows["data"] if isinstance(rows, dict) else rows
    assert len(rows) > 1  # INFY options and BSE:INFY match the substring too
    assert [r["id"] for r in rows].count("NSE:INFY") == 1
    assert second.arguments["limit"] > len(rows)
