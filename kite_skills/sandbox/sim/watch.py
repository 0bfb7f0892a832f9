"""The watch (issue 41 §1): after every tool call and every simulation event, each rule looks at
the account and says whether it is exposed. A rule is one row of :data:`RULES`: its name, what
it detects, the message a person reads, its source, and the two tests that prove it (one where
it fires, one where it must not, in tests/sandbox/test_watch.py). Four of them (hedge broken,
short before its hedge, over-exit, protection removed) are the guard's too: their checks and
texts are :mod:`kite_skills.exposure`'s, which both ask.

The watch never changes what a tool answers. A state that begins is a ``began`` finding and
one that ends an ``ended`` finding (with how long it lasted); the adapter journals both, and
``--watch strict`` refuses a call whose effect would begin one.

Quantities are in units; an underlying's two sides (up, down) as :mod:`kite_skills.exposure`
describes them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final, Protocol

from ... import exposure
from ...calc.holdings import standing_authorisation
from ...calc.orders import FAT_FINGER  # the fat-finger thresholds' one owner (issue 42)
from .engine import WORKING, Engine, Order
from .events import Finding
from .gtt import Gtt
from .instruments import Instrument
from .portfolio import margin_for, total


class Watched(Protocol):
    """What the watch reads of the simulation that holds it (a Protocol, not an import of
    simulation.py, which imports this module)."""

    engine: Engine
    gtts: dict[int, Gtt]
    book_reads: list[int]


# Two orders alike placed this close together are one intent sent twice (the catalog's
# duplicate checks look at today's book; a retry after a lost answer comes within seconds).
DUPLICATE_WINDOW: Final = timedelta(minutes=5)
Leg = exposure.Leg[Instrument]
Live = exposure.Live[Instrument]
Hit = exposure.Hit
Memory = exposure.Memory


@dataclass
class Book(exposure.Book[Instrument]):
    """The account as a rule sees it at one moment, with what the sandbox's own rules read:
    the orders placed since the last look, and the simulation."""

    at: datetime
    orders_placed: list[Order]
    sim: Watched


Check = Callable[[Book, Memory], list[Hit]]


@dataclass(frozen=True)
class Rule:
    name: str
    detects: str
    message: str
    source: str
    fires: str  # the test in tests/sandbox/test_watch.py where it fires
    quiet: str  # the test where it must not
    check: Check
    momentary: bool = False  # judged only when an order is placed: begins and ends at once


# ----- the checks ---------------------------------------------------------------------------


def _product_mismatch(book: Book, mem: Memory) -> list[Hit]:
    hits = []
    for key, (exposed, cover, mis_exposed, mis_cover) in sorted(book.sides().items()):
        carried_exposed, carried_cover = exposed - mis_exposed, cover - mis_cover
        if carried_exposed > carried_cover and mis_cover > 0:
            hits.append(
                Hit(
                    key,
                    exposure.instruments_on(book.legs, key),
                    f"{key[0]} {key[1]} side: {carried_exposed} carried (NRML/CNC) exposed, "
                    f"{mis_cover} of its cover is MIS",
                )
            )
    return hits


def _duplicate_intent(book: Book, mem: Memory) -> list[Hit]:
    reads = book.sim.book_reads
    orders = sorted((i for i in book.live if i.order_type != "GTT"), key=lambda i: i.seq)
    hits = []
    for n, first in enumerate(orders):
        for second in orders[n + 1 :]:
            alike = (first.inst.key, first.side, first.quantity, first.price, first.trigger) == (
                second.inst.key,
                second.side,
                second.quantity,
                second.price,
                second.trigger,
            )
            if not alike or second.placed_at - first.placed_at > DUPLICATE_WINDOW:
                continue
            if any(first.seq <= r < second.seq for r in reads):
                continue  # the book was read in between: a reconciled, deliberate second order
            hits.append(
                Hit(
                    (first.ref, second.ref),
                    (first.inst.key,),
                    f"{first.ref} and {second.ref}: {first.side} {first.quantity} "
                    f"{first.inst.key} at {first.price:g}",
                )
            )
    return hits


def _fat_finger(book: Book, mem: Memory) -> list[Hit]:
    hits = []
    for order in book.orders_placed:
        if order.placed_by == exposure.SQUARE_OFF_USER or order.status == "REJECTED":
            continue
        inst = order.inst
        ltp = book.sim.engine.ltp(inst)
        reasons = []
        for name, value in (("price", order.price), ("trigger", order.trigger_price)):
            if value and ltp and abs(value - ltp) / ltp * 100 > FAT_FINGER.price_distance_pct:
                reasons.append(
                    f"{name} {value:g} is {abs(value - ltp) / ltp * 100:.1f}% from the last "
                    f"price {ltp:g}"
                )
        price = order.price or order.trigger_price or ltp
        parts = margin_for(
            inst,
            order.product,
            order.transaction_type,
            order.quantity,
            price,
            book.sim.engine.underlying_price(inst),
        )
        needed = total(parts)
        net = book.sim.engine.net(inst.margin_segment)
        if order.status != "CANCELLED":
            net += needed  # the net the person saw before this order blocked its margin
        if needed and net > 0 and needed > net * FAT_FINGER.net_share_pct / 100:
            reasons.append(f"needs {needed:,.0f}, {needed / net * 100:.0f}% of net {net:,.0f}")
        if reasons:
            hits.append(Hit((f"order {order.order_id}",), (inst.key,), "; ".join(reasons)))
    return hits


def _stop_cannot_fire(book: Book, mem: Memory) -> list[Hit]:
    engine = book.sim.engine
    hits = []
    for item in book.live:
        if item.order_type != "GTT" or item.side != "SELL" or not item.inst.is_equity:
            continue
        holding = engine.holdings.get(item.inst.key)
        demat = holding.demat_free() if holding else 0
        if item.quantity > demat:
            why = f"sells {item.quantity}, only {demat} in demat"
        elif not standing_authorisation(engine.demat_consent) and holding is not None:
            authorised = max(holding.authorised_quantity - holding.sold_authorised, 0)
            if item.quantity <= authorised:
                continue
            why = (
                f"sells {item.quantity}, {authorised} authorised today and demat_consent "
                f"{engine.demat_consent or 'empty'} is no standing authorisation"
            )
        else:
            continue
        hits.append(Hit((item.ref,), (item.inst.key,), f"{item.ref} on {item.inst.key} {why}"))
    return hits


_TESTS: Final = "tests/sandbox/test_watch.py::"


def _shared(row: exposure.Rule) -> Rule:
    """One of the four rules the guard enforces too: its check and texts are exposure's."""
    slug = row.name.replace("-", "_")
    return Rule(
        row.name,
        row.detects,
        row.message,
        row.source,
        f"{_TESTS}test_{slug}_fires",
        f"{_TESTS}test_{slug}_quiet",
        row.check,
    )


