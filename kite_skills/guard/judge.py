"""The guard's judgement of one write against the person's limits and the live account.
A pure module: the guard reads the account through the upstream and hands it in.

Three outcomes (:attr:`Verdict.decision`): ``allow``; ``ask`` the person (every limit but the
kill switch can be passed by the person's yes, where the client can ask and the limits say
``ask``); ``refuse``, naming each limit and its numbers. The sandbox's watch rules
(:mod:`kite_skills.exposure`) are judged on the account as the upstream reports it with the
write applied (:func:`_watch`). When a number the judgement needs
could not be read, the write is refused with the reason (fail closed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Final

from .. import exposure
from ..calc.exits import kind_of, underlying_name
from . import writes
from .limits import Limits, rule, rupees
from .writes import Write

DERIVATIVES: Final = frozenset({"NFO", "BFO", "MCX", "CDS"})
NO_PRICE: Final = frozenset({"MARKET", "SL-M"})
DONE: Final = frozenset({"REJECTED", "CANCELLED"})
FINISHED: Final = DONE | {"COMPLETE"}  # every other status is an order still working
# The writes the watch rules judge, and the books they read.
WATCHED: Final = frozenset({*writes.ORDERS, writes.CANCEL, writes.GTT_DELETE})
BOOKS: Final = frozenset({"orders", "positions", "holdings", "gtts"})
MINUTE: Final = timedelta(seconds=60)
IST: Final = timezone(timedelta(hours=5, minutes=30), "IST")


@dataclass(frozen=True)
class Account:
    """What the guard read from the upstream for one write (None: not read, or unreadable,
    with the reason in ``problems``)."""

    orders: tuple[dict[str, Any], ...] | None = None
    last_price: float | None = None
    lot_size: int | None = None
    problems: dict[str, str] = field(default_factory=dict)
    positions: tuple[dict[str, Any], ...] | None = None  # Day rows, then Net rows
    holdings: tuple[dict[str, Any], ...] | None = None
    gtts: tuple[dict[str, Any], ...] | None = None


@dataclass(frozen=True)
class Sent:
    """A write this guard let through, for the rate and duplicate limits."""

    at: datetime
    write: Write


@dataclass(frozen=True)
class Finding:
    rule: str
    message: str
    numbers: dict[str, Any]


@dataclass(frozen=True)
class Verdict:
    write: Write
    findings: tuple[Finding, ...] = ()
    cannot_judge: str | None = None  # why the write could not be judged (fail closed)
    may_ask: bool = True  # never for the kill switch: only a person lifts it, never a yes

    @property
    def decision(self) -> str:
        if self.cannot_judge is not None:
            return "refuse"
        if not self.findings:
            return "allow"
        if self.may_ask:
            return "ask"
        return "refuse"

    def explain(self) -> str:
        """The words a person reads: which limits, the numbers, and what they can do."""
        what = self.write.describe()
        if self.cannot_judge is not None:
            return (
                f"kite-skills guard refused {what}: it could not check your limits "
                f"({self.cannot_judge}), so nothing was sent. Reads still work; try again "
                "when the account can be read."
            )
        said = "; ".join(f"{f.message} [{f.rule}]" for f in self.findings)
        if self.decision == "ask":
            return f"{said[:1].upper()}{said[1:]}. Place it?"
        lift = (
            "lift it with 'kite-skills guard limits resume' or on the dashboard's Guard page"
            if any(f.rule == "kill-switch" for f in self.findings)
            else "the person can change a limit with 'kite-skills guard limits set' or on "
            "the dashboard's Guard page, or place it themselves"
        )
        return f"kite-skills guard refused {what}: {said}. Nothing was sent; {lift}."


def needs(limits: Limits, write: Write) -> frozenset[str]:
    """What must be read before :func:`judge` can decide: ``orders`` (the book), ``price``
    (the last price of the write's instrument), ``lot`` (its lot size); for the watch rules,
    the :data:`BOOKS` (a cancel or a GTT delete too: it can remove a stop)."""
    if limits.kill_switch is not None:
        return frozenset()
    watching = write.action in WATCHED and bool(_watch_rules(limits))
    if write.action not in writes.ORDERS:
        return BOOKS if watching else frozenset()
    wanted = {"orders", *(BOOKS if watching else ())}
    if write.action in (writes.MODIFY, writes.GTT_MODIFY) or write.order_type in NO_PRICE:
        wanted.add("price")
    if limits.max_lots is not None and (write.exchange is None or write.exchange in DERIVATIVES):
        wanted.add("lot")
    return frozenset(wanted)


def _resolved(write: Write, orders: Sequence[dict[str, Any]]) -> Write | str:
    """A modify takes the instrument, side, product and unchanged fields from its order."""
    if write.action != writes.MODIFY:
        return write
    order = next((o for o in orders if str(o.get("order_id")) == write.order_id), None)
    if order is None:
        return f"order {write.order_id} is not in today's order book"
    return Write(
        tool=write.tool,
        action=write.action,
        mode=write.mode,
        exchange=write.exchange or str(order.get("exchange") or "") or None,
        tradingsymbol=write.tradingsymbol or str(order.get("tradingsymbol") or "") or None,
        side=write.side or str(order.get("transaction_type") or "") or None,
        quantity=write.quantity if write.quantity is not None else _float(order.get("quantity")),
        price=write.price if write.price is not None else _float(order.get("price")),
        trigger_price=write.trigger_price
        if write.trigger_price is not None
        else _float(order.get("trigger_price")),
        product=write.product or str(order.get("product") or "") or None,
        order_type=write.order_type or str(order.get("order_type") or "") or None,
        order_id=write.order_id,
    )


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _book_value(order: dict[str, Any]) -> float:
    filled = (_float(order.get("filled_quantity")) or 0) * (_float(order.get("average_price")) or 0)
    if order.get("status") in DONE:
        return filled
    pending = _float(order.get("pending_quantity")) or 0
    price = _float(order.get("price")) or _float(order.get("trigger_price")) or 0
    return filled + pending * price


def judge(
    limits: Limits,
    write: Write,
    account: Account,
    sent: Sequence[Sent],
    now: datetime,
    *,
    can_ask: bool,
) -> Verdict:
    """The verdict on ``write``; ``now`` is an aware time (the trading hours are IST)."""
    may_ask = can_ask and limits.ask
    if limits.kill_switch is not None:
        k = limits.kill_switch
        message = rule("kill-switch").message.format(reason=k.reason, by=k.by, at=k.at)
        return Verdict(write, (Finding("kill-switch", message, {"reason": k.reason}),), None, False)
    if write.action not in writes.ORDERS:
        if write.action not in WATCHED:
            return Verdict(write, (), None, may_ask)
        watched = _watch(limits, write, account, now)
        if isinstance(watched, str):
            return Verdict(write, (), watched, may_ask)
        return Verdict(write, tuple(watched), None, may_ask)
    if account.orders is None:
        reason = account.problems.get("orders", "the order book was not read")
        return Verdict(write, (), reason, may_ask)
    orders = account.orders or ()
    resolved = _resolved(write, orders)
    if isinstance(resolved, str):
        return Verdict(write, (), resolved, may_ask)
    found: list[Finding] = []

    def fire(name: str, numbers: dict[str, Any], **shown: Any) -> None:
        found.append(Finding(name, rule(name).message.format(**numbers, **shown), numbers))

    w = resolved
    quantity = w.quantity
    if quantity is None:
        return Verdict(write, (), "the order gives no quantity", may_ask)
    price = w.price if w.order_type not in NO_PRICE else None
    if w.order_type == "SL-M":
        price = w.trigger_price
    if not price:
        price = account.last_price
    if not price:
        why = account.problems.get("price", f"no price and no last price for {w.instrument}")
        return Verdict(write, (), why, may_ask)
    value = quantity * price
    if limits.max_order_value is not None and value > limits.max_order_value:
        fire("order-value", {"value": rupees(value), "limit": rupees(limits.max_order_value)})
    if limits.max_quantity is not None and quantity > limits.max_quantity:
        fire("quantity", {"value": f"{quantity:g}", "limit": limits.max_quantity})
    if limits.max_lots is not None and w.exchange in DERIVATIVES:
        if not account.lot_size:
            why = account.problems.get("lot", f"no lot size for {w.instrument}")
            return Verdict(write, (), why, may_ask)
        lots = quantity / account.lot_size
        if lots > limits.max_lots:
            fire("lots", {"value": f"{lots:g}", "limit": limits.max_lots})
    placing = w.action in (writes.PLACE,)
    if placing and limits.max_orders_per_day is not None:
        count = len(orders) + 1
        if count > limits.max_orders_per_day:
            fire("orders-per-day", {"value": count, "limit": limits.max_orders_per_day})
    if w.action == writes.PLACE and limits.max_value_per_day is not None:
        day = sum(_book_value(o) for o in orders) + value
        if day > limits.max_value_per_day:
            fire("value-per-day", {"value": rupees(day), "limit": rupees(limits.max_value_per_day)})
    if limits.max_orders_per_minute is not None and w.action in (writes.PLACE, writes.MODIFY):
        recent = sum(1 for s in sent if now - s.at < MINUTE) + 1
        if recent > limits.max_orders_per_minute:
            fire("orders-per-minute", {"value": recent, "limit": limits.max_orders_per_minute})
    if limits.duplicate_window_seconds is not None and w.action in (writes.PLACE, writes.GTT_PLACE):
        window = timedelta(seconds=limits.duplicate_window_seconds)
        key = (w.instrument, w.side, w.quantity, w.price, w.action)
        for s in reversed(sent):
            same = (
                s.write.instrument,
                s.write.side,
                s.write.quantity,
                s.write.price,
                s.write.action,
            )
            if same == key and now - s.at < window:
                ago = int((now - s.at).total_seconds())
                fire(
                    "duplicate",
                    {"value": w.describe(), "limit": limits.duplicate_window_seconds},
                    ago=ago,
                )
                break
    if limits.segments is not None and w.exchange not in limits.segments:
        fire("segment", {"value": w.exchange, "limit": ", ".join(limits.segments)})
    if limits.products is not None and w.product not in limits.products:
        fire("product", {"value": w.product, "limit": ", ".join(limits.products)})
    if limits.instruments is not None and w.instrument not in limits.instruments:
        fire("instrument", {"value": w.instrument, "limit": ", ".join(limits.instruments)})
    if not limits.market_orders and w.order_type in NO_PRICE:
        fire("market-orders", {"value": w.order_type})
    if limits.trading_hours is not None:
        start, end = limits.trading_hours
        local = now.astimezone(IST)
        if local.weekday() >= 5 or not start <= local.time() < end:
            hours = f"{start:%H:%M}-{end:%H:%M}"
            fire("trading-hours", {"value": f"{local:%a %H:%M}", "limit": hours})
    watched = _watch(limits, w, account, now)
    if isinstance(watched, str):
        return Verdict(write, (), watched, may_ask)
    return Verdict(write, (*found, *watched), None, may_ask)


# ----- the watch rules (kite_skills/exposure.py) on the account as the write would leave it --


@dataclass(frozen=True)
class Contract:
    """An instrument as the upstream's books name it; its kind and underlying read off the
    symbol (``calc.exits``, the one reader of a Kite symbol)."""

    exchange: str
    tradingsymbol: str

    @property
    def key(self) -> str:
        return f"{self.exchange}:{self.tradingsymbol}"

    @property
    def instrument_type(self) -> str:
        return kind_of(self.exchange, self.tradingsymbol)

    @property
    def underlying(self) -> str:
        return underlying_name(self.exchange, self.tradingsymbol)


Leg = exposure.Leg[Contract]
Live = exposure.Live[Contract]


class Unusable(Exception):
    """A row the watch needs lacks a field (the message says which): the write fails closed."""


def _watch_rules(limits: Limits) -> tuple[exposure.Rule, ...]:
    return tuple(row for row in exposure.RULES if getattr(limits, rule(row.name).setting))


def _need(row: dict[str, Any], name: str, what: str) -> Any:
    value = row.get(name)
    if value is None or value == "":
        raise Unusable(f"{what} has no {name}")
    return value


def _contract(row: dict[str, Any], what: str) -> Contract:
    exchange = str(_need(row, "exchange", what)).upper()
    return Contract(exchange, str(_need(row, "tradingsymbol", what)).upper())


def _count(row: dict[str, Any], name: str, what: str) -> int:
    value = _float(_need(row, name, what))
    if value is None:
        raise Unusable(f"{what} has no number for {name}")
    return int(value)


def _legs(account: Account) -> dict[tuple[str, str], Leg]:
    """The open positions (each instrument's Net row: the last of its rows) and holdings, one
    leg per instrument and product."""
    net: dict[tuple[str, str], Leg] = {}
    for row in account.positions or ():
        what = f"the position {row.get('tradingsymbol')!r}"
        inst, product = _contract(row, what), str(_need(row, "product", what))
        net[(inst.key, product)] = Leg(inst, product, _count(row, "quantity", what))
    for row in account.holdings or ():
        what = f"the holding {row.get('tradingsymbol')!r}"
        inst = _contract(row, what)
        have = net.get((inst.key, "CNC"))
        held = _count(row, "quantity", what) + (have.quantity if have else 0)
        net[(inst.key, "CNC")] = Leg(inst, "CNC", held)
    return net


def _live(account: Account, now: datetime) -> list[Live]:
    """The working orders and the active GTTs' legs."""
    live: list[Live] = []
    for seq, row in enumerate(account.orders or (), 1):
        what = f"order {row.get('order_id')!r}"
        if _need(row, "status", what) in FINISHED:
            continue
        live.append(
            Live(
                f"order {_need(row, 'order_id', what)}",
                _contract(row, what),
                str(_need(row, "transaction_type", what)),
                _count(row, "pending_quantity", what),
                str(_need(row, "product", what)),
                str(_need(row, "order_type", what)),
                _float(row.get("price")) or 0.0,
                _float(row.get("trigger_price")) or 0.0,
                now,  # the book's times are not read: no rule here compares them
                seq,
                str(row.get("placed_by") or ""),
            )
        )
    for row in account.gtts or ():
        what = f"GTT {row.get('id')!r}"
        if _need(row, "status", what) != "active":
            continue
        condition, legs = _need(row, "condition", what), _need(row, "orders", what)
        if not isinstance(condition, dict) or not isinstance(legs, list):
            raise Unusable(f"{what} has no condition or legs")
        ref = f"GTT {_need(row, 'id', what)}"
        live.extend(exposure.gtt_live(ref, _contract(condition, what), legs, now))
    return live


def _filled(legs: dict[tuple[str, str], Leg], item: Live | None) -> list[Leg]:
    """The legs as they would be once ``item`` fills in full."""
    out = dict(legs)
    if item is not None:
        at = (item.inst.key, item.product)
        have = out.get(at)
        signed = item.quantity if item.side == "BUY" else -item.quantity
        out[at] = Leg(item.inst, item.product, (have.quantity if have else 0) + signed)
    return [leg for leg in out.values() if leg.quantity]


def _effect(
    write: Write, account: Account, live: list[Live], now: datetime
) -> tuple[Live | None, Live | None, str | None]:
    """What ``write`` changes: the live item it replaces or removes (None: a new one), the
    item it leaves live (None: a cancel or delete), and the ref it removes."""
    gtt = write.action in (writes.GTT_PLACE, writes.GTT_MODIFY, writes.GTT_DELETE)
    ref = f"{'GTT' if gtt else 'order'} {write.order_id}" if write.order_id else None
    old = next((i for i in live if i.ref == ref), None) if ref else None
    if write.action in (writes.CANCEL, writes.GTT_DELETE):
        return old, None, ref
    if write.action in (writes.MODIFY, writes.GTT_MODIFY) and old is None:
        raise Unusable(f"{ref} is not live in the upstream's books")
    what = f"the {write.action}"
    if not write.exchange or not write.tradingsymbol:
        raise Unusable(f"{what} names no instrument")
    if write.side not in ("BUY", "SELL") or write.quantity is None:
        raise Unusable(f"{what} gives no side or quantity")
    quantity = int(write.quantity)
    if write.action == writes.MODIFY:  # the new quantity counts what already filled
        order = next(o for o in account.orders or () if str(o.get("order_id")) == write.order_id)
        quantity -= _count(order, "filled_quantity", f"order {write.order_id}")
    product = write.product or (old.product if old else None)
    if product is None:
        raise Unusable(f"{what} gives no product")
    new = Live(
        ref or ("a new GTT" if gtt else "a new order"),
        Contract(write.exchange, write.tradingsymbol),
        write.side,
        quantity,
        product,
        "GTT" if gtt else (write.order_type or ""),
        write.price or 0.0,
        0.0 if gtt else (write.trigger_price or 0.0),
        now,
        len(live) + 1,
    )
    return old, new, None


def _watch(limits: Limits, write: Write, account: Account, now: datetime) -> list[Finding] | str:
    """The watch rules the person keeps on, on the account before and after ``write``: a rule
    fires on what the write would begin. A string: why it cannot judge (fail closed)."""
    rules = _watch_rules(limits)
    if not rules or write.action not in WATCHED:
        return []
    for name in sorted(BOOKS):
        if getattr(account, name) is None:
            return account.problems.get(name, f"the {name} were not read")
    try:
        legs = _legs(account)
        live = _live(account, now)
        old, new, gone = _effect(write, account, live, now)
    except Unusable as exc:
        return str(exc)
    after = [i for i in live if i is not old] + ([new] if new else [])
    placed = [new] if new is not None and write.action == writes.PLACE else []
    held = _filled(legs, None)
    found = []
    for row in rules:
        if row is exposure.HEDGE_BROKEN:  # an order judged as if it filled
            before = exposure.Book("call", _filled(legs, old), live, [], set())
            then = exposure.Book("call", _filled(legs, new), after, [], set())
        else:  # as if it rests
            before = exposure.Book("call", held, live, [], set())
            then = exposure.Book("call", held, after, placed, {gone} if gone else set())
        memory: exposure.Memory = {}
        seen = {(h.key, h.detail) for h in row.check(before, memory)}
        for hit in row.check(then, memory):
            if (hit.key, hit.detail) in seen:
                continue
            numbers = {"detail": hit.detail, "instruments": ", ".join(hit.instruments)}
            found.append(Finding(row.name, rule(row.name).message.format(**numbers), numbers))
    return found
