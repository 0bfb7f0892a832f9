"""Every rejection the simulated Kite makes, each with its exact message (kite_skills/sandbox/
sim/rules.py), and where it lands: refused before the book (``KiteConnectError``: nothing enters the
order book) or in the book as a REJECTED order with ``status_message`` (an RMS or exchange
rejection, as Kite records them). A last test checks that no rule text is left untested."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from kite_skills.sandbox.sim import KiteConnectError, Simulation, parse_scenario, rules
from kite_skills.sandbox.sim.order_rules import ALL_RULES

BASE = """
clock: "2026-12-02 11:30:00"
profile: {meta: {demat_consent: physical}}
funds: {equity: {opening_balance: 500000}}
holdings:
  - {exchange: NSE, tradingsymbol: INFY, quantity: 120, t1_quantity: 20, average_price: 1480}
"""
NO_DDPI = BASE.replace("physical}}", "consent}}")
FUT = {"exchange": "NFO", "tradingsymbol": "NIFTY26DECFUT", "product": "NRML"}
INDEX_OPTION = {"exchange": "NFO", "tradingsymbol": "NIFTY26D0826000CE", "product": "NRML"}
LEG = {"transaction_type": "SELL", "quantity": 1, "price": 1500.0, "product": "CNC"}

Action = Callable[[Simulation], Any]


def sim(text: str = BASE) -> Simulation:
    return Simulation(parse_scenario(text, "rejections.yaml"))


def ltp(s: Simulation, key: str = "NSE:INFY") -> float:
    return float(s.ltp(key)[key]["last_price"])


def place(**kw: Any) -> Action:
    def act(s: Simulation) -> Any:
        args: dict[str, Any] = {
            "variety": "regular",
            "exchange": "NSE",
            "tradingsymbol": "INFY",
            "transaction_type": "BUY",
            "quantity": 1,
            "product": "CNC",
            "order_type": "LIMIT",
            "price": 1500.0,
        }
        args.update({k: (v(s) if callable(v) else v) for k, v in kw.items()})
        return s.place_order(**args)

    return act


def at(hour: int, minute: int, then: Action, days: int = 0) -> Action:
    def act(s: Simulation) -> Any:
        s.advance_to(s.now.replace(hour=hour, minute=minute) + timedelta(days=days))
        return then(s)

    return act


def resting(**kw: Any) -> Callable[[Simulation], str]:
    """An order that rests OPEN (a buy well below the market), then its id."""

    def make(s: Simulation) -> str:
        return str(place(**{"price": 1300.0, **kw})(s)["order_id"])

    return make


def modify(make: Callable[[Simulation], str], variety: str = "regular", **kw: Any) -> Action:
    def act(s: Simulation) -> Any:
        oid = make(s)
        args: dict[str, Any] = {
            "quantity": None,
            "price": None,
            "order_type": None,
            "trigger_price": None,
            "validity": None,
            "disclosed_quantity": None,
        }
        args.update(kw)
        return s.modify_order(variety, oid, **args)

    return act


def circuit(side: str, offset: float, key: tuple[str, str] = ("NSE", "INFY")) -> Callable:
    def price(s: Simulation) -> float:
        facts = s.instrument_facts(*key)
        edge = facts.upper_circuit if side == "upper" else facts.lower_circuit
        return round(edge + offset, 1)

    return price


def limit_text(side: str, template: str, key: tuple[str, str] = ("NSE", "INFY")) -> Callable:
    def text(s: Simulation) -> str:
        facts = s.instrument_facts(*key)
        edge = facts.upper_circuit if side == "upper" else facts.lower_circuit
        return template.format(limit=f"{edge:.2f}")

    return text


def ltp_text(template: str) -> Callable[[Simulation], str]:
    return lambda s: template.format(ltp=f"{ltp(s):.2f}")


def twice(first: Action, second: Action) -> Action:
    def act(s: Simulation) -> Any:
        first(s)
        return second(s)

    return act


def many_modifications(s: Simulation) -> Any:
    oid = resting()(s)
    for i in range(rules.MAX_MODIFICATIONS):
        s.modify_order("regular", oid, quantity=1, price=1300.0 + (i + 1) / 10)
    return s.modify_order("regular", oid, quantity=1, price=1290.0)


def complete_order(s: Simulation) -> str:
    return str(place(price=round(ltp(s) + 10, 1))(s)["order_id"])


def gtt(kind: str, values: list[float], last: float, legs: list[dict[str, Any]]) -> Action:
    return lambda s: s.place_gtt(kind, "INFY", "NSE", values, last, legs)


def too_many_gtts(s: Simulation) -> Any:
    for i in range(rules.GTT_MAX_ACTIVE):
        s.place_gtt("single", "INFY", "NSE", [1000.0 + i], 1600.0, [LEG])
    return s.place_gtt("single", "INFY", "NSE", [900.0], 1600.0, [LEG])


def disabled_gtt(s: Simulation) -> Any:
    price = ltp(s)
    tid = s.place_gtt("single", "INFY", "NSE", [round(price + 0.1, 1)], price, [LEG])["trigger_id"]
    assert s.get_gtt(tid)["status"] == "disabled"
    return s.modify_gtt(tid, "single", "INFY", "NSE", [1400.0], price, [LEG])


def alert(s: Simulation, **kw: Any) -> Any:
    args: dict[str, Any] = {
        "name": "x",
        "type": "simple",
        "lhs_exchange": "NSE",
        "lhs_tradingsymbol": "INFY",
        "lhs_attribute": "LastTradedPrice",
        "operator": "<=",
        "rhs_type": "constant",
        "rhs_constant": 1000,
    }
    args.update(kw)
    return s.create_alert(**args)


def too_many_alerts(s: Simulation) -> Any:
    for i in range(rules.ALERT_MAX):
        alert(s, name=f"a{i}")
    return alert(s, name="one more")


def mis_then_cnc_to_mis(s: Simulation) -> Any:
    s.advance_to(s.now.replace(hour=15, minute=25))
    return s.convert_position("NSE", "INFY", "BUY", "day", 1, "CNC", "MIS")


FREEZE_1820 = rules.FREEZE.format(qty=1820, lots=28, freeze=1800, freeze_lots=27)
AMO_NSE = rules.AMO_DURING_MARKET.format(window=rules.AMO_WINDOWS["NSE"])
SQUARE_OFF = rules.MIS_BLOCKED.format(time="15:20")

# (rule, action, message, error_type or "book" for a REJECTED order, scenario)
REFUSED: list[tuple[str, Action, Any, str, str]] = [
    # --- input checks: InputException, nothing enters the book ---
    ("BAD_VARIETY", place(variety="bracket"), rules.BAD_VARIETY, "InputException", BASE),
    ("CO_UNSUPPORTED", place(variety="co"), rules.CO_UNSUPPORTED, "InputException", BASE),
    ("NO_AUCTION", place(variety="auction"), rules.NO_AUCTION, "InputException", BASE),
    ("UNKNOWN_INSTRUMENT", place(tradingsymbol="NOPE"), rules.UNKNOWN_INSTRUMENT,
     "InputException", BASE),
    ("UNKNOWN_INSTRUMENT index", place(tradingsymbol="NIFTY 50"), rules.UNKNOWN_INSTRUMENT,
     "InputException", BASE),
    ("BAD_PARAM transaction_type", place(transaction_type="HOLD"),
     rules.BAD_PARAM.format(name="transaction_type"), "InputException", BASE),
    ("BAD_PARAM product", place(product="BO"), rules.BAD_PARAM.format(name="product"),
     "InputException", BASE),
    ("BAD_PARAM order_type", place(order_type="STOP"), rules.BAD_PARAM.format(name="order_type"),
     "InputException", BASE),
    ("BAD_PARAM validity", place(validity="GTC"), rules.BAD_PARAM.format(name="validity"),
     "InputException", BASE),
    ("BAD_PARAM validity_ttl", place(validity="TTL"), rules.BAD_PARAM.format(name="validity_ttl"),
     "InputException", BASE),
    ("BAD_QUANTITY zero", place(quantity=0), rules.BAD_QUANTITY, "InputException", BASE),
    ("BAD_QUANTITY negative", place(quantity=-5), rules.BAD_QUANTITY, "InputException", BASE),
    ("BAD_TAG dashed", place(tag="my-tag"), rules.BAD_TAG, "InputException", BASE),
    ("BAD_TAG 21 chars", place(tag="a" * 21), rules.BAD_TAG, "InputException", BASE),
    ("NEEDS_PRICE", place(price=None), rules.NEEDS_PRICE, "InputException", BASE),
    ("NEEDS_TRIGGER", place(order_type="SL", trigger_price=None), rules.NEEDS_TRIGGER,
     "InputException", BASE),
    ("NO_PROTECTION market", place(order_type="MARKET", price=None), rules.NO_PROTECTION,
     "InputException", BASE),
    ("NO_PROTECTION sl-m", place(order_type="SL-M", price=None, trigger_price=1700.0),
     rules.NO_PROTECTION, "InputException", BASE),
    ("STOCK_OPTION_MARKET",
     place(exchange="NFO", tradingsymbol="RELIANCE26DEC1540CE", quantity=500, product="NRML",
           order_type="MARKET", price=None, market_protection=-1),
     rules.STOCK_OPTION_MARKET, "InputException", BASE),
    ("INDEX_OPTION_MARKET_AMO",
     at(17, 0, place(variety="amo", **INDEX_OPTION, quantity=65, order_type="MARKET",
                     price=None, market_protection=-1)),
     rules.INDEX_OPTION_MARKET_AMO, "InputException", BASE),
    ("DISCLOSED_QTY", place(quantity=5, disclosed_quantity=6), rules.DISCLOSED_QTY,
     "InputException", BASE),
    ("ICEBERG_LEGS 1", place(variety="iceberg", quantity=100, iceberg_legs=1,
                             iceberg_quantity=100), rules.ICEBERG_LEGS, "InputException", BASE),
    ("ICEBERG_LEGS 51", place(variety="iceberg", quantity=102, iceberg_legs=51,
                              iceberg_quantity=2), rules.ICEBERG_LEGS, "InputException", BASE),
    ("ICEBERG_QTY too small", place(variety="iceberg", quantity=100, iceberg_legs=2,
                                    iceberg_quantity=40), rules.ICEBERG_QTY, "InputException",
     BASE),
    ("ICEBERG_QTY off the lot", place(variety="iceberg", **FUT, quantity=650, iceberg_legs=5,
                                      iceberg_quantity=140, price=26000.0),
     rules.ICEBERG_QTY, "InputException", BASE),
    ("FREEZE", place(**FUT, quantity=1820, price=26000.0), FREEZE_1820, "InputException", BASE),
    ("FREEZE iceberg leg", place(variety="iceberg", **FUT, quantity=3640, iceberg_legs=2,
                                 iceberg_quantity=1820, price=26000.0),
     rules.FREEZE.format(qty=3640, lots=56, freeze=1800, freeze_lots=27), "InputException", BASE),
    ("EQUITY_MAX", place(tradingsymbol="IDEA", price=10.0, quantity=100_001),
     rules.EQUITY_MAX.format(qty=100001), "InputException", BASE),
    ("MARKET_CLOSED", at(17, 0, place(price=1300.0)), rules.MARKET_CLOSED, "InputException",
     BASE),
    ("MARKET_CLOSED iceberg (no iceberg AMO)",
     at(17, 0, place(variety="iceberg", quantity=100, iceberg_legs=2, iceberg_quantity=50,
                     price=1300.0)),
     rules.MARKET_CLOSED, "InputException", BASE),
    ("MARKET_CLOSED saturday", at(11, 0, place(price=1300.0), days=3), rules.MARKET_CLOSED,
     "InputException", BASE),
    ("AMO_DURING_MARKET", place(variety="amo", price=1300.0), AMO_NSE, "InputException", BASE),
    ("MIS_BLOCKED", at(15, 21, place(product="MIS", price=1300.0)), SQUARE_OFF,
     "InputException", BASE),
    ("MIS_BLOCKED convert", mis_then_cnc_to_mis, SQUARE_OFF, "InputException", BASE),
    ("NO_POSITION_TO_CONVERT", lambda s: s.convert_position("NSE", "INFY", "BUY", "day", 1, "CNC",
                                                            "MIS"),
     rules.NO_POSITION_TO_CONVERT, "InputException", BASE),
    ("CIRCUIT_HIGH", place(price=circuit("upper", 10)), limit_text("upper", rules.CIRCUIT_HIGH),
     "InputException", BASE),
    ("CIRCUIT_LOW", place(transaction_type="SELL", price=circuit("lower", -10)),
     limit_text("lower", rules.CIRCUIT_LOW), "InputException", BASE),
    ("TRIGGER_CIRCUIT_SELL",
     place(transaction_type="SELL", order_type="SL-M", price=None, market_protection=2,
           trigger_price=circuit("lower", -5)),
     limit_text("lower", rules.TRIGGER_CIRCUIT_SELL), "InputException", BASE),
    ("TRIGGER_CIRCUIT_BUY",
     place(order_type="SL-M", price=None, market_protection=2,
           trigger_price=circuit("upper", 5)),
     limit_text("upper", rules.TRIGGER_CIRCUIT_BUY), "InputException", BASE),
    ("TRIGGER_SIDE_BUY",
     place(order_type="SL", price=lambda s: round(ltp(s) - 20, 1),
           trigger_price=lambda s: round(ltp(s) - 10, 1)),
     ltp_text(rules.TRIGGER_SIDE_BUY), "InputException", BASE),
    ("TRIGGER_SIDE_SELL",
     place(transaction_type="SELL", order_type="SL", price=lambda s: round(ltp(s) + 5, 1),
           trigger_price=lambda s: round(ltp(s) + 10, 1)),
     ltp_text(rules.TRIGGER_SIDE_SELL), "InputException", BASE),
    ("INSUFFICIENT_HOLDINGS", place(transaction_type="SELL", quantity=121, price=1300.0),
     rules.INSUFFICIENT_HOLDINGS, "InputException", BASE),
    ("INSUFFICIENT_HOLDINGS nothing held", place(tradingsymbol="TCS", transaction_type="SELL",
                                                 price=3000.0), rules.INSUFFICIENT_HOLDINGS,
     "InputException", BASE),
    ("NEEDS_AUTHORISATION", place(transaction_type="SELL", quantity=110, price=1300.0),
     rules.NEEDS_AUTHORISATION.format(qty=90), "InputException", NO_DDPI),
    # --- modify / cancel ---
    ("NO_SUCH_ORDER cancel", lambda s: s.cancel_order("regular", "999"), rules.NO_SUCH_ORDER,
     "OrderException", BASE),
    ("NO_SUCH_ORDER history", lambda s: s.order_history("999"), rules.NO_SUCH_ORDER,
     "OrderException", BASE),
    ("NOT_MODIFIABLE", modify(complete_order, quantity=2), rules.NOT_MODIFIABLE.format(
        status="complete"), "InputException", BASE),
    ("NOT_CANCELLABLE", lambda s: s.cancel_order("regular", complete_order(s)),
     rules.NOT_CANCELLABLE.format(status="complete"), "InputException", BASE),
    ("BAD_VARIETY modify", modify(resting(), variety="bracket", quantity=2), rules.BAD_VARIETY,
     "InputException", BASE),
    ("TOO_MANY_MODIFICATIONS", many_modifications, rules.TOO_MANY_MODIFICATIONS,
     "NetworkException", BASE),
    ("BELOW_FILLED", modify(resting(), quantity=-1), rules.BELOW_FILLED.format(filled=0),
     "InputException", BASE),
    ("LOT_MULTIPLE modify", modify(resting(**FUT, quantity=65, price=25000.0), quantity=70),
     rules.LOT_MULTIPLE.format(lot=65), "InputException", BASE),
    ("FREEZE modify", modify(resting(**FUT, quantity=65, price=25000.0), quantity=1820),
     FREEZE_1820, "InputException", BASE),
    ("BAD_PARAM modify order_type", modify(resting(), order_type="STOP"),
     rules.BAD_PARAM.format(name="order_type"), "InputException", BASE),
    ("NEEDS_TRIGGER modify", modify(resting(), order_type="SL"), rules.NEEDS_TRIGGER,
     "InputException", BASE),
    ("NO_PROTECTION modify", modify(resting(), order_type="MARKET"), rules.NO_PROTECTION,
     "InputException", BASE),
    ("PRICE_TICK modify", modify(resting(), price=1300.03), rules.PRICE_TICK, "InputException",
     BASE),
    ("TRIGGER_TICK modify", modify(resting(), order_type="SL", price=1700.0,
                                   trigger_price=1690.03), rules.TRIGGER_TICK, "InputException",
     BASE),
    ("CIRCUIT_HIGH modify", lambda s: modify(resting(), price=circuit("upper", 10)(s))(s),
     limit_text("upper", rules.CIRCUIT_HIGH), "InputException", BASE),
    ("SLM_BARRED modify",
     modify(resting(**INDEX_OPTION, quantity=65, price=5.0, market_protection=-1),
            order_type="SL-M", trigger_price=400.0),
     rules.SLM_BARRED, "InputException", BASE),
    ("AMO_RELEASED", at(17, 0, lambda s: (
        lambda oid: (s.advance_to(s.now + timedelta(hours=16, minutes=15)),
                     s.cancel_order("amo", oid)))(resting(variety="amo")(s))),
     rules.AMO_RELEASED, "NetworkException", BASE),
    # --- GTT ---
    ("GTT_EQUAL_LAST", gtt("single", [1600.0], 1600.0, [LEG]), rules.GTT_EQUAL_LAST,
     "InputException", BASE),
    ("GTT_SECOND_BELOW", gtt("two-leg", [1500.0, 1550.0], 1600.0, [LEG, LEG]),
     rules.GTT_SECOND_BELOW, "InputException", BASE),
    ("GTT_FIRST_ABOVE", gtt("two-leg", [1650.0, 1700.0], 1600.0, [LEG, LEG]),
     rules.GTT_FIRST_ABOVE, "InputException", BASE),
    ("GTT_PRODUCT", gtt("single", [1500.0], 1600.0, [{**LEG, "product": "MIS"}]),
     rules.GTT_PRODUCT, "InputException", BASE),
    ("GTT_TICK", gtt("single", [1500.03], 1600.0, [LEG]), rules.GTT_TICK.format(tick="0.1"),
     "InputException", BASE),
    ("GTT BAD_PARAM type", gtt("three-leg", [1500.0], 1600.0, [LEG]),
     rules.BAD_PARAM.format(name="type"), "InputException", BASE),
    ("GTT BAD_PARAM trigger_values", gtt("two-leg", [1500.0], 1600.0, [LEG]),
     rules.BAD_PARAM.format(name="trigger_values"), "InputException", BASE),
    ("GTT BAD_QUANTITY", gtt("single", [1500.0], 1600.0, [{**LEG, "quantity": 0}]),
     rules.BAD_QUANTITY, "InputException", BASE),
    ("GTT_TOO_MANY", too_many_gtts, rules.GTT_TOO_MANY, "InputException", BASE),
    ("GTT_NOT_FOUND", lambda s: s.get_gtt(1), rules.GTT_NOT_FOUND, "InputException", BASE),
    ("GTT_NOT_FOUND deleted", lambda s: (
        lambda tid: (s.delete_gtt(tid), s.delete_gtt(tid)))(
            gtt("single", [1500.0], 1600.0, [LEG])(s)["trigger_id"]),
     rules.GTT_NOT_FOUND, "InputException", BASE),
    ("GTT_NOT_ACTIVE", disabled_gtt, rules.GTT_NOT_ACTIVE, "InputException", BASE),
    # --- alerts ---
    ("ALERT_TOO_MANY", too_many_alerts, rules.ALERT_TOO_MANY, "InputException", BASE),
    ("ALERT_NOT_FOUND", lambda s: s.get_alert("no-such-uuid"), rules.ALERT_NOT_FOUND,
     "InputException", BASE),
    ("ALERT name", lambda s: alert(s, name=""), rules.BAD_PARAM.format(name="name"),
     "InputException", BASE),
    ("ALERT type", lambda s: alert(s, type="twice"), rules.BAD_PARAM.format(name="type"),
     "InputException", BASE),
    ("ALERT lhs_tradingsymbol", lambda s: alert(s, lhs_tradingsymbol="NOPE"),
     rules.BAD_PARAM.format(name="lhs_tradingsymbol"), "InputException", BASE),
    ("ALERT lhs_attribute", lambda s: alert(s, lhs_attribute="Volume"),
     rules.BAD_PARAM.format(name="lhs_attribute"), "InputException", BASE),
    ("ALERT operator", lambda s: alert(s, operator="!="),
     rules.BAD_PARAM.format(name="operator"), "InputException", BASE),
    ("ALERT rhs_tradingsymbol", lambda s: alert(s, rhs_type="instrument", rhs_exchange="NSE",
                                                rhs_tradingsymbol="NOPE"),
     rules.BAD_PARAM.format(name="rhs_tradingsymbol"), "InputException", BASE),
    ("ALERT rhs_constant", lambda s: alert(s, rhs_constant="a lot"),
     rules.BAD_PARAM.format(name="rhs_constant"), "InputException", BASE),
    ("ALERT basket", lambda s: alert(s, basket="{not json"),
     rules.BAD_PARAM.format(name="basket"), "InputException", BASE),
    ("ATO_NEEDS_BASKET", lambda s: alert(s, type="ato", basket={"items": []}),
     rules.ATO_NEEDS_BASKET, "InputException", BASE),
]  # fmt: skip

# (rule, action, message): the order enters the book, then REJECTED with this status_message.
IN_THE_BOOK: list[tuple[str, Action, Any, str]] = [
    ("PRICE_TICK", place(price=1500.03), rules.PRICE_TICK, BASE),
    ("TRIGGER_TICK", place(transaction_type="SELL", order_type="SL", price=1400.0,
                           trigger_price=1401.03), rules.TRIGGER_TICK, BASE),
    ("LOT_MULTIPLE", place(**FUT, quantity=60, price=26000.0), rules.LOT_MULTIPLE.format(lot=65),
     BASE),
    ("SLM_BARRED NSE option", place(**INDEX_OPTION, quantity=65, order_type="SL-M", price=None,
                                    trigger_price=500.0, market_protection=-1),
     rules.SLM_BARRED, BASE),
    ("SLM_BARRED BSE", place(exchange="BSE", tradingsymbol="SBIN", order_type="SL-M", price=None,
                             trigger_price=1100.0, market_protection=2), rules.SLM_BARRED, BASE),
    ("INSUFFICIENT_FUNDS", place(quantity=400, price=1600.0),
     rules.INSUFFICIENT_FUNDS.format(required=640000.0, available=500000.0), BASE),
]  # fmt: skip


def _expected(message: Any, s: Simulation) -> str:
    return str(message(s)) if callable(message) else str(message)


@pytest.mark.parametrize(
    ("action", "message", "error_type", "text"),
    [pytest.param(a, m, e, t, id=rule) for rule, a, m, e, t in REFUSED],
)
def test_refused_before_the_book(action: Action, message: Any, error_type: str, text: str) -> None:
    s = sim(text)
    with pytest.raises(KiteConnectError) as info:
        action(s)
    assert info.value.message == _expected(message, s)
    assert str(info.value) == info.value.message
    assert info.value.error_type == error_type
    statuses = {rules.AMO_RELEASED: 504}  # a timeout, as staff report (comment 40302)
    assert info.value.status == statuses.get(
        info.value.message, 428 if info.value.message.endswith("at depository") else 400
    )


def test_a_refused_order_leaves_no_trace() -> None:
    s = sim()
    with pytest.raises(KiteConnectError):
        place(tag="my-tag")(s)
    with pytest.raises(KiteConnectError):
        place(price=circuit("upper", 10))(s)
    assert s.orders() == [] and s.trades() == []


def test_the_square_off_orders_say_why_and_cost_59_each() -> None:
    s = sim()
    place(product="MIS", quantity=10, price=round(ltp(s) + 10, 1))(s)
    s.advance_to(s.now.replace(hour=15, minute=21))
    closing = [o for o in s.orders() if o["placed_by"] == "ADMINSQF"]
    assert len(closing) == 1 and closing[0]["status_message"] == rules.SQUARE_OFF_MESSAGE
    assert s.margins("equity")["utilised"]["debits"] >= rules.SQUARE_OFF_CHARGE


@pytest.mark.parametrize(
    ("action", "message", "text"), [pytest.param(a, m, t, id=rule) for rule, a, m, t in IN_THE_BOOK]
)
def test_rejected_in_the_book(action: Action, message: Any, text: str) -> None:
    s = sim(text)
    oid = action(s)["order_id"]
    row = next(o for o in s.orders() if o["order_id"] == oid)
    assert row["status"] == "REJECTED"
    assert row["status_message"] == _expected(message, s)
    trail = [r["status"] for r in s.order_history(oid)]
    assert trail[:2] == ["PUT ORDER REQ RECEIVED", "VALIDATION PENDING"] and trail[-1] == "REJECTED"
    assert s.order_trades(oid) == [] and row["filled_quantity"] == 0


def test_every_rule_text_is_tested() -> None:
    """A text added to rules.py needs a case here."""
    texts = {
        name
        for name, value in vars(rules).items()
        if name.isupper() and isinstance(value, str) and not name.startswith("_")
    }
    source = Path(__file__).read_text("utf-8")
    named = set(re.findall(r"rules\.([A-Z_]+)", source))
    assert texts - named == set()


def test_an_rms_rejection_has_the_rms_text_raw() -> None:
    s = sim(BASE.replace("opening_balance: 500000", "opening_balance: 1000"))
    s.place_order("regular", "NSE", "INFY", "BUY", 10, "CNC", "LIMIT", price=1600.0)
    (row,) = [o for o in s.orders() if o["status"] == "REJECTED" and o["tradingsymbol"] == "INFY"]
    assert row["status_message_raw"] == rules.RMS_MARGIN_RAW.format(
        required=16000.0, available=1000.0, user_id="ZS0001"
    )
    assert row["status_message"] == rules.INSUFFICIENT_FUNDS.format(
        required=16000.0, available=1000.0
    )


def test_each_place_check_is_one_row_with_its_source() -> None:
    """Issue 41 §5: the place request's checks are rows (name, check, text, source), run in
    order; a request that breaks two gets the first one's text."""
    from kite_skills.sandbox.sim.order_rules import PLACE_RULES

    assert len({r.name for r in PLACE_RULES}) == len(PLACE_RULES)
    assert all(r.source for r in PLACE_RULES)
    s = sim()
    with pytest.raises(KiteConnectError) as info:  # a bad product and a bad quantity
        s.place_order("regular", "NSE", "INFY", "BUY", 0, "XYZ", "LIMIT", price=1.0)
    assert info.value.message == rules.BAD_PARAM.format(name="product")


