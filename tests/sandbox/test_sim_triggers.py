"""GTT triggers and alerts in the simulation."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from kite_skills.sandbox.sim import (
    KiteConnectError,
    ScenarioError,
    Simulation,
    load_scenario,
    parse_scenario,
    rules,
)

PATH = """
clock: "2026-12-02 11:30:00"
profile: {meta: {demat_consent: physical}}
funds: {equity: {opening_balance: 500000}}
holdings:
  - {exchange: NSE, tradingsymbol: INFY, quantity: 120, t1_quantity: 20, average_price: 1480}
market:
  NSE:INFY:
    path:
      - ["11:31", 1610.0]
      - ["11:40", 1560.0]
      - ["11:50", 1670.0]
"""


def sim() -> Simulation:
    return Simulation(parse_scenario(PATH, "gtt.yaml"))


def test_two_leg_gtt_triggers_lower_leg_and_places_limit() -> None:
    s = sim()
    tid = s.place_gtt(
        "two-leg",
        "INFY",
        "NSE",
        [1570.0, 1660.0],
        1610.0,
        [
            {"transaction_type": "SELL", "quantity": 50, "price": 1565.0, "product": "CNC"},
            {"transaction_type": "SELL", "quantity": 50, "price": 1655.0, "product": "CNC"},
        ],
    )["trigger_id"]
    s.advance_to(s.now.replace(minute=45))
    row = s.get_gtt(tid)
    assert row["status"] == "triggered"
    result = row["orders"][0]["result"]
    assert result["order_result"]["status"] == "success" and row["orders"][1]["result"] is None
    placed = next(o for o in s.orders() if o["order_id"] == result["order_result"]["order_id"])
    assert placed["order_type"] == "LIMIT" and placed["meta"] == {"gtt": tid}


def test_sell_gtt_above_demat_quantity_fails_when_it_triggers() -> None:
    s = sim()
    # 120 held, of which 20 are T+1: only the 100 demat shares can back a sell GTT.
    tid = s.place_gtt(
        "single",
        "INFY",
        "NSE",
        [1650.0],
        1610.0,
        [{"transaction_type": "SELL", "quantity": 120, "price": 1648.0, "product": "CNC"}],
    )["trigger_id"]
    s.advance_to(s.now.replace(minute=55))
    result = s.get_gtt(tid)["orders"][0]["result"]["order_result"]
    assert result["status"] == "failed"
    assert result["rejection_reason"] == rules.INSUFFICIENT_HOLDINGS


def test_gtt_validation_texts() -> None:
    s = sim()
    leg = {"transaction_type": "SELL", "quantity": 1, "price": 1500.0, "product": "CNC"}
    with pytest.raises(KiteConnectError) as info:
        s.place_gtt("two-leg", "INFY", "NSE", [1500.0, 1550.0], 1600.0, [leg, leg])
    assert info.value.message == (
        "Trigger cannot be created with the second trigger price less than the last price."
    )
    with pytest.raises(KiteConnectError) as info:
        s.place_gtt("single", "INFY", "NSE", [1600.0], 1600.0, [leg])
    assert info.value.message == (
        "Trigger cannot be created with one of the trigger values equal to the last price."
    )
    with pytest.raises(KiteConnectError) as info:
        s.place_gtt("single", "INFY", "NSE", [1500.0], 1600.0, [{**leg, "product": "MIS"}])
    assert info.value.message == rules.GTT_PRODUCT
    ltp = s.ltp("NSE:INFY")["NSE:INFY"]["last_price"]
    tid = s.place_gtt("single", "INFY", "NSE", [round(ltp + 0.1, 1)], ltp, [leg])["trigger_id"]
    assert s.get_gtt(tid)["status"] == "disabled"  # within 0.25 % of the LTP


def test_alert_fires_and_ato_places_basket() -> None:
    s = sim()
    simple = s.create_alert(
        name="INFY up",
        type="simple",
        lhs_exchange="NSE",
        lhs_tradingsymbol="INFY",
        lhs_attribute="LastTradedPrice",
        operator=">=",
        rhs_type="constant",
        rhs_constant=1650,
    )
    basket = {
        "name": "buy",
        "type": "ato",
        "items": [
            {
                "tradingsymbol": "INFY",
                "exchange": "NSE",
                "weight": 1,
                "params": {
                    "transaction_type": "BUY",
                    "product": "CNC",
                    "order_type": "LIMIT",
                    "validity": "DAY",
                    "quantity": 2,
                    "price": 1565.0,
                },
            }
        ],
    }
    ato = s.create_alert(
        name="INFY dip",
        type="ato",
        lhs_exchange="NSE",
        lhs_tradingsymbol="INFY",
        lhs_attribute="LastTradedPrice",
        operator="<=",
        rhs_type="constant",
        rhs_constant=1565,
        basket=basket,
    )
    s.advance_to(s.now.replace(minute=59))
    assert s.get_alert(simple["uuid"])["alert_count"] == 1
    history = s.get_alert_history(ato["uuid"])
    assert len(history) == 1 and history[0]["order_meta"][0]["status"] == "COMPLETE"
    assert s.get_alert(ato["uuid"])["status"] == "disabled"


def test_gap_down_leaves_protected_stop_open() -> None:
    s = Simulation(load_scenario("gap-down"))
    s.advance_to(s.now.replace(hour=9, minute=40))
    stop = s.orders()[0]
    assert stop["order_type"] == "SL-M" and stop["status"] == "OPEN"
    assert stop["filled_quantity"] == 0 and stop["pending_quantity"] == 100
    gtt = s.get_gtts()[0]
    assert gtt["orders"][0]["result"]["order_result"]["status"] == "failed"


def test_single_buy_gtt_triggers_on_the_way_down_and_its_order_fills() -> None:
    s = sim()
    leg = {"transaction_type": "BUY", "quantity": 5, "price": 1565.0, "product": "CNC"}
    tid = s.place_gtt("single", "INFY", "NSE", [1570.0], 1610.0, [leg])["trigger_id"]
    s.advance_to(s.now.replace(minute=35))
    assert s.get_gtt(tid)["status"] == "active"  # 1610 at 11:31: not yet
    s.advance_to(s.now.replace(minute=45))
    row = s.get_gtt(tid)
    assert row["status"] == "triggered"
    result = row["orders"][0]["result"]
    assert result["order_result"]["status"] == "success"
    placed = next(o for o in s.orders() if o["order_id"] == result["order_result"]["order_id"])
    assert (placed["transaction_type"], placed["quantity"], placed["price"]) == ("BUY", 5, 1565.0)
    assert placed["status"] == "COMPLETE" and placed["average_price"] == 1560.1  # the ask


def test_two_leg_gtt_upper_leg_takes_profit_and_the_other_leg_is_never_placed() -> None:
    s = sim()
    legs = [
        {"transaction_type": "SELL", "quantity": 10, "price": 1500.0, "product": "CNC"},
        {"transaction_type": "SELL", "quantity": 10, "price": 1665.0, "product": "CNC"},
    ]
    tid = s.place_gtt("two-leg", "INFY", "NSE", [1550.0, 1665.0], 1610.0, legs)["trigger_id"]
    s.advance_to(s.now.replace(minute=55))  # 1560 at 11:40 (above the stop), 1670 at 11:50
    row = s.get_gtt(tid)
    assert row["status"] == "triggered"
    assert row["orders"][0]["result"] is None
    order_id = row["orders"][1]["result"]["order_result"]["order_id"]
    placed = next(o for o in s.orders() if o["order_id"] == order_id)
    assert placed["transaction_type"] == "SELL" and placed["status"] == "COMPLETE"
    assert len(s.orders()) == 1


def test_fo_amo_is_released_at_9_15_and_equity_at_9_00() -> None:
    s = sim()
    s.advance_to(s.now.replace(hour=17))
    future = s.place_order(
        variety="amo", exchange="NFO", tradingsymbol="NIFTY26DECFUT", transaction_type="BUY",
        quantity=65, product="NRML", order_type="LIMIT", price=24000.0,
    )["order_id"]  # fmt: skip
    share = s.place_order(
        variety="amo", exchange="NSE", tradingsymbol="INFY", transaction_type="BUY",
        quantity=1, product="CNC", order_type="LIMIT", price=1500.0,
    )["order_id"]  # fmt: skip
    status = lambda oid: next(o for o in s.orders() if o["order_id"] == oid)["status"]  # noqa: E731
    s.advance_to((s.now + timedelta(days=1)).replace(hour=9, minute=5))
    assert (status(future), status(share)) == ("AMO REQ RECEIVED", "OPEN")
    s.advance_to(s.now.replace(minute=16))
    assert status(future) == "OPEN"
    trail = [r["status"] for r in s.order_history(future)]
    assert trail[:3] == ["PUT ORDER REQ RECEIVED", "VALIDATION PENDING", "AMO REQ RECEIVED"]
    assert trail[-2:] == ["OPEN PENDING", "OPEN"]


def test_an_index_alert_is_named_with_the_exchange_indices() -> None:
    # docs/kite-domain.md: INDICES:<name> "is the exchange value alerts use";
    # kiteconnect-mocks alerts_history.json: the meta rows of an index alert say INDICES.
    s = Simulation(load_scenario("default"))
    (scenario_alert,) = s.get_alerts()
    assert (scenario_alert["lhs_exchange"], scenario_alert["lhs_tradingsymbol"]) == (
        "INDICES",
        "NIFTY 50",
    )
    made = s.create_alert(
        name="NIFTY below 20000",
        type="simple",
        lhs_exchange="INDICES",
        lhs_tradingsymbol="NIFTY 50",
        lhs_attribute="LastTradedPrice",
        operator="<=",
        rhs_type="constant",
        rhs_constant=20000,
    )
    assert made["lhs_exchange"] == "INDICES"
    with pytest.raises(KiteConnectError, match="lhs_tradingsymbol"):
        s.create_alert(
            name="no such index",
            type="simple",
            lhs_exchange="INDICES",
            lhs_tradingsymbol="INFY",
            lhs_attribute="LastTradedPrice",
            operator="<=",
            rhs_type="constant",
            rhs_constant=1,
        )
    with pytest.raises(
        ScenarioError, match=re.escape("a.yaml:3: alerts[1]: no instrument INDICES:INFY")
    ):
        parse_scenario(
            'clock: "2026-12-02 11:30:00"\nalerts:\n'
            "  - {name: x, lhs_exchange: INDICES, lhs_tradingsymbol: INFY, operator: '>=',"
            " rhs_constant: 1}\n",
            "a.yaml",
        )
