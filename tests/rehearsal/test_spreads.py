"""/derivatives/spreads: a NIFTY bull call spread, hedge (the long call) first, the short call
only after the hedge is COMPLETE, each leg with its own approval; both end on Net rows."""

from __future__ import annotations

import pytest

from .agent import in_process, recipe
from .scripts import bull_call_spread


@pytest.mark.parametrize("generation", ["grouped", "legacy"])
def test_bull_call_spread_hedge_first(generation: str) -> None:
    agent = in_process("default", generation)
    kite = agent.simulation
    assert kite is not None
    spot = kite.ltp("NSE:NIFTY 50")["NSE:NIFTY 50"]["last_price"]
    calls = [i for i in kite.instruments("NFO") if i["name"] == "NIFTY"
             and i["instrument_type"] == "CE"]  # fmt: skip
    expiry = sorted({i["expiry"] for i in calls})[1]
    chain = sorted((i for i in calls if i["expiry"] == expiry), key=lambda i: i["strike"])
    atm = min(range(len(chain)), key=lambda j: abs(chain[j]["strike"] - spot))
    long_leg, short_leg = chain[atm]["tradingsymbol"], chain[atm + 2]["tradingsymbol"]
    summary, legs = bull_call_spread(
        agent, recipe("derivatives/spreads.md"), recipe("orders/reconcile.md"), long_leg, short_leg
    )
    first, second = agent.writes()
    assert first.arguments["tradingsymbol"] == long_leg  # never the short first
    assert second.arguments["tradingsymbol"] == short_leg
    assert len(agent.approvals) == 2
    net = {p["tradingsymbol"]: p["quantity"] for p in kite.positions()["net"]}
    assert (net[long_leg], net[short_leg]) == (legs[0]["quantity"], -legs[0]["quantity"])
    assert summary[2].endswith("the margin cannot be known here")
