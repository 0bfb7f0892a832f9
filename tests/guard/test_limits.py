"""Every limit of kite_skills/guard/limits.py RULES: it fires, and it does not fire exactly at
its threshold (one step inside), through the guard in front of the real sandbox. The client
here cannot ask the person, so a limit that fires refuses, naming itself."""

from __future__ import annotations

import json
from datetime import datetime, time
from pathlib import Path
from typing import Any

import pytest

from kite_skills.guard.limits import RULES, KillSwitch, Limits
from kite_skills.sandbox import sim

from .guard_harness import ORDER, Person, text_of
from .in_process import Guarded, guarded

pytestmark = pytest.mark.anyio
INFY = {**ORDER}
NIFTY_FUT = {**ORDER, "exchange": "NFO", "tradingsymbol": "NIFTY26DECFUT", "product": "NRML"}
# The default scenario's book: RELIANCE 10 filled at 1535, SBIN 50 open at 900, WIPRO rejected.
BOOK_VALUE = 10 * 1535 + 50 * 900
BOOK_ORDERS = 3


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def place(g: Guarded, **order: Any) -> dict[str, Any]:
    """Place through the guard; the journal's entry for it."""
    arguments = {**INFY, "quantity": 1, "price": 1600, **order}
    await g.call("place_order", **arguments)
    return g.last()


def refused_by(entry: dict[str, Any], name: str) -> bool:
    return entry["decision"] == "refuse" and entry["limits"] == [name]


def test_every_rule_row_names_its_two_tests() -> None:
    names = {n for n in globals() if n.startswith("test_")}
    for row in RULES:
        for test in (row.fires, row.quiet):
            path, _, name = test.partition("::")
            assert path == "tests/guard/test_limits.py" and name in names, test


async def test_kill_switch_fires(tmp_path: Path) -> None:
    switch = KillSwitch(reason="stepping out", by="asha", at="2026-12-02T06:00:00+00:00")
    person = Person("accept")
    async with guarded(tmp_path, limits=Limits(kill_switch=switch), person=person) as g:
        entry = await place(g)
        assert refused_by(entry, "kill-switch") and "stepping out" in entry["message"]
        result = await g.call("cancel_order", variety="regular", order_id="261202200000002")
        assert result.is_error and "kill switch is on (stepping out" in text_of(result)
        assert g.last()["action"] == "cancel"
        # Reads keep working.
        assert not (await g.call("get_orders")).is_error
    assert person.asked == []  # never asked: a yes cannot lift it


async def test_kill_switch_quiet(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(kill_switch=None)) as g:
        assert (await place(g))["decision"] == "allow"


async def test_order_value_fires(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(max_order_value=160_000)) as g:
        entry = await place(g, quantity=100, price=1600.05)
        assert refused_by(entry, "order-value")
        assert "this order is ₹1,60,005, above your ₹1,60,000 limit per order" in entry["message"]


async def test_order_value_quiet(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(max_order_value=160_000)) as g:
        assert (await place(g, quantity=100, price=1600))["decision"] == "allow"


async def test_order_value_of_a_market_order_is_at_the_last_price(tmp_path: Path) -> None:
    ltp = 1634.6  # INFY's last price in the default scenario
    async with guarded(tmp_path, limits=Limits(max_order_value=ltp * 10)) as g:
        market = {"order_type": "MARKET", "price": None, "market_protection": -1}
        assert (await place(g, quantity=10, **market))["decision"] == "allow"
        assert refused_by(await place(g, quantity=11, **market), "order-value")


async def test_quantity_fires(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(max_quantity=100)) as g:
        assert refused_by(await place(g, quantity=101), "quantity")


async def test_quantity_quiet(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(max_quantity=100)) as g:
        assert (await place(g, quantity=100))["decision"] == "allow"


async def test_lots_fires(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(max_lots=2, max_order_value=None)) as g:
        entry = await place(g, **NIFTY_FUT, quantity=195, price=25900)  # a lot is 65
        assert refused_by(entry, "lots") and "3 lots, above your 2 lots" in entry["message"]


async def test_lots_quiet(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(max_lots=2, max_order_value=None)) as g:
        assert (await place(g, **NIFTY_FUT, quantity=130, price=25900))["decision"] == "allow"
        # An equity order has no lot to count, and needs no instrument search.
        assert (await place(g, quantity=500, price=1600))["decision"] == "allow"


async def test_orders_per_day_fires(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(max_orders_per_day=BOOK_ORDERS + 1)) as g:
        assert (await place(g))["decision"] == "allow"
        entry = await place(g, quantity=2)
        assert refused_by(entry, "orders-per-day")
        assert f"order {BOOK_ORDERS + 2} today, above your {BOOK_ORDERS + 1}" in entry["message"]


