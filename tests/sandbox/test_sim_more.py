"""More of the simulated account: the documented example, validity, AMOs, funds, lookups."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from kite_skills.sandbox.sim import (
    KiteConnectError,
    Simulation,
    load_scenario,
    parse_scenario,
    rules,
)
from kite_skills.sandbox.sim.scenario import _TOP as SCENARIO_KEYS

DOC = Path(__file__).resolve().parents[2] / "docs" / "sandbox-scenarios.md"
BASE = """
clock: "2026-12-02 11:30:00"
funds: {equity: {opening_balance: 500000}}
holdings:
  - {exchange: NSE, tradingsymbol: INFY, quantity: 120, t1_quantity: 20, average_price: 1480}
"""


def sim(text: str = BASE) -> Simulation:
    return Simulation(parse_scenario(text, "t.yaml"))


def ltp(s: Simulation, key: str) -> float:
    return float(s.ltp(key)[key]["last_price"])


def buy(s: Simulation, **kw: object) -> str:
    args: dict = {
        "variety": "regular",
        "exchange": "NSE",
        "tradingsymbol": "INFY",
        "transaction_type": "BUY",
        "quantity": 1,
        "product": "CNC",
        "order_type": "LIMIT",
        "price": 1500.0,
    }
    args.update(kw)
    return str(s.place_order(**args)["order_id"])


def row(s: Simulation, oid: str) -> dict:
    return next(o for o in s.orders() if o["order_id"] == oid)


def test_the_documented_example_loads() -> None:
    text = DOC.read_text("utf-8")
    block = re.search(r"```yaml\n(.*?)```", text, re.S)
    assert block is not None
    s = Simulation(parse_scenario(block.group(1), "doc.yaml"))
    assert s.holdings()[0]["t1_quantity"] == 20 and s.get_gtts()[0]["type"] == "two-leg"
    assert s.mf_holdings()[0]["fund"].startswith("HDFC Index Fund")
    assert s.mf_orders()[0]["amount"] == 5000.0 and s.mf_sips()[0]["frequency"] == "monthly"
    # complete: every top-level key a scenario takes is shown
    shown = set(re.findall(r"^([a-z_]+):", block.group(1), re.M))
    assert shown == set(SCENARIO_KEYS)


def test_open_orders_block_margin_in_net() -> None:
    s = sim()
    before = s.margins("equity")["net"]
    buy(s, quantity=100, price=1300.0)
    assert s.margins("equity")["net"] == pytest.approx(before - 130000.0)


def test_ioc_and_ttl() -> None:
    s = sim()
    oid = buy(s, validity="IOC", price=1300.0)
    assert row(s, oid)["status"] == "CANCELLED" and row(s, oid)["cancelled_quantity"] == 1
    oid = buy(s, validity="TTL", validity_ttl=5, price=1300.0)
    s.advance_to(s.now + timedelta(minutes=4))
    assert row(s, oid)["status"] == "OPEN"
    s.advance_to(s.now + timedelta(minutes=2))
    assert row(s, oid)["status"] == "CANCELLED"


def test_day_orders_cancelled_at_close() -> None:
    s = sim()
    oid = buy(s, price=1300.0)
    s.advance_to(s.now.replace(hour=15, minute=31))
    assert row(s, oid)["status"] == "CANCELLED"


def test_pre_open_amo_release() -> None:
    s = Simulation(load_scenario("pre-open"))
    with pytest.raises(KiteConnectError) as info:
        buy(s, tradingsymbol="RELIANCE", price=1500.0)
    assert info.value.message == rules.MARKET_CLOSED
    oid = buy(s, variety="amo", tradingsymbol="RELIANCE", price=1600.0)
    assert row(s, oid)["status"] == "AMO REQ RECEIVED"
    s.advance_to(s.now.replace(hour=9, minute=1))
    assert row(s, oid)["status"] == "OPEN" and row(s, oid)["exchange_order_id"]
    s.advance_to(s.now.replace(hour=9, minute=16))
    assert row(s, oid)["status"] == "COMPLETE"


def test_after_square_off_scenario() -> None:
    s = Simulation(load_scenario("after-square-off"))
    mis = [p for p in s.positions()["net"] if p["product"] == "MIS"]
    assert mis and all(p["quantity"] == 0 for p in mis)
    assert len([o for o in s.orders() if o["placed_by"] == "ADMINSQF"]) == 2
    assert s.margins("equity")["utilised"]["debits"] == pytest.approx(2 * 59.0)


def test_t1_scenario_btst_then_tpin() -> None:
    s = Simulation(load_scenario("t1-holdings"))
    buy(s, transaction_type="SELL", quantity=90, price=1500.0)  # 50 T+1 + 40 authorised
    with pytest.raises(KiteConnectError) as info:
        buy(s, transaction_type="SELL", quantity=5, price=1500.0)
    assert info.value.status == 428 and info.value.message.startswith("5 quantity")


def test_selling_todays_buy_leaves_holdings_alone() -> None:
    s = sim()
    price = ltp(s, "NSE:INFY")
    buy(s, quantity=10, price=round(price + 10, 1))
    buy(s, transaction_type="SELL", quantity=10, price=round(price - 10, 1))
    assert s.holdings()[0]["used_quantity"] == 0
    assert s.positions()["net"][0]["quantity"] == 0


def test_errors_for_unknown_and_finished_orders() -> None:
    s = sim()
    with pytest.raises(KiteConnectError) as info:
        s.order_history("1")
    assert info.value.error_type == "OrderException"
    oid = buy(s, price=round(ltp(s, "NSE:INFY") + 10, 1))
    with pytest.raises(KiteConnectError) as info:
        s.cancel_order("regular", oid)
    assert info.value.message == "Order cannot be cancelled as it is complete."
    with pytest.raises(KiteConnectError):
        buy(s, tradingsymbol="NOPE")


def test_gtt_modify_delete_and_alert_delete() -> None:
    s = sim()
    leg = {"transaction_type": "BUY", "quantity": 1, "price": 1400.0, "product": "CNC"}
    tid = s.place_gtt("single", "INFY", "NSE", [1410.0], 1600.0, [leg])["trigger_id"]
    s.modify_gtt(tid, "single", "INFY", "NSE", [1420.0], 1600.0, [leg])
    assert s.get_gtt(tid)["condition"]["trigger_values"] == [1420.0]
    s.delete_gtt(tid)
    with pytest.raises(KiteConnectError):
        s.get_gtt(tid)
    alert = s.create_alert(
        name="x",
        type="simple",
        lhs_exchange="NSE",
        lhs_tradingsymbol="INFY",
        operator="<=",
        rhs_type="constant",
        rhs_constant=1000,
    )
    s.delete_alerts(alert["uuid"])
    assert s.get_alerts() == []


def test_historical_limits_and_facts() -> None:
    s = sim()
    token = s.instrument_facts("NSE", "INFY").instrument_token
    with pytest.raises(KiteConnectError) as info:
        s.historical_data(token, s.now - timedelta(days=61), s.now, "minute")
    assert info.value.message == "interval exceeds max limit: 60 days"
    facts = s.instrument_facts("NFO", "NIFTY26DECFUT")
    assert (facts.lot_size, facts.freeze_quantity, facts.tick_size) == (
        65,
        1800,
        0.1,
    )  # NSE: NIFTY freeze 1,800 (issue 41 §2)
    assert facts.lower_circuit < ltp(s, "NFO:NIFTY26DECFUT") < facts.upper_circuit


def test_holdings_summary_and_compact_agree_with_full() -> None:
    s = Simulation(load_scenario("default"))
    full = s.holdings()
    compact = s.holdings_compact()
    assert [(r["tradingsymbol"], r["quantity"], r["t1_quantity"]) for r in compact] == [
        (r["tradingsymbol"], r["quantity"], r["t1_quantity"]) for r in full
    ]
    summary = s.holdings_summary()
    assert summary["total_pnl"] == pytest.approx(sum(r["pnl"] for r in full), abs=0.05)
    assert summary["current_value"] == pytest.approx(
        sum(r["last_price"] * r["quantity"] for r in full), abs=0.05
    )


def test_next_trading_day_settles_yesterday() -> None:
    s = sim(
        BASE
        + """positions:
  - {exchange: NFO, tradingsymbol: NIFTY26DECFUT, product: NRML, quantity: 65, average_price: 25900}
