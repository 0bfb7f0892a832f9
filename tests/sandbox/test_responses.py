"""Issue 41 §5: the simulation's answers are typed (sim/responses.py), each TypedDict the REST
object gokiteconnect decodes. For each response type: the value the simulation answers has
exactly the type's keys, nested ones too (an index's quote without its trade fields, an ATO
alert with its basket), and the type's keys are exactly the kiteconnect-mocks fixture's
(zerodha/kiteconnect-mocks@c7a81238; only the key names are transcribed here, the fixtures
have no licence). The adapter's Go structs are checked against upstream in test_handlers.py
and test_fidelity.py; this is the layer under them."""

from __future__ import annotations

import types
import typing
from typing import Any, NotRequired, get_args, get_origin, get_type_hints

import pytest

from kite_skills.sandbox.sim import Simulation, load_scenario, parse_scenario, responses

# The kiteconnect-mocks fixtures' keys (shapes.json in the project's shared reference).
MOCK_KEYS: dict[str, set[str]] = {
    "profile.json": {
        "user_id", "user_type", "email", "user_name", "user_shortname", "broker", "exchanges",
        "products", "order_types", "avatar_url", "meta",
    },
    "margins.json": {"equity", "commodity"},
    "margins_equity.json": {"enabled", "net", "available", "utilised"},
    "holdings.json": {
        "tradingsymbol", "exchange", "instrument_token", "isin", "product", "price", "quantity",
        "used_quantity", "t1_quantity", "realised_quantity", "authorised_quantity",
        "authorised_date", "authorisation", "opening_quantity", "short_quantity",
        "collateral_quantity", "collateral_type", "discrepancy", "average_price", "last_price",
        "close_price", "pnl", "day_change", "day_change_percentage", "mtf",
    },
    "holdings_compact.json": {
        "exchange", "tradingsymbol", "instrument_token", "t1_quantity", "quantity",
    },
    "holdings_summary.json": {
        "total_pnl", "total_pnl_percent", "today_pnl", "today_pnl_percent", "invested_amount",
        "current_value",
    },
    "positions.json": {
        "tradingsymbol", "exchange", "instrument_token", "product", "quantity",
        "overnight_quantity", "multiplier", "average_price", "close_price", "last_price", "value",
        "pnl", "m2m", "unrealised", "realised", "buy_quantity", "buy_price", "buy_value",
        "buy_m2m", "sell_quantity", "sell_price", "sell_value", "sell_m2m", "day_buy_quantity",
        "day_buy_price", "day_buy_value", "day_sell_quantity", "day_sell_price", "day_sell_value",
    },
    "ltp.json": {"instrument_token", "last_price"},
    "ohlc.json": {"instrument_token", "last_price", "ohlc"},
    "quote.json": {
        "instrument_token", "timestamp", "last_trade_time", "last_price", "last_quantity",
        "buy_quantity", "sell_quantity", "volume", "average_price", "oi", "oi_day_high",
        "oi_day_low", "net_change", "lower_circuit_limit", "upper_circuit_limit", "ohlc", "depth",
    },
    "gtt_get_order.json": {
        "id", "user_id", "parent_trigger", "type", "created_at", "updated_at", "expires_at",
        "status", "condition", "orders", "meta",
    },
    "alerts_get_one.json": {
        "type", "user_id", "uuid", "name", "status", "disabled_reason", "lhs_attribute",
        "lhs_exchange", "lhs_tradingsymbol", "operator", "rhs_type", "rhs_attribute",
        "rhs_exchange", "rhs_tradingsymbol", "rhs_constant", "alert_count", "created_at",
        "updated_at",
    },
    "order_margins.json": {
        "type", "tradingsymbol", "exchange", "span", "exposure", "option_premium", "additional",
        "bo", "cash", "var", "pnl", "leverage", "charges", "total",
    },
    "basket_margins.json": {"initial", "final", "orders", "charges"},
    "mf_holdings.json": {
        "folio", "average_price", "last_price", "last_price_date", "pledged_quantity", "fund",
        "tradingsymbol", "pnl", "quantity",
    },
}  # fmt: skip

