"""The simulated order engine: each rejection with Kite's message, states, fills, funds."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kite_skills.sandbox.sim import KiteConnectError, Simulation, parse_scenario, rules

BASE = """
clock: "2026-12-02 11:30:00"
profile: {meta: {demat_consent: physical}}
funds: {equity: {opening_balance: 500000}}
holdings:
  - {exchange: NSE, tradingsymbol: INFY, quantity: 120, t1_quantity: 20, average_price: 1480}
"""


def sim(extra: str = "", base: str = BASE) -> Simulation:
    return Simulation(parse_scenario(base + extra, "test.yaml"))


def place(s: Simulation, **kw: object) -> dict:
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
    return s.place_order(**args)


def order(s: Simulation, order_id: str) -> dict:
    return next(o for o in s.orders() if o["order_id"] == order_id)


def refused(s: Simulation, **kw: object) -> KiteConnectError:
    with pytest.raises(KiteConnectError) as info:
        place(s, **kw)
    return info.value


def test_limit_buy_state_trail_and_fill() -> None:
    s = sim()
    ltp = s.ltp("NSE:INFY")["NSE:INFY"]["last_price"]
    oid = place(s, price=round(ltp - 20, 1))["order_id"]
    trail = [row["status"] for row in s.order_history(oid)]
    assert trail == ["PUT ORDER REQ RECEIVED", "VALIDATION PENDING", "OPEN PENDING", "OPEN"]
    assert order(s, oid)["exchange_order_id"]
    oid2 = place(s, price=round(ltp + 5, 1))["order_id"]
    assert order(s, oid2)["status"] == "COMPLETE"
    trades = s.order_trades(oid2)
    # a marketable limit fills at the touch: the best ask, a tick above the last price
    assert sum(t["quantity"] for t in trades) == 1
    assert trades[0]["average_price"] == round(ltp + 0.1, 2)


def test_modify_states_and_cap() -> None:
    s = sim()
    oid = place(s, price=1300.0)["order_id"]
    s.modify_order("regular", oid, quantity=2, price=1301.0, order_type="LIMIT")
    trail = [row["status"] for row in s.order_history(oid)][4:]
    assert trail == ["MODIFY VALIDATION PENDING", "MODIFY PENDING", "MODIFIED", "OPEN"]
    assert order(s, oid)["modified"] is True and order(s, oid)["quantity"] == 2
    for i in range(24):
        s.modify_order("regular", oid, quantity=2, price=1302.0 + i / 10, order_type="LIMIT")
    with pytest.raises(KiteConnectError) as info:
        s.modify_order("regular", oid, quantity=2, price=1290.0, order_type="LIMIT")
    assert info.value.message == "Maximum allowed order modifications exceeded."
    s.cancel_order("regular", oid)
    assert order(s, oid)["status"] == "CANCELLED"
    assert [r["status"] for r in s.order_history(oid)][-2:] == ["CANCEL PENDING", "CANCELLED"]


def test_tick_size_rejections_enter_the_book() -> None:
    s = sim()
    oid = place(s, price=1500.03)["order_id"]
    assert order(s, oid)["status"] == "REJECTED"
    assert order(s, oid)["status_message"] == rules.PRICE_TICK
    oid = place(s, transaction_type="SELL", order_type="SL", price=1400.0, trigger_price=1401.03)[
        "order_id"
    ]
    assert (
        order(s, oid)["status_message"]
        == "16316 : The trigger price is not a multiple of tick size"
    )


def test_lot_multiple_and_freeze() -> None:
    s = sim()
    oid = place(
        s, exchange="NFO", tradingsymbol="NIFTY26DECFUT", quantity=60, product="NRML", price=26000.0
    )["order_id"]
    assert order(s, oid)["status"] == "REJECTED"
    assert order(s, oid)["status_message"] == "Quantity should be a multiple of lot size 65."
    err = refused(
        s,
        exchange="NFO",
        tradingsymbol="NIFTY26DECFUT",
        quantity=1820,
        product="NRML",
        price=26000.0,
    )
    assert err.error_type == "InputException"
    assert err.message.startswith(
        "The order quantity 1820 (28 lots) is higher than the maximum "
        "quantity of 1800 (27 lots) allowed by the exchanges."
    )


def test_circuit_limits() -> None:
    s = sim()
    facts = s.instrument_facts("NSE", "INFY")
    err = refused(s, price=round(facts.upper_circuit + 10, 1))
    assert err.message == rules.CIRCUIT_HIGH.format(limit=f"{facts.upper_circuit:.2f}")
    err = refused(s, transaction_type="SELL", price=round(facts.lower_circuit - 10, 1), quantity=1)
    assert "lower circuit limit" in err.message


def test_insufficient_funds_against_net() -> None:
    s = sim()
    net = s.margins("equity")["net"]
    oid = place(s, quantity=400, price=1600.0)["order_id"]
    row = order(s, oid)
    assert row["status"] == "REJECTED"
    assert row["status_message"] == (
        f"Insufficient funds. Required margin is 640000.00 but "
        f"available margin is {net:.2f}. Check the orderbook for "
        "open orders."
    )
    assert [r["status"] for r in s.order_history(oid)] == [
        "PUT ORDER REQ RECEIVED",
        "VALIDATION PENDING",
        "REJECTED",
    ]


def test_market_needs_protection_and_slm_barred() -> None:
    s = sim()
    assert refused(s, order_type="MARKET", price=None).message == rules.NO_PROTECTION
    assert (
        refused(s, order_type="SL-M", price=None, trigger_price=1700.0, market_protection=0).message
        == rules.NO_PROTECTION
    )
    oid = place(
        s,
        exchange="NFO",
        tradingsymbol="NIFTY26D0826000CE",
        quantity=65,
        product="NRML",
        order_type="SL-M",
        price=None,
        trigger_price=500.0,
        market_protection=-1,
    )["order_id"]
    assert order(s, oid)["status_message"] == "16052 : Function not available"
    oid = place(
        s,
        exchange="BSE",
        tradingsymbol="SBIN",
        order_type="SL-M",
        price=None,
        trigger_price=1100.0,
        market_protection=2,
    )["order_id"]
    assert order(s, oid)["status"] == "REJECTED"


def test_tags_iceberg_and_sessions() -> None:
    s = sim()
    assert refused(s, tag="too-long-and-dashed").message == rules.BAD_TAG
    assert refused(s, tag="a" * 21).message == rules.BAD_TAG
    place(s, tag="a" * 20, price=1300.0)
    assert (
        refused(s, variety="iceberg", quantity=100, iceberg_legs=1, iceberg_quantity=100).message
        == rules.ICEBERG_LEGS
    )
    assert (
        refused(s, variety="iceberg", quantity=100, iceberg_legs=51, iceberg_quantity=2).message
        == rules.ICEBERG_LEGS
    )
    assert refused(s, variety="amo", price=1300.0).message.startswith(
        "AMO orders can be placed only outside market hours"
    )
    s.advance_to(s.now.replace(hour=17))
    assert refused(s, price=1300.0).message == rules.MARKET_CLOSED
    oid = place(s, variety="amo", price=1300.0)["order_id"]
    assert order(s, oid)["status"] == "AMO REQ RECEIVED"
    s.advance_to(s.now + timedelta(days=1) - timedelta(hours=7, minutes=50))  # next day 09:10
    assert order(s, oid)["status"] == "OPEN"
    with pytest.raises(KiteConnectError) as info:
        s.cancel_order("amo", oid)
    assert info.value.message == rules.AMO_RELEASED
    s.cancel_order("regular", oid)


def test_fresh_mis_after_square_off_and_square_off() -> None:
    s = sim()
    oid = place(s, product="MIS", quantity=10, price=1700.0)["order_id"]
    assert order(s, oid)["status"] == "COMPLETE"
    s.advance_to(s.now.replace(hour=15, minute=21))
    net = s.positions()["net"]
    mis = [p for p in net if p["product"] == "MIS"]
    assert mis and mis[0]["quantity"] == 0
    closing = [o for o in s.orders() if o["placed_by"] == "ADMINSQF"]
    assert (
        closing and closing[0]["transaction_type"] == "SELL" and closing[0]["status"] == "COMPLETE"
    )
    err = refused(s, product="MIS", price=1600.0)
    assert err.message == rules.MIS_BLOCKED.format(time="15:20")
    place(s, product="CNC", price=1300.0)  # CNC still works until 15:30


def test_holdings_sells_t1_and_tpin() -> None:
    text = BASE.replace("physical}}", "consent}}").replace(
        "average_price: 1480}", "average_price: 1480, authorised_quantity: 30}"
    )
    s = sim(base=text)
    # T+1 (20, BTST) plus 30 authorised demat shares: 50 sell without TPIN trouble.
    place(s, transaction_type="SELL", quantity=50, price=1300.0)
    with pytest.raises(KiteConnectError) as info:
        place(s, transaction_type="SELL", quantity=10, price=1300.0)
    assert info.value.status == 428
    assert info.value.message == "10 quantity needs authorisation at depository"
    s2 = sim()
    assert (
        refused(s2, transaction_type="SELL", quantity=121, price=1300.0).message
        == rules.INSUFFICIENT_HOLDINGS
    )


def test_partial_fills_and_protected_market_remainder() -> None:
    extra = """
