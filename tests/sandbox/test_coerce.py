"""How the Kite MCP server reads arguments (mcp/common.go): SafeAssert* never fail,
ValidateRequired's texts, and from/limit pagination with its envelope only when limit > 0."""

from __future__ import annotations

import json

import pytest

from kite_skills.sandbox import coerce as c
from kite_skills.sandbox import gotypes as g


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, "dflt"), ("x", "x"), (5, "5"), (5.0, "5"), (2.5, "2.5"), (True, "true"),
     (["a", "b"], "[a b]"), ({"b": 1, "a": "x"}, "map[a:x b:1]")],
)  # fmt: skip
def test_safe_assert_string_formats_any_value_like_go(value: object, expected: str) -> None:
    assert c.s(value, "dflt") == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, 1), ("10", 1), (True, 1), (10, 10), (10.9, 10), (-2.5, -2), ([1], 1),
     (1e300, -(2**63)), (float("inf"), -(2**63)), (10**400, -(2**63))],
)  # fmt: skip
def test_safe_assert_int_truncates_numbers_and_defaults_the_rest(
    value: object, expected: int
) -> None:
    assert c.i(value, 1) == expected


def test_safe_assert_float_and_bool() -> None:
    assert c.f("1.5", 0.0) == 0.0 and c.f(2, 0.0) == 2.0 and c.f(10**400, 7.0) == 7.0
    assert c.b("yes") is True and c.b("OFF", True) is False and c.b("maybe", True) is True
    assert c.b(1) is False  # a number is neither a bool nor a word


def test_string_arrays_format_elements_and_drop_empty_ones() -> None:
    assert c.strings("NSE:INFY") is None
    assert c.strings(["NSE:INFY", "", 5, None, "BSE:TCS"]) == ["NSE:INFY", "5", "BSE:TCS"]


def test_validate_required_texts_and_order() -> None:
    assert c.required({}, "order_id") == "parameter 'order_id': is required"
    assert c.required({"order_id": None}, "order_id") == "parameter 'order_id': is required"
    assert c.required({"order_id": ""}, "order_id") == "parameter 'order_id': cannot be empty"
    assert c.required({"i": []}, "i") == "parameter 'i': cannot be empty"
    assert c.required({"q": 0, "f": False}, "q", "f") is None  # 0 and false pass
    assert c.required({"b": ""}, "a", "b") == "parameter 'a': is required"  # first wins


ROWS = list(range(5))


def test_pagination_without_limit_is_a_bare_offset_slice() -> None:
    assert c.paginate({}, ROWS) == ROWS
    assert c.paginate({"from": 3}, ROWS) == [3, 4]
    assert c.paginate({"from": 9, "limit": 0}, ROWS) == []


def test_pagination_envelope_echoes_from_and_limit_as_given() -> None:
    assert c.paginate({"from": 1, "limit": 2}, ROWS) == {
        "data": [1, 2],
        "pagination": {"from": 1, "limit": 2, "total": 5, "has_more": True, "returned": 2},
    }
    # A negative from slices from 0 but is echoed, and has_more adds it as given (the Go
    # code's arithmetic: -3 + 5 < 5).
    assert c.paginate({"from": -3, "limit": 10}, ROWS) == {
        "data": ROWS,
        "pagination": {"from": -3, "limit": 10, "total": 5, "has_more": True, "returned": 5},
    }
    assert c.paginate({"from": "1", "limit": "2"}, ROWS) == ROWS  # strings read as 0


def test_go_structs_carry_zero_values_in_struct_order() -> None:
    order = g.shape(g.ORDER, {"order_id": "1", "quantity": 10.0, "price": 1500.5})
    assert list(order)[:3] == ["account_id", "placed_by", "order_id"]
    assert order["status_message"] == "" and order["meta"] is None and order["tags"] is None
    assert order["quantity"] == 10 and order["price"] == 1500.5
    assert order["order_timestamp"] == "0001-01-01T00:00:00Z"
    assert g.shape(g.ORDER, {"order_timestamp": "2026-12-01 10:15:02"})["order_timestamp"] == (
        "2026-12-01T10:15:02+05:30"
    )
    quote = g.shape(g.QUOTE, {"last_price": 10})
    assert len(quote["depth"]["buy"]) == 5 and quote["depth"]["buy"][0] == {
        "price": 0,
        "quantity": 0,
        "orders": 0,
    }


def test_marshal_is_go_json_marshal() -> None:
    text = g.marshal({"tag": "<a&b>", "n": 1500, "bad": "\ud800"})
    assert text == '{"tag":"\\u003ca\\u0026b\\u003e","n":1500,"bad":"\ufffd"}'
    assert json.loads(text)["tag"] == "<a&b>"


def test_pointer_and_omitempty_fields_appear_only_when_set() -> None:
    assert "basket" not in g.shape(g.ALERT, {"uuid": "u"})
    alert = g.shape(g.ALERT, {"basket": {"items": [{"params": {"quantity": 2}, "id": 0}]}})
    item = alert["basket"]["items"][0]
    assert "id" not in item and "instrument_token" not in item
    assert item["params"]["quantity"] == 2 and item["params"]["tags"] is None
    assert "gtt" not in item["params"]
