"""/derivatives/greeks: the implied volatility of an at-the-money NIFTY call, solved by the
recipe's bisection from the mid of its book, against the volatility the simulation prices it
with (Black-Scholes, r 6.5 %, q 0, T to 15:30 on expiry)."""

from __future__ import annotations

import pytest

from .agent import in_process, recipe
from .scripts import implied_vol


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_implied_volatility_of_an_atm_call(generation: str) -> None:
    agent = in_process("default", generation)
    kite = agent.simulation
    assert kite is not None
    spot = kite.ltp("NSE:NIFTY 50")["NSE:NIFTY 50"]["last_price"]
    calls = [i for i in kite.instruments("NFO") if i["name"] == "NIFTY"
             and i["instrument_type"] == "CE"]  # fmt: skip
    expiry = sorted({i["expiry"] for i in calls})[1]  # the second expiry: weeks away
    atm = min((i for i in calls if i["expiry"] == expiry), key=lambda i: abs(i["strike"] - spot))
    iv, _ = implied_vol(agent, recipe("derivatives/greeks.md"), f"NFO:{atm['tradingsymbol']}",
                        "NSE:NIFTY 50")  # fmt: skip
    truth = kite.master.by_key(f"NFO:{atm['tradingsymbol']}").iv  # the model's volatility
    assert abs(iv - truth) < 0.01  # within one volatility point (the mid is tick-rounded)
    assert not agent.writes()
