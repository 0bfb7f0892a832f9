"""Every bad call answered as the real server answers it, before any Kite call: mode
dispatch, required parameters, trigger types, dates, alert rules (behaviour.md §3)."""

from __future__ import annotations

from typing import Any

import pytest

from kite_skills.sandbox import handlers
from kite_skills.sandbox.sim.order_request import OrderRequest

GROUPED = handlers.grouped(lambda: None).handlers  # type: ignore[arg-type,return-value]
LEGACY = handlers.legacy().handlers
OLDEST = handlers.legacy_oldest().handlers


class NoKite:
    """Any Kite Connect call fails the test: these calls must be refused before one."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the handler called Kite Connect's {name}")


def call(table: Any, tool: str, **args: Any) -> handlers.Result:
    return table[tool](NoKite(), args)


@pytest.mark.parametrize(
    ("tool", "modes"),
    [("portfolio", "profile, margins, holdings, positions"),
     ("orders", "list, history, trades, all_trades, place, modify, cancel"),
     ("gtt", "list, place, modify, delete"),
     ("market", "quote, ltp, ohlc, historical, search"),
     ("alerts", "get, create, modify, delete"),
     ("mutual_funds", "holdings"),
     ("session", "status, logout")],
)  # fmt: skip
@pytest.mark.parametrize("mode", [None, "", "invalid", 5, ["list"]])
def test_a_missing_or_unknown_mode_is_named(tool: str, modes: str, mode: object) -> None:
    args = {} if mode is None else {"mode": mode}
    result = GROUPED[tool](NoKite(), args)
    assert result.is_error and result.text == f"Invalid mode. Must be one of: {modes}"


@pytest.mark.parametrize(
    ("tool", "args", "text"),
    [
        ("orders", {"mode": "history"}, "parameter 'order_id': is required"),
        ("orders", {"mode": "trades", "order_id": ""}, "parameter 'order_id': cannot be empty"),
        ("orders", {"mode": "place", "exchange": "NSE"},
         "parameter 'tradingsymbol': is required"),
        ("orders", {"mode": "modify", "order_id": "1"}, "parameter 'order_type': is required"),
        ("orders", {"mode": "cancel"}, "parameter 'order_id': is required"),
        ("gtt", {"mode": "delete"}, "parameter 'trigger_id': is required"),
        ("gtt", {"mode": "place", "exchange": "NSE", "tradingsymbol": "INFY", "last_price": 1,
                 "transaction_type": "BUY", "product": "CNC", "trigger_type": "oco"},
         "parameter 'trigger_type': must be 'single' or 'two-leg'"),
        ("market", {"mode": "quote", "instruments": []},
         "parameter 'instruments': cannot be empty"),
        ("market", {"mode": "ltp", "instruments": ["", None]},
         "At least one instrument must be specified"),
        ("market", {"mode": "historical", "instrument_token": 1, "from_date": "2026-12-01",
                    "to_date": "2026-12-02 00:00:00", "interval": "day"},
         "Failed to parse from_date, use format YYYY-MM-DD HH:MM:SS"),
        ("alerts", {"mode": "modify"}, "UUID is required for modify mode"),
        ("alerts", {"mode": "delete", "uuids": [""]},
         "At least one UUID is required for delete mode"),
    ],
)  # fmt: skip
def test_grouped_validation_texts(tool: str, args: dict[str, Any], text: str) -> None:
    result = GROUPED[tool](NoKite(), args)
    assert (result.is_error, result.text) == (True, text)


ALERT = {
    "mode": "create",
    "name": "INFY above 1600",
    "alert_type": "simple",
    "lhs_exchange": "NSE",
    "lhs_tradingsymbol": "INFY",
    "lhs_attribute": "LastTradedPrice",
    "operator": ">=",
    "rhs_type": "constant",
}


@pytest.mark.parametrize(
    ("change", "text"),
    [
        ({"name": ""}, "parameter 'name': is required"),
        ({"operator": None}, "parameter 'operator': is required"),
        ({}, "parameter 'rhs_constant': is required when rhs_type=constant"),
        ({"rhs_type": "instrument"},
         "parameter 'rhs_exchange': is required when rhs_type=instrument"),
        ({"rhs_type": "both"}, "parameter 'rhs_type': must be 'constant' or 'instrument'"),
        ({"rhs_constant": 1600, "alert_type": "ato"},
         "parameter 'basket': is required when alert_type=ato"),
        ({"rhs_constant": 1600, "alert_type": "ato", "basket": "{not json"},
         "parameter 'basket': must be valid JSON"),
        ({"rhs_constant": 1600, "alert_type": "ato", "basket": '{"items": []}'},
         "parameter 'basket': must contain at least one basket item when alert_type=ato"),
    ],
)  # fmt: skip
def test_alert_rules(change: dict[str, Any], text: str) -> None:
    args = {**ALERT, **change}
    assert call(GROUPED, "alerts", **{k: v for k, v in args.items() if v is not None}).text == text


def test_a_bad_basket_on_a_simple_alert_fails_when_the_parameters_are_built() -> None:
    args = {**ALERT, "rhs_constant": 1600, "basket": "{oops"}
    text = call(GROUPED, "alerts", **args).text
    assert text.startswith("Failed to build alert parameters: failed to parse basket JSON: ")
    assert call(LEGACY, "alerts", **args).text == "parameter 'basket': must be valid JSON"


def test_legacy_alerts_take_an_ato_without_a_basket_to_kite() -> None:
    """Generation b checks the basket only when one is given."""
    args = {**ALERT, "rhs_constant": 1600, "alert_type": "ato"}
    with pytest.raises(AssertionError, match="create_alert"):
        call(LEGACY, "alerts", **args)


def test_legacy_tools_require_variety_and_name_trigger_types_their_way() -> None:
    order = {"exchange": "NSE", "tradingsymbol": "INFY", "transaction_type": "BUY",
             "quantity": 1, "product": "CNC", "order_type": "MARKET"}  # fmt: skip
    for table in (LEGACY, OLDEST):
        assert call(table, "place_order", **order).text == "parameter 'variety': is required"
        assert call(table, "modify_order", order_id="1", order_type="LIMIT").text == (
            "parameter 'variety': is required"
        )
        gtt = {"exchange": "NSE", "tradingsymbol": "INFY", "last_price": 1,
               "transaction_type": "BUY", "product": "CNC", "trigger_type": "oco"}  # fmt: skip
        assert call(table, "place_gtt_order", **gtt).text == (
            "Invalid trigger_type. Must be 'single' or 'two-leg'"
        )
    assert call(OLDEST, "search_instruments").text == "parameter 'query': is required"


def test_a_string_quantity_passes_validation_and_reads_as_the_default() -> None:
    """ValidateRequired accepts "10"; SafeAssertInt then gives 1 (behaviour.md §2)."""
    seen: dict[str, Any] = {}

    class Kite:  # what the handler hands the simulation: one typed order request
        def place(self, request: OrderRequest) -> dict[str, str]:
            seen.update(vars(request))
            return {"order_id": "260101000000001"}

    result = GROUPED["orders"](
        Kite(),
        {"mode": "place", "exchange": "NSE", "tradingsymbol": "INFY", "transaction_type": "BUY",
         "quantity": "10", "product": "CNC", "order_type": "MARKET", "market_protection": 0},
    )  # fmt: skip
    assert result.text == '{"order_id":"260101000000001"}'
    assert seen["quantity"] == 1 and seen["variety"] == "regular"
    assert seen["market_protection"] is None  # 0 is omitted on the wire (omitempty)
