"""/orders/prepare's session check (step 6 with the market-sessions reference): after the MIS
square-off a fresh MIS order is not placed, and between sessions (15:30 to 16:00) no order is;
the rehearsal ends in "tell the person when to retry", with no write, and the retry it names
is the one Kite accepts."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from kite_skills.sandbox import sim
from kite_skills.sandbox.sim import KiteConnectError

from .agent import in_process, recipe
from .scripts import session_gate

PREPARE = recipe("orders/prepare.md")
SESSIONS = recipe("orders/reference/market-sessions.md")
ORDER = {
    "exchange": "NSE", "tradingsymbol": "SBIN", "transaction_type": "BUY", "quantity": 10,
    "order_type": "LIMIT", "price": 960.0,
}  # fmt: skip


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_after_the_mis_square_off(generation: str) -> None:
    agent = in_process("after-square-off", generation)
    told = session_gate(agent, PREPARE, SESSIONS, "NSE:SBIN", "MIS")
    assert told == (
        "Fresh MIS orders are blocked after 15:20 (now 15:22 IST). Retry at 09:15 on the next "
        "trading day, or place it as CNC before 15:30."
    )
    assert not agent.writes()
    kite = agent.simulation
    assert kite is not None
    with pytest.raises(KiteConnectError):  # the truth: Kite refuses it
        kite.place_order(variety="regular", product="MIS", **ORDER)
    assert kite.place_order(variety="regular", product="CNC", **ORDER)["order_id"]


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
def test_between_sessions_tell_the_person_when_to_retry(generation: str) -> None:
    at = datetime(2026, 12, 2, 15, 35, tzinfo=sim.IST)
    agent = in_process("after-square-off", generation, at=at)
    told = session_gate(agent, PREPARE, SESSIONS, "NSE:SBIN", "CNC")
    assert told is not None and told.startswith("No order can be placed now (15:35 IST")
    assert "Retry at 16:00 as an AMO (`variety` `amo`)" in told
    assert not agent.writes()
    kite = agent.simulation
    assert kite is not None
    with pytest.raises(KiteConnectError):  # the truth: neither a regular order nor an AMO now
        kite.place_order(variety="regular", product="CNC", **ORDER)
    with pytest.raises(KiteConnectError):
        kite.place_order(variety="amo", product="CNC", **ORDER)
    kite.advance_to(at + timedelta(minutes=25))  # 16:00: the retry the person was told
    assert kite.place_order(variety="amo", product="CNC", **ORDER)["order_id"]
