"""The handlers over the real simulation, in-process: what the Kite MCP server's Go handlers
make of Kite Connect's answers (behaviour.md §1, §5-§9): Go struct shapes, Day then Net
position rows, pagination envelopes only when limit > 0, search shapes, the defaults sent on
place and modify, and Kite refusals as the server's own texts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kite_skills.sandbox import gotypes as g
from kite_skills.sandbox import handlers, sim


@pytest.fixture
def kite() -> sim.Simulation:
    return sim.Simulation(sim.load_scenario("default"))


def call(kite: sim.Simulation, tool: str, generation: str = "grouped", **args: Any) -> Any:
    table = handlers.generation(generation, lambda: kite.now).handlers
    result = table[tool](kite, args)
    assert not result.is_error, result
    return json.loads(result.text)


def refused(kite: sim.Simulation, tool: str, **args: Any) -> handlers.Result:
    result = handlers.grouped(lambda: kite.now).handlers[tool](kite, args)
    assert result.is_error, result
    return result


def test_positions_are_day_rows_then_net_rows_unlabelled(kite: sim.Simulation) -> None:
    both = kite.positions()
    assert both["day"] or both["net"]
    rows = call(kite, "portfolio", mode="positions")
    assert isinstance(rows, list) and len(rows) == len(both["day"]) + len(both["net"])
    expected = [r["tradingsymbol"] for r in both["day"]] + [r["tradingsymbol"] for r in both["net"]]
    assert [r["tradingsymbol"] for r in rows] == expected
    assert all(list(r) == [name for name, _ in g.POSITION] for r in rows)


def test_an_order_placed_today_shows_in_both_day_and_net(kite: sim.Simulation) -> None:
    placed = call(kite, "orders", mode="place", exchange="NSE", tradingsymbol="ITC",
                  transaction_type="BUY", quantity=1, product="CNC", order_type="MARKET",
                  market_protection=-1)  # fmt: skip
    kite.advance_to(kite.now.replace(minute=kite.now.minute + 1))
    history = call(kite, "orders", mode="history", order_id=placed["order_id"])
    assert history[-1]["status"] == "COMPLETE"
    rows = call(kite, "portfolio", mode="positions")
    assert [r["tradingsymbol"] for r in rows].count("ITC") == 2  # once as Day, once as Net


@pytest.mark.parametrize(
    ("tool", "mode", "method"),
    [("orders", "list", "orders"), ("orders", "all_trades", "trades"), ("gtt", "list", "get_gtts"),
     ("portfolio", "holdings", "holdings")],
)  # fmt: skip
def test_pagination_envelope_only_when_limit_is_positive(
    kite: sim.Simulation, tool: str, mode: str, method: str
) -> None:
    total = len(getattr(kite, method)())
    bare = call(kite, tool, mode=mode)
    assert isinstance(bare, list) and len(bare) == total
    assert call(kite, tool, mode=mode, **{"from": 1}) == bare[1:]
    assert call(kite, tool, mode=mode, limit=0) == bare
    paged = call(kite, tool, mode=mode, **{"from": 1, "limit": 1})
    assert list(paged) == ["data", "pagination"]
    assert paged["data"] == bare[1:2]
    assert paged["pagination"] == {"from": 1, "limit": 1, "total": total,
                                   "has_more": total > 2, "returned": len(bare[1:2])}  # fmt: skip


def test_mutual_fund_holdings_are_paginated_in_legacy_only(kite: sim.Simulation) -> None:
    assert isinstance(call(kite, "mutual_funds", mode="holdings", limit=1), list)
    paged = call(kite, "get_mf_holdings", "legacy", limit=1)
    assert paged["pagination"]["total"] == len(kite.mf_holdings())


def test_holdings_summary_and_compact(kite: sim.Simulation) -> None:
    summary = call(kite, "portfolio", mode="holdings", type="summary", limit=1)
    assert list(summary) == [name for name, _ in g.HOLDING_SUMMARY]  # never paginated
    compact = call(kite, "portfolio", mode="holdings", type="compact")
    assert all(list(r) == [n for n, _ in g.HOLDING_COMPACT] for r in compact)
    infy = next(r for r in compact if r["tradingsymbol"] == "INFY")
    assert infy["quantity"] == 120 and infy["t1_quantity"] == 20
    full = call(kite, "portfolio", mode="holdings", type="unknown-type")
    assert "authorised_quantity" in full[0] and "mtf" in full[0]


def test_search_is_compact_rows_with_meta(kite: sim.Simulation) -> None:
    """Rows and the answer are Go maps (market_tool.go in d1c5e22): keys come out sorted."""
    found = call(kite, "market", mode="search", query="INFY")
    assert list(found) == ["data", "meta"]
    assert found["meta"] == {"instrument_data_source": "bod_instruments",
                             "live_quote_enriched": False}  # fmt: skip
    row = next(r for r in found["data"] if r["id"] == "NSE:INFY")
    assert list(row) == ["active", "exchange", "id", "instrument_token", "instrument_type",
                         "lot_size", "name", "segment", "tradingsymbol"]  # fmt: skip
    assert not {"expiry_date", "strike", "tick_size"} & set(row)
    paged = call(kite, "market", mode="search", query="INFY", limit=1)
    assert list(paged) == ["data", "meta", "pagination"]
    assert list(paged["pagination"]) == ["from", "limit", "total", "has_more", "returned"]
    other = refused(kite, "market", mode="search", search_mode="by_magic")
    assert other.text == "parameter 'query': is required"  # the switch's default is search
    empty = call(kite, "market", mode="search", query="NO SUCH THING", include_live_quote=True)
    assert empty["data"] == [] and empty["meta"]["live_quote_enriched"] is True


def test_search_full_rows_carry_expiry_strike_and_tick(kite: sim.Simulation) -> None:
    found = call(kite, "market", mode="search", query="NIFTY", filter_on="underlying",
                 verbosity="full")  # fmt: skip
    assert found["data"], "the master has NIFTY derivatives"
    assert all(r["exchange"] == "NFO" and r["name"] == "NIFTY" for r in found["data"])
    row = found["data"][0]
    assert row["expiry_date"] and row["tick_size"] > 0 and "strike" in row
    live = call(kite, "market", mode="search", search_mode="get_by_id", id="NSE:INFY",
                include_live_quote=True)  # fmt: skip
    assert live["meta"]["live_quote_enriched"] is True
    assert live["data"][0]["last_price"] > 0 and "quote_timestamp" in live["data"][0]
    miss = refused(kite, "market", mode="search", search_mode="get_by_id", id="NSE:NOPE")
    assert miss.text == "Instrument not found"


def test_legacy_search_is_a_bare_array_and_the_oldest_full_objects(kite: sim.Simulation) -> None:
    legacy = call(kite, "search_instruments", "legacy", query="INFY")
    assert isinstance(legacy, list) and "expiry_date" not in legacy[0]
    oldest = call(kite, "search_instruments", "legacy-oldest", query="INFY")
    assert isinstance(oldest, list) and "expiry_date" in oldest[0] and "isin" in oldest[0]


def open_order(kite: sim.Simulation) -> str:
    """A BUY LIMIT far below the market: it stays OPEN."""
    quote = kite.ltp("NSE:INFY")["NSE:INFY"]["last_price"]
    tick = kite.instrument_facts("NSE", "INFY").tick_size
    price = round(quote * 0.9 / tick) * tick
    placed = call(kite, "orders", mode="place", exchange="NSE", tradingsymbol="INFY",
                  transaction_type="BUY", quantity=10, product="CNC", order_type="LIMIT",
                  price=round(price, 2))  # fmt: skip
    return str(placed["order_id"])


def test_modify_without_quantity_sends_quantity_1(kite: sim.Simulation) -> None:
    order_id = open_order(kite)
    assert call(kite, "orders", mode="modify", order_id=order_id, order_type="LIMIT",
                price=kite.order_history(order_id)[-1]["price"], market_protection=5,
                exchange="BSE") == {"order_id": order_id}  # fmt: skip
    last = kite.order_history(order_id)[-1]
    assert last["quantity"] == 1  # the Go handler's default, sent though not asked for
    assert last["exchange"] == "NSE" and last["market_protection"] == 0  # never forwarded


def test_market_protection_is_read_on_place_only(kite: sim.Simulation) -> None:
    market = {"exchange": "NSE", "tradingsymbol": "ITC", "transaction_type": "BUY",
              "quantity": 1, "product": "CNC", "order_type": "MARKET"}  # fmt: skip
    result = refused(kite, "orders", mode="place", **market)
    assert result.text == "Failed to place order" and result.kite_error  # Kite said why
    assert call(kite, "orders", mode="place", market_protection=-1, **market)["order_id"]
    # the oldest generation has no market_protection: a MARKET order cannot be protected
    oldest = handlers.legacy_oldest().handlers["place_order"]
    again = oldest(kite, {"variety": "regular", "market_protection": -1, **market})
    assert again.is_error and again.text == "Failed to place order"


def test_cancel_defaults_to_regular_and_answers_the_order_id(kite: sim.Simulation) -> None:
    order_id = open_order(kite)
    assert call(kite, "orders", mode="cancel", order_id=order_id) == {"order_id": order_id}
    unknown = refused(kite, "orders", mode="cancel", order_id="1")
    assert unknown.text == "Failed to cancel order"


def test_gtt_place_builds_limit_legs(kite: sim.Simulation) -> None:
    ltp = kite.ltp("NSE:INFY")["NSE:INFY"]["last_price"]
    placed = call(kite, "gtt", mode="place", exchange="NSE", tradingsymbol="INFY",
                  last_price=ltp, transaction_type="SELL", product="CNC", trigger_type="two-leg",
                  lower_trigger_value=round(ltp * 0.9, 1), lower_quantity=5,
                  lower_limit_price=round(ltp * 0.9, 1), upper_trigger_value=round(ltp * 1.1, 1),
                  upper_quantity=5, upper_limit_price=round(ltp * 1.1, 1))  # fmt: skip
    assert list(placed) == ["trigger_id"]
    gtt = next(x for x in call(kite, "gtt", mode="list") if x["id"] == placed["trigger_id"])
    assert [o["order_type"] for o in gtt["orders"]] == ["LIMIT", "LIMIT"]
    assert gtt["condition"]["trigger_values"][0] < gtt["condition"]["trigger_values"][1]
    assert call(kite, "gtt", mode="delete", trigger_id=placed["trigger_id"]) == placed


def test_alerts_wrap_results_and_name_kite_reasons(kite: sim.Simulation) -> None:
    listed = call(kite, "alerts", mode="get")
    assert list(listed) == ["alerts"] and listed["alerts"]
    uuid = listed["alerts"][0]["uuid"]
    one = call(kite, "alerts", mode="get", uuids=[uuid], history=True)
    assert list(one) == ["alert", "history"]
    gone = call(kite, "alerts", mode="delete", uuids=[uuid])
    assert gone == {"deleted_count": 1, "deleted_uuids": [uuid], "success": True}
    assert list(gone) == ["deleted_count", "deleted_uuids", "success"]  # a Go map: sorted
    assert call(kite, "alerts", mode="get", uuids=[uuid, "other"]) == {"alerts": None}
    missing = refused(kite, "alerts", mode="get", uuids=[uuid])
    assert missing.text.startswith(f"Failed to get alert {uuid}: ")


def test_session_and_login_say_signed_in(kite: sim.Simulation) -> None:
    status = call(kite, "session", mode="status")
    assert status["authenticated"] is True and status["status"] == "authenticated"
    login = handlers.legacy().handlers["login"](kite, {})
    assert login.text == (
        f"You are already logged in as {kite.profile()['user_name']}. "
        "There is no need to log in again."
    )


def test_market_data_as_go_maps_and_candles(kite: sim.Simulation) -> None:
    quote = call(kite, "market", mode="quote", instruments=["NSE:INFY", "NSE:ITC"])
    assert list(quote) == ["NSE:INFY", "NSE:ITC"]  # Go sorts map keys
    assert list(quote["NSE:INFY"]) == [name for name, _ in g.QUOTE]
    assert len(quote["NSE:INFY"]["depth"]["buy"]) == 5
    assert quote["NSE:INFY"]["timestamp"].endswith("+05:30")
    ltp = call(kite, "market", mode="ltp", instruments=["NSE:INFY"])
    assert list(ltp["NSE:INFY"]) == ["instrument_token", "last_price"]
    token = quote["NSE:INFY"]["instrument_token"]
    candles = call(kite, "market", mode="historical", instrument_token=token,
                   from_date="2026-12-01 09:15:00", to_date="2026-12-02 11:00:00",
                   interval="60minute")  # fmt: skip
    assert candles and list(candles[0]) == ["date", "open", "high", "low", "close", "volume", "oi"]
    assert candles[0]["date"].startswith("2026-12-01T09:15:00+05:30")