market:
  NSE:INFY:
    liquidity: 30
    path:
      - ["11:31", 1602.0]
      - ["11:32", 1603.0]
      - ["11:33", 1660.0]
      - ["11:34", 1661.0]
"""
    s = sim(extra)
    s.advance_to(s.now.replace(minute=31))
    oid = place(s, order_type="MARKET", price=None, quantity=100, market_protection=2)["order_id"]
    row = order(s, oid)
    assert row["status"] == "OPEN" and row["filled_quantity"] == 30
    s.advance_to(s.now.replace(minute=35))
    row = order(s, oid)
    # 1602 × 1.02 = 1634.05: the 11:32 tick fills 30 more, then the price runs past the band.
    assert row["filled_quantity"] == 60 and row["pending_quantity"] == 40
    assert row["status"] == "OPEN"
    assert sum(t["quantity"] for t in s.order_trades(oid)) == 60


def test_day_and_net_positions() -> None:
    extra = """
positions:
  - {exchange: NFO, tradingsymbol: NIFTY26DECFUT, product: NRML, quantity: 65, average_price: 25900}
"""
    s = sim(extra)
    books = s.positions()
    assert books["day"] == [] and books["net"][0]["overnight_quantity"] == 65
    ltp = s.ltp("NFO:NIFTY26DECFUT")["NFO:NIFTY26DECFUT"]["last_price"]
    place(
        s,
        exchange="NFO",
        tradingsymbol="NIFTY26DECFUT",
        quantity=65,
        product="NRML",
        transaction_type="SELL",
        price=round(ltp - 50, 1),
    )
    books = s.positions()
    assert books["day"][0]["quantity"] == -65 and books["day"][0]["overnight_quantity"] == 0
    assert books["net"][0]["quantity"] == 0 and books["net"][0]["overnight_quantity"] == 65


def test_determinism() -> None:
    def run() -> tuple:
        s = sim()
        place(s, price=1590.0, quantity=5)
        place(
            s,
            exchange="NFO",
            tradingsymbol="NIFTY26DECFUT",
            quantity=65,
            product="NRML",
            order_type="SL",
            price=26300.0,
            trigger_price=26250.0,
        )
        s.advance_to(s.now + timedelta(hours=3))
        return s.orders(), s.trades(), s.positions(), s.margins()

    assert run() == run()


def test_stop_loss_trail_trigger_side_and_equity_cap() -> None:
    extra = """
