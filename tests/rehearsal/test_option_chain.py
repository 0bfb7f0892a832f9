"""/derivatives/option-chain for NIFTY on the default account: contracts from full search rows
(compact rows have no strike or expiry), the ATM strike nearest the index, the chosen strikes
quoted in one call, and the PCR over them, against the simulation's own master and quotes."""

from __future__ import annotations

import pytest

from .agent import in_process, recipe
from .scripts import option_chain


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_nifty_chain_around_the_money(generation: str) -> None:
    agent = in_process("default", generation)
    chain = option_chain(
        agent, recipe("derivatives/option-chain.md"), "NSE:NIFTY 50", "NFO:NIFTY", 2
    )
    kite = agent.simulation
    assert kite is not None
    spot = kite.ltp("NSE:NIFTY 50")["NSE:NIFTY 50"]["last_price"]
    master = [i for i in kite.instruments("NFO") if i["name"] == "NIFTY"
              and i["instrument_type"] in ("CE", "PE")]  # fmt: skip
    expiry = min(i["expiry"] for i in master)
    strikes = sorted({i["strike"] for i in master if i["expiry"] == expiry})
    atm = min(strikes, key=lambda k: abs(k - spot))
    assert chain.spot == spot and chain.expiry.startswith(expiry)
    assert atm in chain.strikes and len(chain.strikes) == 5
    keys = [f"NFO:{i['tradingsymbol']}" for i in master
            if i["expiry"] == expiry and i["strike"] in chain.strikes]  # fmt: skip
    quotes = kite.quote(*keys)
    puts = sum(q["oi"] for k, q in quotes.items() if k.endswith("PE"))
    calls = sum(q["oi"] for k, q in quotes.items() if k.endswith("CE"))
    assert chain.pcr == round(puts / calls, 2)
    assert not agent.writes()
