"""/market-data/historical, /technical-analysis/rsi and /technical-analysis/moving-averages:
candles fetched in chunks within the per-request limits, merged without the shared boundary
candles, the forming candle dropped, and the indicators computed by the recipes' formulas
equal those of the simulation's own series (fetched in one piece, straight from it)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from kite_skills.sandbox.sim import KiteConnectError

from .agent import in_process, recipe, step
from .scripts import candles, ema, rsi14

HISTORICAL = recipe("market-data/historical.md")


@pytest.mark.parametrize("generation", ["grouped", "legacy"])
def test_day_candles_rsi_and_ema(generation: str) -> None:
    agent = in_process("default", generation)
    kite = agent.simulation
    assert kite is not None
    rsi_recipe = recipe("technical-analysis/rsi.md")
    step(rsi_recipe, 2, "Fetch at least 100 bars before the first value you report")
    token, rows, calls = candles(agent, HISTORICAL, "NSE:INFY", "day", 220, agent.now)
    assert calls == 1 and len(rows) >= 115
    truth = kite.historical_data(token, agent.now - timedelta(days=220), agent.now, "day")
    complete = [c for c in truth if not c["date"].startswith(f"{agent.now:%Y-%m-%d}")]
    assert [c["close"] for c in rows] == [c["close"] for c in complete]
    closes = [c["close"] for c in rows]
    assert round(rsi14(closes, rsi_recipe), 2) == round(rsi14([c["close"] for c in complete],
                                                              rsi_recipe), 2)  # fmt: skip
    ma = recipe("technical-analysis/moving-averages.md")
    assert 0 < ema(closes, 20, ma) < 10 * closes[-1]


def test_minute_candles_come_in_chunks_without_duplicates() -> None:
    agent = in_process("default")
    kite = agent.simulation
    assert kite is not None
    token, rows, calls = candles(agent, HISTORICAL, "NSE:INFY", "5minute", 150, agent.now)
    assert calls == 2  # 150 days of 5-minute candles: two requests of at most 100 days
    dates = [c["date"] for c in rows]
    assert dates == sorted(set(dates))
    with pytest.raises(KiteConnectError, match="interval exceeds max limit"):  # why the chunks
        kite.historical_data(token, agent.now - timedelta(days=150), agent.now, "5minute")
    middle = agent.now - timedelta(days=50)
    truth = kite.historical_data(token, agent.now - timedelta(days=150), middle, "5minute")
    truth += kite.historical_data(token, middle, agent.now, "5minute")
    # Kite's JSON says +0530, the Go server's marshalled time +05:30: the same instants
    assert [datetime.fromisoformat(d) for d in dates] == sorted(
        {datetime.fromisoformat(c["date"]) for c in truth}
    )