TYPES: list[tuple[str, Any]] = [
    ("profile.json", responses.Profile),
    ("margins.json", responses.AllMargins),
    ("margins_equity.json", responses.Margins),
    ("holdings.json", responses.HoldingRow),
    ("holdings_compact.json", responses.HoldingCompact),
    ("holdings_summary.json", responses.HoldingsSummary),
    ("positions.json", responses.PositionRow),
    ("ltp.json", responses.QuoteLtp),
    ("ohlc.json", responses.QuoteOhlc),
    ("quote.json", responses.Quote),
    ("gtt_get_order.json", responses.GttRow),
    ("alerts_get_one.json", responses.AlertRow),
    ("order_margins.json", responses.OrderMargins),
    ("basket_margins.json", responses.BasketMargins),
    ("mf_holdings.json", responses.MfHolding),
]


def _typed_dict(hint: Any) -> Any | None:
    """The TypedDict ``hint`` is (or holds, as ``X | None``), else None."""
    if isinstance(hint, type) and typing.is_typeddict(hint):
        return hint
    if get_origin(hint) in (typing.Union, types.UnionType):
        found = [a for a in get_args(hint) if a is not type(None)]
        return _typed_dict(found[0]) if len(found) == 1 else None
    return None


def assert_typed(value: Any, kind: Any, where: str = "") -> None:
    """``value`` has every required key of the TypedDict ``kind``, no key it does not name,
    and each nested value of a TypedDict type (or a list of one) the same, recursively."""
    assert isinstance(value, dict), where
    hints = get_type_hints(kind, include_extras=True)
    assert set(value) <= set(hints), f"{where}: keys the type lacks {set(value) - set(hints)}"
    # (``__required_keys__`` misses NotRequired in postponed annotations before 3.12)
    required = {k for k, h in hints.items() if get_origin(h) is not NotRequired}
    missing = required - set(value)
    assert not missing, f"{where}: {kind.__name__} keys missing {missing}"
    for key, hint in hints.items():
        if get_origin(hint) is NotRequired:
            hint = get_args(hint)[0]
        if key not in value:
            continue
        inner = _typed_dict(hint)
        if inner is not None and value[key] is not None:
            assert_typed(value[key], inner, f"{where}.{key}")
        elif get_origin(hint) is list:
            item = _typed_dict(get_args(hint)[0])
            for n, row in enumerate(value[key] if item is not None else ()):
                assert_typed(row, item, f"{where}.{key}[{n}]")


ACCOUNT = """
clock: "2026-12-02 11:30:00"
funds: {equity: {opening_balance: 5000000}}
holdings:
  - {exchange: NSE, tradingsymbol: INFY, quantity: 120, t1_quantity: 20, average_price: 1480}
positions:
  - {exchange: NFO, tradingsymbol: NIFTY26DECFUT, product: NRML, quantity: 65, average_price: 25890}
market:
  NSE:INFY:
    path:
      - ["11:31", 1610.0]
      - ["11:40", 1560.0]
"""
LEG = {"transaction_type": "SELL", "quantity": 10, "product": "CNC"}


@pytest.fixture(scope="module")
def sim() -> Simulation:
    """An account after a fill (a Day position row), a fired GTT (a leg's result) and an ATO
    alert (its basket)."""
    s = Simulation(parse_scenario(ACCOUNT, "responses.yaml"))
    s.advance_to(s.now.replace(minute=32))
    s.place_order("regular", "NSE", "INFY", "BUY", 1, "CNC", "LIMIT", price=1620.0)
    s.place_gtt("two-leg", "INFY", "NSE", [1570.0, 1660.0], 1610.0, [
        {**LEG, "price": 1565.0}, {**LEG, "price": 1655.0},
    ])  # fmt: skip
    s.create_alert(
        name="buy on a dip", type="ato", lhs_exchange="NSE", lhs_tradingsymbol="INFY",
        lhs_attribute="LastTradedPrice", operator="<=", rhs_type="constant", rhs_constant=1000,
        basket={"name": "dip", "type": "alert", "tags": [], "items": [{
            "type": "", "tradingsymbol": "INFY", "exchange": "NSE", "weight": 0,
            "params": {"transaction_type": "BUY", "product": "CNC", "order_type": "LIMIT",
                       "quantity": 1, "price": 1000}}]},
    )  # fmt: skip
    s.advance_to(s.now.replace(minute=45))
    return s