async def test_orders_per_day_quiet(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(max_orders_per_day=BOOK_ORDERS + 1)) as g:
        assert (await place(g))["decision"] == "allow"


async def test_value_per_day_fires(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(max_value_per_day=BOOK_VALUE + 1600)) as g:
        assert refused_by(await place(g, price=1600.05), "value-per-day")


async def test_value_per_day_quiet(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(max_value_per_day=BOOK_VALUE + 1600)) as g:
        assert (await place(g, price=1600))["decision"] == "allow"


async def test_orders_per_minute_fires(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(max_orders_per_minute=2)) as g:
        await place(g, quantity=1)
        g.clock.wait(59.999)
        await place(g, quantity=2)
        entry = await place(g, quantity=3)
        assert refused_by(entry, "orders-per-minute")
        assert "order 3 in a minute, above your 2 a minute" in entry["message"]


async def test_orders_per_minute_quiet(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(max_orders_per_minute=2)) as g:
        await place(g, quantity=1)
        g.clock.wait(60)  # the first is a minute old: no longer counted
        await place(g, quantity=2)
        assert (await place(g, quantity=3))["decision"] == "allow"


async def test_duplicate_fires(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(duplicate_window_seconds=120)) as g:
        await place(g, quantity=7)
        g.clock.wait(119)
        entry = await place(g, quantity=7)
        assert refused_by(entry, "duplicate") and "119 s ago" in entry["message"]


async def test_duplicate_quiet(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(duplicate_window_seconds=120)) as g:
        await place(g, quantity=7)
        # Another quantity, side or price is another order.
        assert (await place(g, quantity=8))["decision"] == "allow"
        assert (await place(g, quantity=7, price=1600.05))["decision"] == "allow"
        assert (await place(g, quantity=7, transaction_type="SELL"))["decision"] == "allow"
        g.clock.wait(120)
        assert (await place(g, quantity=7))["decision"] == "allow"


async def test_segment_fires(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(segments=("NSE",), max_order_value=None)) as g:
        assert refused_by(await place(g, **NIFTY_FUT, quantity=65, price=25900), "segment")


async def test_segment_quiet(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(segments=("NSE", "NFO"), max_order_value=None)) as g:
        assert (await place(g))["decision"] == "allow"
        assert (await place(g, **NIFTY_FUT, quantity=65, price=25900))["decision"] == "allow"


async def test_product_fires(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(products=("CNC",))) as g:
        assert refused_by(await place(g, product="MIS"), "product")


async def test_product_quiet(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(products=("CNC",))) as g:
        assert (await place(g, product="CNC"))["decision"] == "allow"


async def test_instrument_fires(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(instruments=("NSE:INFY",))) as g:
        assert refused_by(await place(g, tradingsymbol="TCS", price=3400), "instrument")


async def test_instrument_quiet(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(instruments=("nse:infy",))) as g:
        assert (await place(g))["decision"] == "allow"


async def test_market_orders_fires(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(market_orders=False)) as g:
        market = {"order_type": "MARKET", "price": None, "market_protection": -1}
        assert refused_by(await place(g, **market), "market-orders")
        slm = {"order_type": "SL-M", "price": None, "trigger_price": 1650}
        assert refused_by(await place(g, **slm), "market-orders")


async def test_market_orders_quiet(tmp_path: Path) -> None:
    async with guarded(tmp_path, limits=Limits(market_orders=False)) as g:
        assert (await place(g, order_type="LIMIT"))["decision"] == "allow"
        sl = {"order_type": "SL", "price": 1655, "trigger_price": 1650}
        assert (await place(g, **sl))["decision"] == "allow"


HOURS = (time(9, 15), time(15, 30))


def ist(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=sim.IST)


@pytest.mark.parametrize(
    "at", ["2026-12-02 09:14:59.999", "2026-12-02 15:30:00.000", "2026-12-05 11:00:00.000"]
)
async def test_trading_hours_fires(tmp_path: Path, at: str) -> None:
    """One ms before the start, the end itself, and a Saturday."""
    async with guarded(tmp_path, limits=Limits(trading_hours=HOURS), at=ist(at)) as g:
        assert refused_by(await place(g), "trading-hours")


@pytest.mark.parametrize("at", ["2026-12-02 09:15:00.000", "2026-12-02 15:29:59.999"])
async def test_trading_hours_quiet(tmp_path: Path, at: str) -> None:
    async with guarded(tmp_path, limits=Limits(trading_hours=HOURS), at=ist(at)) as g:
        assert (await place(g))["decision"] == "allow"


# ----- the sandbox's watch rules (kite_skills/exposure.py), judged before the write ----------
# The hedged book (kite_skills/sandbox/sim/data/scenarios/hedged-book.yaml): a NIFTY bull call
# spread, a BANKNIFTY iron condor, a RELIANCE covered call, a NIFTY future hedged by a put; its
# orders are large, so the watch rules are judged here without the value and rate limits.
WATCH_ALONE = Limits(
    max_order_value=None, max_orders_per_minute=None, duplicate_window_seconds=None
)
FUT = "NIFTY26DECFUT"