RULES: Final[tuple[Rule, ...]] = (
    *(_shared(row) for row in exposure.RULES),
    Rule(
        "product-mismatch",
        "an MIS leg hedging an NRML or CNC leg: the 15:25 auto square-off closes the hedge "
        "and leaves the carried leg naked",
        "an MIS leg hedges a carried (NRML/CNC) leg: use the short's product for its hedge",
        "Zerodha support intraday-auto-square-off-timings; derivatives/spreads.md; catalog "
        "review 4 X7",
        _TESTS + "test_product_mismatch_fires",
        _TESTS + "test_product_mismatch_quiet",
        _product_mismatch,
    ),
    Rule(
        "duplicate-intent",
        f"two live orders with the same instrument, side, quantity and price placed within "
        f"{DUPLICATE_WINDOW.seconds // 60} minutes, with no read of the order book between "
        "them (a reconciled retry)",
        "the same order is live twice: reconcile the book before any retry",
        "orders/reconcile.md; derivatives/spreads.md step 7 ('Look for duplicates')",
        _TESTS + "test_duplicate_intent_fires",
        _TESTS + "test_duplicate_intent_quiet",
        _duplicate_intent,
    ),
    Rule(
        "fat-finger",
        f"an order whose margin (its value for a cash or option buy) is above "
        f"{FAT_FINGER.net_share_pct}% of the segment's net, or whose limit or trigger is more "
        f"than {FAT_FINGER.price_distance_pct}% from the last price",
        "an order beyond the fat-finger guard went in: the summary must warn and the person "
        "approve it",
        "orders/prepare.md step 11 (the fat-finger guard and its defaults)",
        _TESTS + "test_fat_finger_fires",
        _TESTS + "test_fat_finger_quiet",
        _fat_finger,
        momentary=True,
    ),
    Rule(
        "stop-cannot-fire",
        "a sell GTT above the demat quantity, or one that needs a same-day TPIN authorisation "
        "the account has not given (demat_consent other than physical)",
        "this stop cannot fire: size it to the demat shares, and without POA (physical) "
        "authorise the TPIN on the day",
        "Zerodha support why-was-my-sell-gtt-order-rejected; "
        "orders/reference/selling-held-shares.md; catalog review 4 X5",
        _TESTS + "test_stop_cannot_fire_fires",
        _TESTS + "test_stop_cannot_fire_quiet",
        _stop_cannot_fire,
    ),
)


