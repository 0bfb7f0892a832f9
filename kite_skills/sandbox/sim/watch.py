"""The watch (issue 41 §1): after every tool call and every simulation event, each rule looks at
the account and says whether it is exposed. A rule is one row of :data:`RULES`: its name, what
it detects, the message a person reads, its source, and the two tests that prove it (one where
it fires, one where it must not, in tests/sandbox/test_watch.py).

The watch never changes what a tool answers. A state that begins is a ``began`` finding and
one that ends an ``ended`` finding (with how long it lasted); the adapter journals both, and
``--watch strict`` refuses a call whose effect would begin one.

Quantities are in units (Kite's F&O quantities are units, not lots). An underlying's two
sides are judged apart: the *up* side (short calls and short futures are exposed; long calls,
long futures and held shares cover them) and the *down* side (short puts and long futures are
exposed; long puts and short futures cover them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final, Protocol

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
SQUARE_OFF_USER: Final = "ADMINSQF"  # who places the broker's auto square-off orders


@dataclass(frozen=True)
class Leg:
    """An open position or a holding."""

    inst: Instrument
    product: str
    quantity: int  # signed units


@dataclass(frozen=True)
class Live:
    """A working order, or an active GTT's legs on one side (a two-leg GTT sells once)."""

    ref: str  # "order 261202200000004" or "GTT 100001"
    inst: Instrument
    side: str
    quantity: int  # pending units
    product: str
    order_type: str  # "GTT" for a GTT
    price: float
    trigger: float
    placed_at: datetime
    seq: int  # the order's place in the day's sequence (0 for a GTT)
    placed_by: str = ""


def group(inst: Instrument) -> str:
    """The underlying a leg belongs to: a derivative's underlying, else the instrument."""
    return inst.underlying or inst.key


def _sides(legs: Iterable[Leg]) -> dict[tuple[str, str], list[int]]:
    """(underlying, side) → [exposed, covered, exposed by MIS legs, covered by MIS legs]."""
    out: dict[tuple[str, str], list[int]] = {}

    def add(g: str, side: str, index: int, qty: int, mis: bool) -> None:
        row = out.setdefault((g, side), [0, 0, 0, 0])
        row[index] += qty
        if mis:
            row[index + 2] += qty

    for leg in legs:
        q = leg.quantity
        if q == 0:
            continue
        g, kind, mis = group(leg.inst), leg.inst.instrument_type, leg.product == "MIS"
        if kind == "CE":
            add(g, "up", 0 if q < 0 else 1, abs(q), mis)
        elif kind == "PE":
            add(g, "down", 0 if q < 0 else 1, abs(q), mis)
        elif kind == "FUT":
            add(g, "up", 1 if q > 0 else 0, abs(q), mis)
            add(g, "down", 0 if q > 0 else 1, abs(q), mis)
        elif q > 0:  # shares held or bought cover a short call
            add(g, "up", 1, q, mis)
    return out


def _side_of(inst: Instrument) -> str:
    return "up" if inst.instrument_type == "CE" else "down"


@dataclass
class Book:
    """The account as a rule sees it at one moment."""

    at: datetime
    cause: str  # "call" or "event"
    legs: list[Leg]
    live: list[Live]
    placed: list[tuple[Order, Live]]  # orders new since the last look (any status now)
    gone_by_call: set[str]  # live at the last look, cancelled or deleted by this call
    sim: Watched
    _sides: dict[tuple[str, str], list[int]] | None = None
    _open: dict[tuple[str, bool], int] | None = None
    _by_key: dict[str, list[Live]] | None = None

    def sides(self) -> dict[tuple[str, str], list[int]]:
        if self._sides is None:
            self._sides = _sides(self.legs)
        return self._sides

    def open_quantity(self, key: str, cnc: bool) -> int:
        """The open quantity of an instrument: its CNC legs (holdings and delivery) or the
        others (MIS, NRML)."""
        if self._open is None:
            self._open = {}
            for leg in self.legs:
                at = (leg.inst.key, leg.product == "CNC")
                self._open[at] = self._open.get(at, 0) + leg.quantity
        return self._open.get((key, cnc), 0)

    def live_on(self, key: str) -> list[Live]:
        if self._by_key is None:
            self._by_key = {}
            for item in self.live:
                self._by_key.setdefault(item.inst.key, []).append(item)
        return self._by_key.get(key, [])

    def opposite(self, key: str, qty: int, cnc: bool) -> list[Live]:
        side = "SELL" if qty > 0 else "BUY"
        return [
            item
            for item in self.live_on(key)
            if item.side == side and (item.product == "CNC") == cnc
        ]

    def short_pending(self, g: str, side: str) -> int:
        kind = "CE" if side == "up" else "PE"
        return sum(
            item.quantity
            for item in self.live
            if item.order_type != "GTT"
            and item.side == "SELL"
            and item.inst.instrument_type == kind
            and group(item.inst) == g
        )