async def last_price(g: Guarded, key: str) -> float:
    return float(json.loads(text_of(await g.call("get_ltp", instruments=[key])))[key]["last_price"])


async def leg(
    g: Guarded, symbol: str, side: str, quantity: int, *, share: float | None = None, **kw: Any
) -> tuple[dict[str, Any], str]:
    """A LIMIT order through the guard at ``share`` of the last price (default: marketable,
    so that it fills); its journal entry and its order id ("" when nothing was sent)."""
    exchange = kw.pop("exchange", "NFO")
    ltp = await last_price(g, f"{exchange}:{symbol}")
    share = share if share is not None else (1.02 if side == "BUY" else 0.98)
    arguments = {
        **ORDER,
        "exchange": exchange,
        "tradingsymbol": symbol,
        "transaction_type": side,
        "quantity": quantity,
        "product": "NRML" if exchange == "NFO" else "CNC",
        "price": float(round(ltp * share)),  # whole rupees: a multiple of every tick
        **kw,
    }
    result = await g.call("place_order", **arguments)
    sent = "" if result.is_error else str(json.loads(text_of(result))["order_id"])
    return g.last(), sent


async def stop_on_the_future(g: Guarded, share: float = 0.98) -> str:
    """An SL for the hedged book's whole NIFTY future (65): exactly the open quantity."""
    trigger = float(round(await last_price(g, f"NFO:{FUT}") * share))
    entry, order_id = await leg(
        g, FUT, "SELL", 65, order_type="SL", trigger_price=trigger, price=trigger - 5
    )
    assert entry["decision"] == "allow", entry
    return order_id


@pytest.mark.parametrize(
    ("structure", "first", "symbol", "quantity", "exchange", "naked"),
    [
        ("iron condor, call wing", None, "BANKNIFTY26DEC59900CE", 30, "NFO",
         "BANKNIFTY up side: 30 exposed, 0 covered (NFO:BANKNIFTY26DEC59500CE)"),
        ("iron condor, put wing", None, "BANKNIFTY26DEC58200PE", 30, "NFO",
         "BANKNIFTY down side: 30 exposed, 0 covered (NFO:BANKNIFTY26DEC58600PE)"),
        ("covered call", None, "RELIANCE", 500, "NSE",
         "RELIANCE up side: 500 exposed, 0 covered (NFO:RELIANCE26DEC1600CE)"),
        ("future hedged by a put", None, "NIFTY26D1525500PE", 65, "NFO",
         "NIFTY down side: 65 exposed, 0 covered (NFO:NIFTY26DECFUT)"),
        ("bull call spread", FUT, "NIFTY26D1525900CE", 65, "NFO",
         "NIFTY up side: 65 exposed, 0 covered (NFO:NIFTY26D1526100CE)"),
    ],
)  # fmt: skip
async def test_hedge_broken_fires(
    tmp_path: Path,
    structure: str,
    first: str | None,
    symbol: str,
    quantity: int,
    exchange: str,
    naked: str,
) -> None:
    """Selling the long leg while its short is open: when it fills, the short is naked."""
    async with guarded(tmp_path, limits=WATCH_ALONE, scenario="hedged-book") as g:
        if first:  # the spread's other cover (the future) goes first, and may
            assert (await leg(g, first, "SELL", 65))[0]["decision"] == "allow"
        entry, sent = await leg(g, symbol, "SELL", quantity, exchange=exchange)
        assert refused_by(entry, "hedge-broken") and sent == ""
        assert f"after this write, {naked}: a hedged leg is now naked" in entry["message"]


async def test_hedge_broken_quiet(tmp_path: Path) -> None:
    """The iron condor closed short first, then its long: never naked."""
    async with guarded(tmp_path, limits=WATCH_ALONE, scenario="hedged-book") as g:
        for symbol, side in (
            ("BANKNIFTY26DEC59500CE", "BUY"),
            ("BANKNIFTY26DEC59900CE", "SELL"),
            ("BANKNIFTY26DEC58600PE", "BUY"),
            ("BANKNIFTY26DEC58200PE", "SELL"),
        ):
            entry, sent = await leg(g, symbol, side, 30)
            assert entry["decision"] == "allow" and sent, entry


