"""The four watch rules that both the sandbox's watch and the guard enforce (issue 41 §1, issue
44 §2): hedge broken, short before its hedge, over-exit, protection removed. Each is one row of
:data:`RULES` here (its name, what it detects, the message a person reads, its source, its
check), and both ask this module: the sandbox judges its account after every call and event
(kite_skills/sandbox/sim/watch.py), the guard judges the account as it would be after a write,
before sending it (kite_skills/guard/judge.py).

A pure module. A rule looks at a :class:`Book` (legs, live orders, what this call placed or
removed) and remembers what it needs between looks in its ``Memory``. An instrument is anything
with a key, an instrument type and an underlying: the sandbox's instrument master, or the
guard's contract read off the symbol (``calc.exits``).

Quantities are in units (Kite's F&O quantities are units, not lots). An underlying's two sides
are judged apart: the *up* side (short calls and short futures are exposed; long calls, long
futures and held shares cover them) and the *down* side (short puts and long futures are
exposed; long puts and short futures cover them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Generic, Protocol, TypeVar

SQUARE_OFF_USER: Final = "ADMINSQF"  # who places the broker's auto square-off orders
STOPS: Final = ("SL", "SL-M", "GTT")  # the order types that protect a position


class Instrument(Protocol):
    @property
    def key(self) -> str: ...  # EXCHANGE:TRADINGSYMBOL

    @property
    def instrument_type(self) -> str: ...  # EQ, FUT, CE, PE

    @property
    def underlying(self) -> str: ...  # "" where the instrument is its own underlying


Inst = TypeVar("Inst", bound=Instrument)


@dataclass(frozen=True)
class Leg(Generic[Inst]):
    """An open position or a holding."""

    inst: Inst
    product: str
    quantity: int  # signed units


@dataclass(frozen=True)
class Live(Generic[Inst]):
    """A working order, or an active GTT's legs on one side (a two-leg GTT sells once)."""

    ref: str  # "order 261202200000004" or "GTT 100001"
    inst: Inst
    side: str
    quantity: int  # pending units
    product: str
    order_type: str  # "GTT" for a GTT
    price: float
    trigger: float
    placed_at: datetime
    seq: int  # the order's place in the day's sequence (0 for a GTT)
    placed_by: str = ""


def gtt_live(
    ref: str, inst: Inst, legs: Iterable[Mapping[str, Any]], at: datetime
) -> list[Live[Inst]]:
    """An active GTT's live items: one per side its legs trade (a two-leg GTT's legs are
    one-cancels-other: it trades once, the larger leg)."""
    legs = list(legs)
    out = []
    for side in ("SELL", "BUY"):
        mine = [leg for leg in legs if leg.get("transaction_type") == side]
        if mine:
            out.append(
                Live(
                    ref,
                    inst,
                    side,
                    max(int(leg.get("quantity") or 0) for leg in mine),
                    str(mine[0].get("product") or ""),
                    "GTT",
                    float(mine[0].get("price") or 0),
                    0.0,
                    at,
                    0,
                )
            )
    return out


def group(inst: Instrument) -> str:
    """The underlying a leg belongs to: a derivative's underlying, else the instrument."""
    return inst.underlying or inst.key


def is_option(inst: Instrument) -> bool:
    return inst.instrument_type in ("CE", "PE")


def _sides(legs: Iterable[Leg[Any]]) -> dict[tuple[str, str], list[int]]:
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
class Book(Generic[Inst]):
    """The account as a rule sees it at one moment."""

    cause: str  # "call" or "event"
    legs: list[Leg[Inst]]
    live: list[Live[Inst]]
    placed: list[Live[Inst]]  # orders new since the last look (any status now)
    gone_by_call: set[str]  # live at the last look, cancelled or deleted by this call
    _sides: dict[tuple[str, str], list[int]] | None = field(default=None, init=False, repr=False)
    _open: dict[tuple[str, bool], int] | None = field(default=None, init=False, repr=False)
    _by_key: dict[str, list[Live[Inst]]] | None = field(default=None, init=False, repr=False)

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

    def live_on(self, key: str) -> list[Live[Inst]]:
        if self._by_key is None:
            self._by_key = {}
            for item in self.live:
                self._by_key.setdefault(item.inst.key, []).append(item)
        return self._by_key.get(key, [])

    def opposite(self, key: str, qty: int, cnc: bool) -> list[Live[Inst]]:
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
Check = Callable[[Book[Any], Memory], list[Hit]]


@dataclass(frozen=True)
class Rule:
    name: str
    detects: str
    message: str
    source: str
    check: Check


# ----- the checks ---------------------------------------------------------------------------