@dataclass(frozen=True)
class Hit:
    key: tuple[Any, ...]
    instruments: tuple[str, ...]
    detail: str


Memory = dict[str, Any]
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


def _hedge_broken(book: Book, mem: Memory) -> list[Hit]:
    broken: set[tuple[str, str]] = mem.setdefault("broken", set())
    before: dict[tuple[str, str], int] = mem.get("cover", {})
    sides = book.sides()
    hits = []
    for key, (exposed, cover, _mis_exposed, _mis_cover) in sides.items():
        if cover >= exposed:
            broken.discard(key)
            continue
        # Cover lost under an open exposure; exposure that only grew (a new short or future
        # beside the hedge) is not a broken hedge.
        if cover < before.get(key, 0):
            broken.add(key)
        if key in broken:
            hits.append(
                Hit(
                    key,
                    _keys(book.legs, key),
                    f"{key[0]} {key[1]} side: {exposed} exposed, {cover} covered",
                )
            )
    broken.intersection_update(sides)
    mem["cover"] = {key: row[1] for key, row in sides.items()}
    return hits


def _short_before_hedge(book: Book, mem: Memory) -> list[Hit]:
    ahead: set[tuple[str, str]] = mem.setdefault("ahead", set())
    naked_first: set[tuple[str, str]] = mem.setdefault("naked_first", set())
    sides = book.sides()

    def uncovered(key: tuple[str, str]) -> bool:
        exposed, cover = sides.get(key, [0, 0])[:2]
        return exposed + book.short_pending(*key) > cover

    for order, _item in book.placed:
        if not order.inst.is_option or order.placed_by == SQUARE_OFF_USER:
            continue
        key = (group(order.inst), _side_of(order.inst))
        if order.transaction_type == "SELL":
            hedge_waiting = any(
                item.side == "BUY"
                and item.order_type != "GTT"
                and item.inst.instrument_type == order.inst.instrument_type
                and group(item.inst) == key[0]
                for item in book.live
            )
            if hedge_waiting:
                ahead.add(key)
            elif uncovered(key):
                naked_first.add(key)
        elif key in naked_first:
            ahead.add(key)
    hits = []
    for key in sorted(ahead):
        if uncovered(key):
            hits.append(
                Hit(key, _keys(book.legs, key), f"{key[0]} {key[1]} side: short ahead of its hedge")
            )
        else:
            ahead.discard(key)
            naked_first.discard(key)
    return hits


def _quantity(items: Iterable[Live]) -> int:
    return sum(item.quantity for item in items)


def _over_exit(book: Book, mem: Memory) -> list[Hit]:
    exits: dict[str, bool] = mem.setdefault("exits", {})
    hits = []
    keys = {item.inst.key for item in book.live if item.product != "CNC"}
    for key in sorted(keys):
        qty = book.open_quantity(key, cnc=False)
        for item in book.live_on(key):
            if item.ref not in exits:
                exits[item.ref] = qty != 0 and item.side == ("SELL" if qty > 0 else "BUY")
        live = [i for i in book.live_on(key) if exits.get(i.ref) and i.product != "CNC"]
        pending = _quantity(live)
        if pending > abs(qty):
            hits.append(
                Hit(
                    (key,),
                    (key,),
                    f"{key}: exits for {pending} ({', '.join(i.ref for i in live)}) "
                    f"against {abs(qty)} open",
                )
            )
    return hits


def _protection(items: Iterable[Live]) -> list[Live]:
    return [i for i in items if i.order_type in ("SL", "SL-M", "GTT")]


def _protection_removed(book: Book, mem: Memory) -> list[Hit]:
    before: dict[tuple[str, bool], tuple[int, set[str]]] = mem.get("before", {})
    removed: dict[tuple[str, bool], int] = mem.setdefault("removed", {})
    now: dict[tuple[str, bool], tuple[int, set[str]]] = {}
    hits = []
    # Only an instrument with something on its exit side now, or protected at the last look,
    # can lose protection.
    keys = set(before) | set(removed) | {(i.inst.key, i.product == "CNC") for i in book.live}
    for key, cnc in sorted(keys):
        qty = book.open_quantity(key, cnc)
        if qty == 0:
            removed.pop((key, cnc), None)
            continue
        opposite = book.opposite(key, qty, cnc)
        guards = _protection(opposite)
        now[(key, cnc)] = (_quantity(guards), {g.ref for g in guards})
        was, refs = before.get((key, cnc), (0, set()))
        if book.cause == "call" and refs & book.gone_by_call and (key, cnc) not in removed:
            if _quantity(opposite) < min(abs(qty), was):
                removed[(key, cnc)] = min(abs(qty), was)
        need = removed.get((key, cnc))
        if need is not None:
            left = _quantity(opposite)
            if left < need:
                hits.append(
                    Hit(
                        (key, cnc),
                        (key,),
                        f"{key}: {abs(qty)} open, {left} of {need} still protected",
                    )
                )
            else:
                del removed[(key, cnc)]
    mem["before"] = now
    return hits