def _seq(order_id: str) -> int:
    return int(order_id[-9:]) - 200000000


def _order_live(order: Order) -> Live:
    return Live(
        f"order {order.order_id}",
        order.inst,
        order.transaction_type,
        order.pending_quantity,
        order.product,
        order.order_type,
        order.price,
        order.trigger_price,
        order.placed_at,
        _seq(order.order_id),
        order.placed_by,
    )


@dataclass
class Watch:
    """The rules' state over one simulation. :meth:`look` returns the findings it made."""

    sim: Watched
    rules: tuple[Rule, ...] = RULES
    active: dict[tuple[str, tuple[Any, ...]], Finding] = field(default_factory=dict)
    memory: dict[str, Memory] = field(default_factory=dict)
    _seen: set[str] = field(default_factory=set)
    _live: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        # The scenario's own orders were placed before the watch began: judged as they stand,
        # never as new placements.
        self._seen = set(self.sim.engine.orders)

    def book(self, cause: str) -> Book:
        engine = self.sim.engine
        legs = [Leg(p.inst, p.product, p.quantity) for p in engine.positions.values() if p.quantity]
        legs += [Leg(h.inst, "CNC", h.quantity) for h in engine.holdings.values() if h.quantity]
        live: list[Live] = []
        placed: list[Live] = []
        orders_placed: list[Order] = []
        for order in engine.orders.values():
            item = _order_live(order)
            if order.status in WORKING:
                live.append(item)
            if order.order_id not in self._seen:
                self._seen.add(order.order_id)
                placed.append(item)
                orders_placed.append(order)
        for trigger in self.sim.gtts.values():
            if trigger.status == "active":
                live.extend(
                    exposure.gtt_live(
                        f"GTT {trigger.id}", trigger.inst, trigger.orders, trigger.created_at
                    )
                )
        refs = {item.ref for item in live}
        gone = set()
        if cause == "call":
            for ref in self._live - refs:
                kind, _, ident = ref.partition(" ")
                if kind == "order":
                    cancelled = engine.orders.get(ident)
                    if cancelled is not None and cancelled.status == "CANCELLED":
                        gone.add(ref)
                elif self.sim.gtts[int(ident)].status == "deleted":
                    gone.add(ref)
        self._live = refs
        return Book(cause, legs, live, placed, gone, engine.now, orders_placed, self.sim)

    def look(self, cause: str) -> list[Finding]:
        """Judge the account now; returns the states that began or ended."""
        book = self.book(cause)
        out: list[Finding] = []
        for rule in self.rules:
            hits = {hit.key: hit for hit in rule.check(book, self.memory.setdefault(rule.name, {}))}
            for key, hit in hits.items():
                if (rule.name, key) in self.active:
                    continue
                began = Finding(
                    book.at, rule.name, "began", hit.instruments, hit.detail, rule.message, book.at
                )
                out.append(began)
                if rule.momentary:
                    out.append(_ended(began, book.at))
                else:
                    self.active[(rule.name, key)] = began
            for name, key in [k for k in self.active if k[0] == rule.name and k[1] not in hits]:
                out.append(_ended(self.active.pop((name, key)), book.at))
        return out


def _ended(began: Finding, at: datetime) -> Finding:
    return Finding(
        at, began.rule, "ended", began.instruments, began.detail, began.message, began.began
    )


def rule(name: str) -> Rule:
    for row in RULES:
        if row.name == name:
            return row
    raise KeyError(name)