def _hedge_broken(book: Book[Any], mem: Memory) -> list[Hit]:
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
                    instruments_on(book.legs, key),
                    f"{key[0]} {key[1]} side: {exposed} exposed, {cover} covered",
                )
            )
    broken.intersection_update(sides)
    mem["cover"] = {key: row[1] for key, row in sides.items()}
    return hits


def _short_before_hedge(book: Book[Any], mem: Memory) -> list[Hit]:
    ahead: set[tuple[str, str]] = mem.setdefault("ahead", set())
    naked_first: set[tuple[str, str]] = mem.setdefault("naked_first", set())
    sides = book.sides()

    def uncovered(key: tuple[str, str]) -> bool:
        exposed, cover = sides.get(key, [0, 0])[:2]
        return exposed + book.short_pending(*key) > cover

    for order in book.placed:
        if not is_option(order.inst) or order.placed_by == SQUARE_OFF_USER:
            continue
        key = (group(order.inst), _side_of(order.inst))
        if order.side == "SELL":
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
                Hit(
                    key,
                    instruments_on(book.legs, key),
                    f"{key[0]} {key[1]} side: short ahead of its hedge",
                )
            )
        else:
            ahead.discard(key)
            naked_first.discard(key)
    return hits


def quantity(items: Iterable[Live[Any]]) -> int:
    return sum(item.quantity for item in items)


def _over_exit(book: Book[Any], mem: Memory) -> list[Hit]:
    exits: dict[str, bool] = mem.setdefault("exits", {})
    hits = []
    keys = {item.inst.key for item in book.live if item.product != "CNC"}
    for key in sorted(keys):
        qty = book.open_quantity(key, cnc=False)
        for item in book.live_on(key):
            if item.ref not in exits:
                exits[item.ref] = qty != 0 and item.side == ("SELL" if qty > 0 else "BUY")
        live = [i for i in book.live_on(key) if exits.get(i.ref) and i.product != "CNC"]
        pending = quantity(live)
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


def _protection_removed(book: Book[Any], mem: Memory) -> list[Hit]:
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
        guards = [i for i in opposite if i.order_type in STOPS]
        now[(key, cnc)] = (quantity(guards), {g.ref for g in guards})
        was, refs = before.get((key, cnc), (0, set()))
        if book.cause == "call" and refs & book.gone_by_call and (key, cnc) not in removed:
            if quantity(opposite) < min(abs(qty), was):
                removed[(key, cnc)] = min(abs(qty), was)
        need = removed.get((key, cnc))
        if need is not None:
            left = quantity(opposite)
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


def instruments_on(legs: Iterable[Leg[Any]], key: tuple[str, str]) -> tuple[str, ...]:
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


HEDGE_BROKEN: Final = Rule(
    "hedge-broken",
    "an option short (or a future) that had a covering long of the same underlying loses "
    "it while the short stays open, even for one call",
    "a hedged leg is now naked: close the short before its hedge, or restore the hedge",
    "derivatives/spreads.md ('buy back the short leg first, then sell the long'); Zerodha "
    "support gtt-fno ('if a GTT closes one side of a hedged position, the margin "
    "requirement … may go up'); catalog review 4 X2",
    _hedge_broken,
)
SHORT_BEFORE_HEDGE: Final = Rule(
    "short-before-hedge",
    "a new short option leg placed while the long leg that hedges it is not yet filled "
    "(or before that long leg is placed)",
    "the short leg went in before its hedge filled: place the hedge first and the short "
    "only once the hedge is COMPLETE",
    "derivatives/spreads.md step 8 ('the short leg gets its own approval after the hedge "
    "has filled'); catalog review 4 X2",
    _short_before_hedge,
)
OVER_EXIT: Final = Rule(
    "over-exit",
    "live exit orders (SL, LIMIT, GTT legs) on a position for more than its open "
    "quantity: when one fills, the other opens a new position (CNC sells are left to "
    "Kite, which refuses a sell beyond the holdings)",
    "exit orders exceed the open quantity: when one fills, cancel the other at once, or "
    "use one two-leg GTT",
    "orders/entry-stop-target.md ('When one fills, the other must be cancelled at once, "
    "or it opens a new position'); catalog review 4 X3",
    _over_exit,
)
PROTECTION_REMOVED: Final = Rule(
    "protection-removed",
    "a stop (SL or SL-M order) or a GTT that protected an open position or holding is "
    "cancelled or deleted by a call while the position stays open, with no replacement "
    "(an order on the exit side for as much)",
    "the only stop on an open position was removed: keep it, or place its replacement first",
    "orders/cancel-all.md; catalog review 4 X6",
    _protection_removed,
)
RULES: Final = (HEDGE_BROKEN, SHORT_BEFORE_HEDGE, OVER_EXIT, PROTECTION_REMOVED)