market:
  NSE:INFY:
    path:
      - ["11:31", 1600.0]
      - ["11:35", 1585.0]
"""
    s = sim(extra)
    s.advance_to(s.now.replace(minute=31))
    err = refused(s, transaction_type="SELL", order_type="SL", price=1590.0, trigger_price=1610.0)
    assert err.message == rules.TRIGGER_SIDE_SELL.format(ltp="1600.00")
    oid = place(
        s, transaction_type="SELL", order_type="SL", price=1580.0, trigger_price=1590.0, quantity=5
    )["order_id"]
    assert order(s, oid)["status"] == "TRIGGER PENDING"
    s.advance_to(s.now.replace(minute=36))
    assert [r["status"] for r in s.order_history(oid)][-3:] == [
        "TRIGGER PENDING",
        "OPEN",
        "COMPLETE",
    ]
    assert s.order_trades(oid)[0]["average_price"] == 1584.9  # the bid when it triggered
    err = refused(s, tradingsymbol="IDEA", price=10.0, quantity=100_001)
    assert err.message == rules.EQUITY_MAX.format(qty=100001)


def test_market_orders_blocked_in_stock_options() -> None:
    s = sim()
    err = refused(
        s,
        exchange="NFO",
        tradingsymbol="RELIANCE26DEC1540CE",
        quantity=500,
        product="NRML",
        order_type="MARKET",
        price=None,
        market_protection=-1,
    )
    assert err.message == rules.STOCK_OPTION_MARKET


def test_a_filled_order_trail_with_exchange_ids_timestamps_and_trades() -> None:
    s = sim()
    price = s.ltp("NSE:INFY")["NSE:INFY"]["last_price"]
    oid = place(s, quantity=3, price=round(price + 5, 1))["order_id"]
    history = s.order_history(oid)
    assert [r["status"] for r in history] == [
        "PUT ORDER REQ RECEIVED",
        "VALIDATION PENDING",
        "OPEN PENDING",
        "OPEN",
        "COMPLETE",
    ]
    assert [bool(r["exchange_order_id"]) for r in history] == [False, False, False, True, True]
    assert all(r["order_timestamp"] == "2026-12-02 11:30:00" for r in history)
    assert history[-1]["filled_quantity"] == 3 and history[-1]["pending_quantity"] == 0
    row = order(s, oid)
    assert row["exchange_timestamp"] == "2026-12-02 11:30:00"
    assert row["average_price"] == round(price + 0.1, 2)  # the best ask
    (trade,) = s.order_trades(oid)
    assert trade["exchange_order_id"] == row["exchange_order_id"] and trade["quantity"] == 3
    assert trade["trade_id"] and trade["fill_timestamp"] == "2026-12-02 11:30:00"
    assert [t["trade_id"] for t in s.trades() if t["order_id"] == oid] == [trade["trade_id"]]