"""
    )
    price = ltp(s, "NSE:TCS")
    buy(s, tradingsymbol="TCS", quantity=3, price=round(price + 5, 1))
    buy(s, transaction_type="SELL", quantity=30, price=1300.0)  # 20 T+1 (BTST) + 10 demat
    s.advance_to(s.now.replace(hour=17))
    amo = buy(s, variety="amo", price=1300.0)
    s.advance_to(s.now + timedelta(hours=15))  # Thursday 08:30
    assert [o["order_id"] for o in s.orders()] == [amo] and s.trades() == []
    assert s.orders()[0]["status"] == "AMO REQ RECEIVED"
    held = {h["tradingsymbol"]: h for h in s.holdings()}
    assert (held["INFY"]["quantity"], held["INFY"]["t1_quantity"]) == (90, 0)
    assert (held["TCS"]["quantity"], held["TCS"]["t1_quantity"]) == (3, 3)
    net = s.positions()["net"]
    assert [(p["tradingsymbol"], p["overnight_quantity"]) for p in net] == [("NIFTY26DECFUT", 65)]
    assert s.positions()["day"] == []


def test_convert_position_escapes_square_off() -> None:
    s = sim()
    buy(s, product="MIS", quantity=10, price=round(ltp(s, "NSE:INFY") + 10, 1))
    assert s.convert_position("NSE", "INFY", "BUY", "day", 10, "MIS", "CNC") is True
    s.advance_to(s.now.replace(hour=15, minute=21))
    assert not [o for o in s.orders() if o["placed_by"] == "ADMINSQF"]
    cnc = [p for p in s.positions()["net"] if p["product"] == "CNC"]
    assert cnc[0]["quantity"] == 10
    with pytest.raises(KiteConnectError) as info:
        s.convert_position("NSE", "INFY", "BUY", "day", 10, "CNC", "MIS")
    assert info.value.message == rules.MIS_BLOCKED.format(time="15:20")