def _product_mismatch(book: Book, mem: Memory) -> list[Hit]:
    hits = []
    for key, (exposed, cover, mis_exposed, mis_cover) in sorted(book.sides().items()):
        carried_exposed, carried_cover = exposed - mis_exposed, cover - mis_cover
        if carried_exposed > carried_cover and mis_cover > 0:
            hits.append(
                Hit(
                    key,
                    _keys(book.legs, key),
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
    for order, _item in book.placed:
        if order.placed_by == SQUARE_OFF_USER or order.status == "REJECTED":
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


def _keys(legs: Iterable[Leg], key: tuple[str, str]) -> tuple[str, ...]:
    kinds = ("CE", "FUT", "EQ") if key[1] == "up" else ("PE", "FUT")
    return tuple(
        sorted(
            {
                leg.inst.key
                for leg in legs
                if group(leg.inst) == key[0] and leg.inst.instrument_type in kinds and leg.quantity
            }
        )
    )


_TESTS: Final = "tests/sandbox/test_watch.py::"

RULES: Final[tuple[Rule, ...]] = (
    Rule(
        "hedge-broken",
        "an option short (or a future) that had a covering long of the same underlying loses "
        "it while the short stays open, even for one call",
        "a hedged leg is now naked: close the short before its hedge, or restore the hedge",
        "derivatives/spreads.md ('buy back the short leg first, then sell the long'); Zerodha "
        "support gtt-fno ('if a GTT closes one side of a hedged position, the margin "
        "requirement … may go up'); catalog review 4 X2",
        _TESTS + "test_hedge_broken_fires",
        _TESTS + "test_hedge_broken_quiet",
        _hedge_broken,
    ),
    Rule(
        "short-before-hedge",
        "a new short option leg placed while the long leg that hedges it is not yet filled "
        "(or before that long leg is placed)",
        "the short leg went in before its hedge filled: place the hedge first and the short "
        "only once the hedge is COMPLETE",
        "derivatives/spreads.md step 8 ('the short leg gets its own approval after the hedge "
        "has filled'); catalog review 4 X2",
        _TESTS + "test_short_before_hedge_fires",
        _TESTS + "test_short_before_hedge_quiet",
        _short_before_hedge,
    ),
    Rule(
        "over-exit",
        "live exit orders (SL, LIMIT, GTT legs) on a position for more than its open "
        "quantity: when one fills, the other opens a new position (CNC sells are left to "
        "Kite, which refuses a sell beyond the holdings)",
        "exit orders exceed the open quantity: when one fills, cancel the other at once, or "
        "use one two-leg GTT",
        "orders/entry-stop-target.md ('When one fills, the other must be cancelled at once, "
        "or it opens a new position'); catalog review 4 X3",
        _TESTS + "test_over_exit_fires",
        _TESTS + "test_over_exit_quiet",
        _over_exit,
    ),
    Rule(
        "protection-removed",
        "a stop (SL or SL-M order) or a GTT that protected an open position or holding is "
        "cancelled or deleted by a call while the position stays open, with no replacement "
        "(an order on the exit side for as much)",
        "the only stop on an open position was removed: keep it, or place its replacement first",
        "orders/cancel-all.md; catalog review 4 X6",
        _TESTS + "test_protection_removed_fires",
        _TESTS + "test_protection_removed_quiet",
        _protection_removed,
    ),
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


def _gtt_live(trigger: Gtt) -> list[Live]:
    out = []
    for side in ("SELL", "BUY"):
        legs = [leg for leg in trigger.orders if leg["transaction_type"] == side]
        if legs:  # a two-leg GTT's legs are one-cancels-other: it trades once
            out.append(
                Live(
                    f"GTT {trigger.id}",
                    trigger.inst,
                    side,
                    max(int(leg["quantity"]) for leg in legs),
                    str(legs[0]["product"]),
                    "GTT",
                    float(legs[0]["price"]),
                    0.0,
                    trigger.created_at,
                    0,
                )
            )
    return out


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
        placed: list[tuple[Order, Live]] = []
        for order in engine.orders.values():
            item = _order_live(order)
            if order.status in WORKING:
                live.append(item)
            if order.order_id not in self._seen:
                self._seen.add(order.order_id)
                placed.append((order, item))
        for trigger in self.sim.gtts.values():
            if trigger.status == "active":
                live.extend(_gtt_live(trigger))
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
        return Book(engine.now, cause, legs, live, placed, gone, self.sim)

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