async def test_short_before_hedge_fires(tmp_path: Path) -> None:
    """A new BANKNIFTY put spread: the short put while its long put still rests unfilled."""
    async with guarded(tmp_path, limits=WATCH_ALONE, scenario="hedged-book") as g:
        hedge, sent = await leg(g, "BANKNIFTY26DEC58100PE", "BUY", 30, share=0.9)
        assert hedge["decision"] == "allow" and sent
        entry, sent = await leg(g, "BANKNIFTY26DEC58400PE", "SELL", 30)
        assert refused_by(entry, "short-before-hedge") and sent == ""
        assert "BANKNIFTY down side: short ahead of its hedge" in entry["message"]


async def test_short_before_hedge_quiet(tmp_path: Path) -> None:
    """The long put filled first, then the short: allowed."""
    async with guarded(tmp_path, limits=WATCH_ALONE, scenario="hedged-book") as g:
        assert (await leg(g, "BANKNIFTY26DEC58100PE", "BUY", 30))[0]["decision"] == "allow"
        entry, sent = await leg(g, "BANKNIFTY26DEC58400PE", "SELL", 30)
        assert entry["decision"] == "allow" and sent


async def test_over_exit_fires(tmp_path: Path) -> None:
    """A stop and a target, each for the whole future: when one fills the other opens a
    short."""
    async with guarded(tmp_path, limits=WATCH_ALONE, scenario="hedged-book") as g:
        stop = await stop_on_the_future(g)
        entry, sent = await leg(g, FUT, "SELL", 65, share=1.02)  # the target
        assert refused_by(entry, "over-exit") and sent == ""
        assert (
            f"NFO:{FUT}: exits for 130 (order {stop}, a new order) against 65 open"
            in entry["message"]
        )


async def two_leg_gtt(g: Guarded, quantity: int) -> dict[str, Any]:
    """A two-leg SELL GTT (a stop and a target) on the hedged book's future."""
    price = await last_price(g, f"NFO:{FUT}")
    legs = {
        f"{edge}_{name}": value
        for edge, at in (("lower", 0.98), ("upper", 1.02))
        for name, value in (
            ("trigger_value", float(round(price * at))),
            ("limit_price", float(round(price * (at - 0.005)))),
            ("quantity", quantity),
        )
    }
    await g.call(
        "place_gtt_order", exchange="NFO", tradingsymbol=FUT, last_price=price,
        transaction_type="SELL", product="NRML", trigger_type="two-leg", **legs,
    )  # fmt: skip
    return g.last()


async def test_over_exit_quiet(tmp_path: Path) -> None:
    """Exits for exactly the open quantity: a stop for the whole future; or a two-leg GTT
    (one-cancels-other: it sells once)."""
    async with guarded(tmp_path, limits=WATCH_ALONE, scenario="hedged-book") as g:
        await stop_on_the_future(g)
    (tmp_path / "gtt").mkdir()
    async with guarded(tmp_path / "gtt", limits=WATCH_ALONE, scenario="hedged-book") as g:
        assert (await two_leg_gtt(g, 65))["decision"] == "allow"


async def test_protection_removed_fires(tmp_path: Path) -> None:
    """The only stop on the future cancelled, the future still open."""
    async with guarded(tmp_path, limits=WATCH_ALONE, scenario="hedged-book") as g:
        stop = await stop_on_the_future(g)
        result = await g.call("cancel_order", variety="regular", order_id=stop)
        assert result.is_error and refused_by(g.last(), "protection-removed")
        assert f"NFO:{FUT}: 65 open, 0 of 65 still protected" in g.last()["message"]


async def test_protection_removed_fires_for_the_gtt_on_a_holding(tmp_path: Path) -> None:
    """The default account's two-leg GTT on its 500 ITC shares, deleted."""
    async with guarded(tmp_path) as g:
        (itc,) = [t for t in json.loads(text_of(await g.call("get_gtts"))) if t["condition"]
                  ["tradingsymbol"] == "ITC"]  # fmt: skip
        result = await g.call("delete_gtt_order", trigger_id=itc["id"])
        assert result.is_error and refused_by(g.last(), "protection-removed")
        assert "NSE:ITC: 500 open, 0 of 500 still protected" in g.last()["message"]


async def test_protection_removed_quiet(tmp_path: Path) -> None:
    """The replacement stop went in first (two stops for a moment: the person is asked about
    that over-exit and says yes), then the old stop is cancelled: allowed."""
    person = Person("accept")
    async with guarded(tmp_path, limits=WATCH_ALONE, scenario="hedged-book", person=person) as g:
        stop = await stop_on_the_future(g)
        trigger = float(round(await last_price(g, f"NFO:{FUT}") * 0.97))
        entry, _ = await leg(
            g, FUT, "SELL", 65, order_type="SL", trigger_price=trigger, price=trigger - 5
        )
        assert entry["decision"] == "asked-accepted" and entry["limits"] == ["over-exit"]
        result = await g.call("cancel_order", variety="regular", order_id=stop)
        assert not result.is_error and g.last()["decision"] == "allow"
    assert len(person.asked) == 1