def test_every_kite_rule_is_one_row_with_its_source_and_its_test() -> None:
    """Issue 41 §5: every Kite rule the simulation enforces is one row of order_rules (check,
    text, source, test). Each row has a source and names a case of this file that exists;
    each text of rules.py that a refusal carries is the text of exactly one row (a rule two
    calls share is one row in both calls' tables), and no row's text is another's."""
    rows = ALL_RULES
    assert len({r.name for r in rows}) == len(rows), "two rows share a name"
    cases = {
        "test_refused_before_the_book": {rule for rule, *_ in REFUSED},
        "test_rejected_in_the_book": {rule for rule, *_ in IN_THE_BOOK},
    }
    for rule in rows:
        assert rule.source.strip(), rule.name
        path, _, node = rule.test.partition("::")
        function, _, case = node.partition("[")
        assert path == "tests/sandbox/test_sim_rejections.py", rule.test
        assert callable(globals().get(function)), rule.test
        assert case.rstrip("]") in cases[function], rule.test
    texts = [r.text for r in rows]
    # GTT's `type` and an alert's `type`: two APIs' parameters, one wording.
    shared = {rules.BAD_PARAM.format(name="type"): 2}
    repeated = {t: texts.count(t) for t in texts if texts.count(t) > 1}
    assert repeated == shared, "two rows carry the same text"
    not_refusals = {"SQUARE_OFF_MESSAGE", "RMS_MARGIN_RAW"}  # a status message; a raw text
    for name, value in vars(rules).items():
        if not name.isupper() or not isinstance(value, str) or name in not_refusals:
            continue
        if name == "BAD_PARAM":  # one row per parameter, each its own text
            users = [t for t in texts if re.fullmatch(r"Invalid `\w+`\.", t)]
            assert len(users) >= 2, name
        else:
            assert texts.count(value) == 1, f"rules.{name}: the text of {texts.count(value)} rows"


def test_no_module_but_the_rows_refuses_with_a_rule_text() -> None:
    """The refusals are raised from the rows only: no other simulation module writes a rule
    text into an error (a new rule is a row, not a raise somewhere)."""
    sim_dir = Path(rules.__file__).parent
    refusal = re.compile(r"(input_error|order_error|KiteConnectError)\([^)]*rules\.")
    for module in sim_dir.glob("*.py"):
        if module.name == "order_rules.py":
            continue
        assert not refusal.search(module.read_text("utf-8")), module.name
