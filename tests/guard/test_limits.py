"""Every limit of kite_skills/guard/limits.py RULES: it fires, and it does not fire exactly at
its threshold (one step inside), through the guard in front of the real sandbox. The client
here cannot ask the person, so a limit that fires refuses, naming itself."""

from __future__ import annotations

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
