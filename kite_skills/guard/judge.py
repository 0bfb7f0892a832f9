"""The guard's judgement of one write against the person's limits and the live account.
A pure module: the guard reads the account through the upstream and hands it in.

Three outcomes (:attr:`Verdict.decision`): ``allow``; ``ask`` the person (every limit but the
kill switch can be passed by the person's yes, where the client can ask and the limits say
``ask``); ``refuse``, naming each limit and its numbers. When a number the judgement needs
could not be read, the write is refused with the reason (fail closed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Final

from . import writes
from .limits import Limits, rule, rupees
from .writes import Write

DERIVATIVES: Final = frozenset({"NFO", "BFO", "MCX", "CDS"})
NO_PRICE: Final = frozenset({"MARKET", "SL-M"})
DONE: Final = frozenset({"REJECTED", "CANCELLED"})
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
    (the last price of the write's instrument), ``lot`` (its lot size)."""
    if limits.kill_switch is not None or write.action not in writes.ORDERS:
        return frozenset()
    wanted = {"orders"}
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
        return Verdict(write, (), None, may_ask)
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
    return Verdict(write, tuple(found), None, may_ask)