@pytest.mark.parametrize(("fixture", "kind"), TYPES, ids=[f for f, _ in TYPES])
def test_each_response_type_has_the_fixtures_keys(fixture: str, kind: Any) -> None:
    assert set(get_type_hints(kind)) - {"basket"} == MOCK_KEYS[fixture]


def test_each_answer_has_its_types_keys(sim: Simulation) -> None:
    """What the simulation answers, each against its type (and so the fixture's keys)."""
    assert_typed(sim.profile(), responses.Profile, "profile")
    assert_typed(sim.margins(), responses.AllMargins, "margins")
    assert_typed(sim.margins("equity"), responses.Margins, "margins equity")
    holdings = sim.holdings()
    assert holdings
    for row in holdings:
        assert_typed(row, responses.HoldingRow, "holdings")
    for compact in sim.holdings_compact():
        assert_typed(compact, responses.HoldingCompact, "holdings compact")
    assert_typed(sim.holdings_summary(), responses.HoldingsSummary, "holdings summary")
    positions = sim.positions()
    assert_typed(positions, responses.Positions, "positions")
    assert positions["day"] and positions["net"]
    for key, quote in sim.quote("NSE:INFY", "NFO:NIFTY26DECFUT", "NSE:NIFTY 50").items():
        assert_typed(quote, responses.Quote, key)
    index = sim.quote("NSE:NIFTY 50")["NSE:NIFTY 50"]
    assert "depth" not in index and "last_trade_time" not in index
    assert "depth" in sim.quote("NSE:INFY")["NSE:INFY"]
    assert_typed(sim.ohlc("NSE:INFY")["NSE:INFY"], responses.QuoteOhlc, "ohlc")
    assert_typed(sim.ltp("NSE:INFY")["NSE:INFY"], responses.QuoteLtp, "ltp")
    gtts = sim.get_gtts()
    assert any(leg["result"] is not None for g in gtts for leg in g["orders"]), "none fired"
    for gtt in gtts:
        assert_typed(gtt, responses.GttRow, f"GTT {gtt['id']}")
    alerts = sim.get_alerts()
    assert any("basket" in a for a in alerts)
    for alert in alerts:
        assert_typed(alert, responses.AlertRow, alert["name"])
    order = {
        "exchange": "NSE", "tradingsymbol": "INFY", "transaction_type": "BUY",
        "variety": "regular", "product": "CNC", "order_type": "LIMIT", "quantity": 1,
        "price": 1600.0,
    }  # fmt: skip
    (margin,) = sim.order_margins([order])
    assert_typed(margin, responses.OrderMargins, "order margins")
    basket = sim.basket_order_margins([order, {**order, "tradingsymbol": "NIFTY26DECFUT",
                                               "exchange": "NFO", "product": "NRML"}])  # fmt: skip
    assert_typed(basket, responses.BasketMargins, "basket margins")
    assert_typed(basket["initial"], responses.BasketTotal, "basket margins initial")
    token = sim.engine.instrument("NFO", "NIFTY26DECFUT").instrument_token
    candles = sim.historical_data(token, "2026-12-02 09:15:00", "2026-12-02 11:45:00", "minute",
                                  oi=True)  # fmt: skip
    assert candles and all("oi" in c for c in candles)
    for candle in candles:
        assert_typed(candle, responses.Candle, f"candle {candle['date']}")


def test_a_mutual_fund_holding_has_its_types_keys() -> None:
    funds = Simulation(load_scenario("default")).mf_holdings()
    assert funds
    for row in funds:
        assert_typed(row, responses.MfHolding, row["tradingsymbol"])


def test_a_key_the_type_does_not_name_is_caught() -> None:
    """The check itself: one key too many, one missing, one nested missing."""
    row: dict[str, Any] = {"instrument_token": 1, "last_price": 2.0}
    assert_typed(row, responses.QuoteLtp)
    with pytest.raises(AssertionError):
        assert_typed({**row, "volume": 3}, responses.QuoteLtp)
    with pytest.raises(AssertionError):
        assert_typed({"instrument_token": 1}, responses.QuoteLtp)
    ohlc = {"open": 1.0, "high": 1.0, "low": 1.0}
    with pytest.raises(AssertionError):
        assert_typed({**row, "ohlc": ohlc}, responses.QuoteOhlc)
