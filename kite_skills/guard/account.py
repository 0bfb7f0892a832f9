"""Reading the live account through the upstream, by the tool names of its generation, with
a short cache: what :func:`kite_skills.guard.judge.judge` needs and nothing more. A read that
fails, times out or answers without the field names the reason in ``Account.problems``: the
judgement then fails closed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import anyio

from ..display import clipped
from .judge import Account
from .writes import Write

CACHE_SECONDS: Final = 2.0  # an order book two seconds old still counts today's orders
# The account's books the watch rules read, by generation: (legacy tool), (grouped tool, mode).
BOOKS: Final[dict[str, tuple[str, tuple[str, str]]]] = {
    "positions": ("get_positions", ("portfolio", "positions")),
    "holdings": ("get_holdings", ("portfolio", "holdings")),
    "gtts": ("get_gtts", ("gtt", "list")),
}
Call = Callable[[str, dict[str, Any]], Awaitable[tuple[str, bool]]]


class Unreadable(Exception):
    """A read the judgement needs did not give an answer (the message says why)."""


class AccountReader:
    """The reads for one upstream; ``grouped`` is the generation with the ``orders`` tool."""

    def __init__(self, call: Call, tool_names: set[str], timeout: float) -> None:
        self._call = call
        self.grouped = "orders" in tool_names
        self._timeout = timeout
        self._cache: dict[tuple[str, ...], tuple[float, Any]] = {}

    def forget_account(self) -> None:
        """A write went through: the next judgement reads the books again."""
        for key in ("orders", *BOOKS):
            self._cache.pop((key,), None)

    async def _json(self, key: tuple[str, ...], tool: str, arguments: dict[str, Any]) -> Any:
        kept = self._cache.get(key)
        if kept is not None and time.monotonic() - kept[0] < CACHE_SECONDS:
            return kept[1]
        try:
            with anyio.fail_after(self._timeout):
                text, is_error = await self._call(tool, arguments)
        except TimeoutError as exc:
            raise Unreadable(f"{tool} did not answer within {self._timeout:g} s") from exc
        except Exception as exc:  # the upstream's failure is a reason, not a crash
            raise Unreadable(
                f"{tool} failed: {clipped(str(exc) or type(exc).__name__, 200)}"
            ) from exc
        if is_error:
            raise Unreadable(f"{tool} answered an error: {clipped(text, 200)}")
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise Unreadable(f"{tool} did not answer JSON: {clipped(text, 120)}") from exc
        self._cache[key] = (time.monotonic(), value)
        return value

    async def orders(self) -> tuple[dict[str, Any], ...]:
        if self.grouped:
            value = await self._json(("orders",), "orders", {"mode": "list"})
        else:
            value = await self._json(("orders",), "get_orders", {})
        return _rows(value, "the order book is not a list of orders")

    async def book(self, name: str) -> tuple[dict[str, Any], ...]:
        """One of :data:`BOOKS`: the positions (Day rows, then Net rows), the holdings, the
        GTTs; a bare list, or the pagination envelope's ``data``."""
        legacy, (tool, mode) = BOOKS[name]
        if self.grouped:
            value = await self._json((name,), tool, {"mode": mode})
        else:
            value = await self._json((name,), legacy, {})
        return _rows(value, f"the {name} are not a list")

    async def last_price(self, instrument: str) -> float:
        tool, args = ("market", {"mode": "ltp"}) if self.grouped else ("get_ltp", {})
        value = await self._json(("price", instrument), tool, {**args, "instruments": [instrument]})
        entry = value.get(instrument) if isinstance(value, dict) else None
        price = entry.get("last_price") if isinstance(entry, dict) else None
        if not isinstance(price, int | float) or isinstance(price, bool) or price <= 0:
            raise Unreadable(f"no last price for {instrument}")
        return float(price)

    async def lot_size(self, exchange: str, symbol: str) -> int:
        if self.grouped:
            args: dict[str, Any] = {
                "mode": "search",
                "search_mode": "get_by_tradingsymbol",
                "exchange": exchange,
                "tradingsymbol": symbol,
            }
            value = await self._json(("lot", exchange, symbol), "market", args)
        else:
            args = {"query": symbol, "filter_on": "tradingsymbol"}
            value = await self._json(("lot", exchange, symbol), "search_instruments", args)
        rows = value.get("data") if isinstance(value, dict) else value
        for row in rows if isinstance(rows, list) else []:
            if (
                isinstance(row, dict)
                and row.get("tradingsymbol") == symbol
                and row.get("exchange") == exchange
            ):
                lot = row.get("lot_size")
                if isinstance(lot, int) and not isinstance(lot, bool) and lot > 0:
                    return lot
        raise Unreadable(f"no lot size for {exchange}:{symbol}")

    async def read(self, wanted: frozenset[str], write: Write) -> Account:
        """What ``wanted`` names, each failure kept as a reason."""
        problems: dict[str, str] = {}
        orders = price = lot = None
        books: dict[str, tuple[dict[str, Any], ...]] = {}

        async def read_book(name: str) -> None:
            try:
                books[name] = await self.book(name)
            except Unreadable as exc:
                problems[name] = str(exc)

        async with anyio.create_task_group() as group:  # the books side by side
            for name in BOOKS:
                if name in wanted:
                    group.start_soon(read_book, name)
            if "orders" in wanted:
                try:
                    orders = await self.orders()
                except Unreadable as exc:
                    problems["orders"] = str(exc)
        instrument, exchange, symbol = write.instrument, write.exchange, write.tradingsymbol
        if orders is not None and (instrument is None) and write.order_id:
            order = next((o for o in orders if str(o.get("order_id")) == write.order_id), None)
            if order is not None:
                exchange, symbol = str(order.get("exchange")), str(order.get("tradingsymbol"))
                instrument = f"{exchange}:{symbol}"
        if "price" in wanted and instrument is not None:
            try:
                price = await self.last_price(instrument)
            except Unreadable as exc:
                problems["price"] = str(exc)
        if "lot" in wanted and exchange and symbol:
            try:
                lot = await self.lot_size(exchange, symbol)
            except Unreadable as exc:
                problems["lot"] = str(exc)
        return Account(
            orders,
            price,
            lot,
            problems,
            books.get("positions"),
            books.get("holdings"),
            books.get("gtts"),
        )


def _rows(value: Any, wrong: str) -> tuple[dict[str, Any], ...]:
    if isinstance(value, dict) and isinstance(value.get("data"), list):
        value = value["data"]
    if not isinstance(value, list) or not all(isinstance(row, dict) for row in value):
        raise Unreadable(wrong)
    return tuple(value)
