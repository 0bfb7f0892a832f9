"""Kite's rules as the simulation enforces them, each one row (issue 41 §5): its name, the
check, the text a refusal carries (rules.py, where each text's source is), the rule's source
and the test that shows it. A table is the rules one call checks, in the order Kite checks
them, the first broken one answering; a rule two calls share (a tick rule, a circuit limit)
is one row in both tables. A new Kite rule is a new row and its test; ``ALL_RULES`` is every
row, which tests/sandbox/test_sim_rejections.py walks.

What a row judges is a case: an order as the call would leave it (:class:`OrderCase`), a GTT's
definition (:class:`GttCase`), a delivery sell's shares (:class:`SellCase`), a margin
(:class:`FundsCase`), an MIS order or conversion (:class:`MisCase`), a conversion's position
(:class:`ConversionCase`), the variety a call names, what a lookup found, or a count."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Generic, TypeVar

from . import rules, sessions
from .alerts import OPERATORS
from .errors import KiteConnectError
from .instruments import EQUITY_MAX_QUANTITY, Instrument
from .market import on_tick
from .order_request import OrderRequest

VARIETIES: Final = ("regular", "amo", "co", "iceberg", "auction")
PRODUCTS: Final = ("CNC", "MIS", "NRML", "MTF")
ORDER_TYPES: Final = ("MARKET", "LIMIT", "SL", "SL-M")
VALIDITIES: Final = ("DAY", "IOC", "TTL")
INDEX_OPTIONS_WITH_MARKET: Final = ("NIFTY", "BANKNIFTY")
WORKING: Final = ("OPEN", "TRIGGER PENDING", "AMO REQ RECEIVED")
AMO_WAITING: Final = "AMO REQ RECEIVED"

C = TypeVar("C")

REFUSED = "tests/sandbox/test_sim_rejections.py::test_refused_before_the_book"
IN_THE_BOOK = "tests/sandbox/test_sim_rejections.py::test_rejected_in_the_book"


@dataclass(frozen=True)
class KiteRule(Generic[C]):
    name: str
    breaks: Callable[[C], bool]  # the check: True when broken
    text: str  # rules.py's text; a template that ``fields`` fills
    source: str
    test: str  # the test case that shows the refusal: path::function[case]
    fields: Callable[[C], Mapping[str, object]] | None = None
    error_type: str = "InputException"
    status: int = 400

    def refusal(self, case: C) -> str:
        return self.text if self.fields is None else self.text.format(**self.fields(case))

    def error(self, case: C) -> KiteConnectError:
        return KiteConnectError(self.error_type, self.refusal(case), self.status)


def broken(table: Sequence[KiteRule[C]], case: C) -> KiteRule[C] | None:
    """The first rule of ``table`` that ``case`` breaks, else None."""
    for rule in table:
        if rule.breaks(case):
            return rule
    return None


def check(table: Sequence[KiteRule[C]], case: C) -> None:
    """Raise Kite's refusal of the first rule of ``table`` that ``case`` breaks."""
    rule = broken(table, case)
    if rule is not None:
        raise rule.error(case)


# ----- the cases ------------------------------------------------------------------------------


@dataclass(frozen=True)
class OrderCase:
    """An order as the call would leave it (a place: the request; a modify: the order with
    its new terms; a cancel, an exchange's check: the order), and what Kite judges it by."""

    request: OrderRequest
    inst: Instrument
    now: datetime
    variety: str  # the variety the call names (a place: the request's)
    status: str = ""  # the book's status; "" for an order not yet in the book
    modifications: int = 0
    filled: int = 0
    ltp: float = 0.0
    lower: float = 0.0  # today's circuit limits (0: none)
    upper: float = 0.0


@dataclass(frozen=True)
class MisCase:
    """A fresh MIS order or a conversion to MIS: refused from ``cutoff`` until ``until``."""

    product: str
    now: datetime
    cutoff: datetime
    until: datetime


@dataclass(frozen=True)
class SellCase:
    """A delivery sell: its quantity, the shares free for it, and how many of its demat
    shares have no authorisation."""

    quantity: int
    free: int
    unauthorised: int


@dataclass(frozen=True)
class FundsCase:
    required: float
    available: float


@dataclass(frozen=True)
class ConversionCase:
    """A position conversion: the quantity held on the converted side, and asked for."""

    held: int
    quantity: int


@dataclass(frozen=True)
class GttCase:
    """A GTT's definition: its trigger, the last price it was made against, its legs' prices
    and the instrument's tick."""

    type: str
    values: tuple[float, ...]
    last_price: float
    legs: int
    prices: tuple[float, ...]
    tick: float


# ----- helpers --------------------------------------------------------------------------------


def _lot(inst: Instrument) -> int:
    return max(inst.lot_size, 1)


def _legs(r: OrderRequest) -> int:
    return int(r.iceberg_legs or 0)


def _slice(r: OrderRequest) -> int:
    """The quantity one order sends to the exchange (an iceberg's leg)."""
    return int(r.iceberg_quantity or r.quantity) if r.variety == "iceberg" else r.quantity


def _price(c: OrderCase) -> float:
    return float(c.request.price or 0.0)


def _trigger(c: OrderCase) -> float:
    return float(c.request.trigger_price or 0.0)


def _priced(c: OrderCase) -> bool:
    return c.request.order_type in ("LIMIT", "SL")


def _stop(c: OrderCase) -> bool:
    return c.request.order_type in ("SL", "SL-M")


def _bad(name: str) -> str:
    return rules.BAD_PARAM.format(name=name)


def _freeze(c: OrderCase) -> Mapping[str, object]:
    return {
        "qty": c.request.quantity,
        "lots": c.request.quantity // _lot(c.inst),
        "freeze": c.inst.freeze_quantity,
        "freeze_lots": c.inst.freeze_quantity // _lot(c.inst),
    }


def _lower(c: OrderCase) -> Mapping[str, object]:
    return {"limit": f"{c.lower:.2f}"}


def _upper(c: OrderCase) -> Mapping[str, object]:
    return {"limit": f"{c.upper:.2f}"}


def _ltp(c: OrderCase) -> Mapping[str, object]:
    return {"ltp": f"{c.ltp:.2f}"}


def _amo_window(c: OrderCase) -> Mapping[str, object]:
    return {"window": rules.AMO_WINDOWS[c.inst.exchange]}


def _status(c: OrderCase) -> Mapping[str, object]:
    return {"status": c.status.lower()}


# ----- the variety a call names, the instrument it names --------------------------------------

BAD_VARIETY = KiteRule[str](
    "variety",
    lambda v: v not in VARIETIES,
    rules.BAD_VARIETY,
    "Kite Connect orders API (regular, amo, co, iceberg, auction)",
    f"{REFUSED}[BAD_VARIETY]",
)
VARIETY_RULES: Final[tuple[KiteRule[str], ...]] = (
    BAD_VARIETY,
    KiteRule[str](
        "cover orders",
        lambda v: v == "co",
        rules.CO_UNSUPPORTED,
        "sandbox limitation: cover orders are not simulated",
        f"{REFUSED}[CO_UNSUPPORTED]",
    ),
    KiteRule[str](
        "auction orders",
        lambda v: v == "auction",
        rules.NO_AUCTION,
        "Kite Connect orders API (auction_number: an auction running for the instrument)",
        f"{REFUSED}[NO_AUCTION]",
    ),
)
INSTRUMENT_RULES: Final[tuple[KiteRule[Instrument | None], ...]] = (
    KiteRule[Instrument | None](
        "instrument",
        lambda inst: inst is None or inst.is_index,
        rules.UNKNOWN_INSTRUMENT,
        "Kite Connect orders API (an index is not tradable)",
        f"{REFUSED}[UNKNOWN_INSTRUMENT]",
    ),
)

# ----- an order's terms: place, modify, a GTT's leg -------------------------------------------

TRANSACTION_TYPE = KiteRule[OrderCase](
    "transaction type",
    lambda c: c.request.transaction_type not in ("BUY", "SELL"),
    _bad("transaction_type"),
    "Kite Connect orders API (BUY or SELL)",
    f"{REFUSED}[BAD_PARAM transaction_type]",
)
ORDER_TYPE = KiteRule[OrderCase](
    "order type",
    lambda c: c.request.order_type not in ORDER_TYPES,
    _bad("order_type"),
    "rules.md §3",
    f"{REFUSED}[BAD_PARAM order_type]",
)
QUANTITY = KiteRule[OrderCase](
    "quantity",
    lambda c: (
        isinstance(c.request.quantity, bool)
        or not isinstance(c.request.quantity, int)
        or c.request.quantity <= 0
    ),
    rules.BAD_QUANTITY,
    "Kite Connect orders API",
    f"{REFUSED}[BAD_QUANTITY zero]",
)
LIMIT_PRICE = KiteRule[OrderCase](
    "limit price",
    lambda c: _priced(c) and _price(c) <= 0,
    rules.NEEDS_PRICE,
    "rules.md §3",
    f"{REFUSED}[NEEDS_PRICE]",
)
TRIGGER_PRICE = KiteRule[OrderCase](
    "trigger price",
    lambda c: _stop(c) and _trigger(c) <= 0,
    rules.NEEDS_TRIGGER,
    "rules.md §3",
    f"{REFUSED}[NEEDS_TRIGGER]",
)
MARKET_PROTECTION = KiteRule[OrderCase](
    "market protection",
    lambda c: (
        c.request.order_type in ("MARKET", "SL-M") and float(c.request.market_protection or 0) == 0
    ),
    rules.NO_PROTECTION,
    "rules.md §3: MARKET and SL-M need a non-zero market_protection via the API",
    f"{REFUSED}[NO_PROTECTION market]",
)
FREEZE = KiteRule[OrderCase](
    "freeze quantity",
    lambda c: bool(c.inst.freeze_quantity) and _slice(c.request) > c.inst.freeze_quantity,
    rules.FREEZE,
    "rules.md §2 (kite.trade/forum/discussion/comment/42709)",
    f"{REFUSED}[FREEZE]",
    fields=_freeze,
)

PLACE_RULES: Final[tuple[KiteRule[OrderCase], ...]] = (
    TRANSACTION_TYPE,
    KiteRule[OrderCase](
        "product",
        lambda c: c.request.product not in PRODUCTS,
        _bad("product"),
        "rules.md §5",
        f"{REFUSED}[BAD_PARAM product]",
    ),
    ORDER_TYPE,
    KiteRule[OrderCase](
        "validity",
        lambda c: (c.request.validity or "DAY") not in VALIDITIES,
        _bad("validity"),
        "Kite Connect orders API (DAY, IOC, TTL)",
        f"{REFUSED}[BAD_PARAM validity]",
    ),
    KiteRule[OrderCase](
        "TTL minutes",
        lambda c: (c.request.validity or "DAY") == "TTL" and not c.request.validity_ttl,
        _bad("validity_ttl"),
        "Kite Connect orders API (validity_ttl with TTL)",
        f"{REFUSED}[BAD_PARAM validity_ttl]",
    ),
    QUANTITY,
    KiteRule[OrderCase](
        "tag",
        lambda c: bool(c.request.tag) and not rules.tag_ok(c.request.tag or ""),
        rules.BAD_TAG,
        "Kite Connect orders API (tag: alphanumeric, 20 characters)",
        f"{REFUSED}[BAD_TAG dashed]",
    ),
    LIMIT_PRICE,
    TRIGGER_PRICE,
    MARKET_PROTECTION,
    KiteRule[OrderCase](
        "no MARKET in stock options",
        lambda c: (
            c.request.order_type == "MARKET"
            and c.inst.is_option
            and c.inst.name not in INDEX_OPTIONS_WITH_MARKET
        ),
        rules.STOCK_OPTION_MARKET,
        "rules.md §4 (kite.trade/docs/kite/orders)",
        f"{REFUSED}[STOCK_OPTION_MARKET]",
    ),
    KiteRule[OrderCase](
        "no MARKET AMO in index options",
        lambda c: (
            c.request.order_type == "MARKET" and c.inst.is_option and c.request.variety == "amo"
        ),
        rules.INDEX_OPTION_MARKET_AMO,
        "rules.md §4",
        f"{REFUSED}[INDEX_OPTION_MARKET_AMO]",
    ),
    KiteRule[OrderCase](
        "disclosed quantity",
        lambda c: (
            bool(c.request.disclosed_quantity)
            and (c.request.disclosed_quantity or 0) > c.request.quantity
        ),
        rules.DISCLOSED_QTY,
        "Kite Connect orders API",
        f"{REFUSED}[DISCLOSED_QTY]",
    ),
    KiteRule[OrderCase](
        "iceberg legs",
        lambda c: c.request.variety == "iceberg" and not 2 <= _legs(c.request) <= 50,
        rules.ICEBERG_LEGS,
        "rules.md §2 (kite.trade/forum/discussion/comment/46708)",
        f"{REFUSED}[ICEBERG_LEGS 1]",
    ),
    KiteRule[OrderCase](
        "iceberg leg quantity",
        lambda c: (
            c.request.variety == "iceberg"
            and (
                int(c.request.iceberg_quantity or 0) <= 0
                or int(c.request.iceberg_quantity or 0) * _legs(c.request) < c.request.quantity
                or int(c.request.iceberg_quantity or 0) % _lot(c.inst) != 0
            )
        ),
        rules.ICEBERG_QTY,
        "rules.md §2",
        f"{REFUSED}[ICEBERG_QTY too small]",
    ),
    FREEZE,
    KiteRule[OrderCase](
        "equity 1,00,000-share cap",
        lambda c: c.inst.is_equity and _slice(c.request) > EQUITY_MAX_QUANTITY,
        rules.EQUITY_MAX,
        "rules.md §1 (support: kite-order-rejections)",
        f"{REFUSED}[EQUITY_MAX]",
        fields=lambda c: {"qty": c.request.quantity},
    ),
)

# ----- market hours and AMOs (rules.md §5, §6) ------------------------------------------------

AMO_WINDOW = KiteRule[OrderCase](
    "AMO window",
    lambda c: (
        c.request.variety == "amo"
        and c.status in ("", AMO_WAITING)
        and not sessions.in_amo_window(c.inst.exchange, c.now)
    ),
    rules.AMO_DURING_MARKET,
    "rules.md §6 (support: kite-order-rejections): AMOs are placed, modified and cancelled "
    "only outside market hours",
    f"{REFUSED}[AMO_DURING_MARKET]",
    fields=_amo_window,
)
SESSION_RULES: Final[tuple[KiteRule[OrderCase], ...]] = (
    AMO_WINDOW,
    KiteRule[OrderCase](
        "market hours",
        lambda c: c.request.variety != "amo" and not sessions.is_open(c.inst.exchange, c.now),
        rules.MARKET_CLOSED,
        "rules.md §6 (the exchanges' session windows)",
        f"{REFUSED}[MARKET_CLOSED]",
    ),
)
MIS_RULES: Final[tuple[KiteRule[MisCase], ...]] = (
    KiteRule[MisCase](
        "fresh MIS after the auto square-off",
        lambda c: c.product == "MIS" and c.cutoff <= c.now < c.until,
        rules.MIS_BLOCKED,
        "rules.md §5 (support: MIS auto square-off times)",
        f"{REFUSED}[MIS_BLOCKED]",
        fields=lambda c: {"time": f"{c.cutoff:%H:%M}"},
    ),
)

# ----- prices against the market: circuit limits, a stop's side (rules.md §1) -----------------

CIRCUIT_RULES: Final[tuple[KiteRule[OrderCase], ...]] = (
    KiteRule[OrderCase](
        "price above the lower circuit",
        lambda c: _priced(c) and bool(c.lower) and _price(c) < c.lower,
        rules.CIRCUIT_LOW,
        "rules.md §1 (support: kite-order-rejections)",
        f"{REFUSED}[CIRCUIT_LOW]",
        fields=_lower,
    ),
    KiteRule[OrderCase](
        "price below the upper circuit",
        lambda c: _priced(c) and bool(c.upper) and _price(c) > c.upper,
        rules.CIRCUIT_HIGH,
        "rules.md §1 (support: kite-order-rejections)",
        f"{REFUSED}[CIRCUIT_HIGH]",
        fields=_upper,
    ),
    KiteRule[OrderCase](
        "sell stop above the lower circuit",
        lambda c: (
            _stop(c)
            and c.request.transaction_type == "SELL"
            and bool(c.lower)
            and _trigger(c) < c.lower
        ),
        rules.TRIGGER_CIRCUIT_SELL,
        "rules.md §1 (kite.trade/forum/discussion/3141)",
        f"{REFUSED}[TRIGGER_CIRCUIT_SELL]",
        fields=_lower,
    ),
    KiteRule[OrderCase](
        "buy stop below the upper circuit",
        lambda c: (
            _stop(c)
            and c.request.transaction_type == "BUY"
            and bool(c.upper)
            and _trigger(c) > c.upper
        ),
        rules.TRIGGER_CIRCUIT_BUY,
        "rules.md §1 (kite.trade/forum/discussion/3141)",
        f"{REFUSED}[TRIGGER_CIRCUIT_BUY]",
        fields=_upper,
    ),
)
TRIGGER_SIDE_RULES: Final[tuple[KiteRule[OrderCase], ...]] = (
    KiteRule[OrderCase](
        "buy stop above the last price",
        lambda c: (
            _stop(c)
            and c.request.variety != "amo"
            and c.request.transaction_type == "BUY"
            and _trigger(c) <= c.ltp
        ),
        rules.TRIGGER_SIDE_BUY,
        "rules.md §1 (support: kite-order-rejections)",
        f"{REFUSED}[TRIGGER_SIDE_BUY]",
        fields=_ltp,
    ),
    KiteRule[OrderCase](
        "sell stop below the last price",
        lambda c: (
            _stop(c)
            and c.request.variety != "amo"
            and c.request.transaction_type == "SELL"
            and _trigger(c) >= c.ltp
        ),
        rules.TRIGGER_SIDE_SELL,
        "rules.md §1 (support: kite-order-rejections)",
        f"{REFUSED}[TRIGGER_SIDE_SELL]",
        fields=_ltp,
    ),
)

# ----- a delivery sell's shares (rules.md §10, §11) -------------------------------------------

SELL_RULES: Final[tuple[KiteRule[SellCase], ...]] = (
    KiteRule[SellCase](
        "free holdings",
        lambda c: c.quantity > c.free,
        rules.INSUFFICIENT_HOLDINGS,
        "rules.md §10 (kite.trade/forum/discussion/comment/43891)",
        f"{REFUSED}[INSUFFICIENT_HOLDINGS]",
    ),
    KiteRule[SellCase](
        "TPIN authorisation",
        lambda c: c.unauthorised > 0,
        rules.NEEDS_AUTHORISATION,
        "rules.md §11: HTTP 428 (kite.trade/forum/discussion/7786); issue 41 §3",
        f"{REFUSED}[NEEDS_AUTHORISATION]",
        fields=lambda c: {"qty": c.unauthorised},
        status=428,
    ),
)

# ----- rejected in the book: the RMS, then the exchange ---------------------------------------

LOT_MULTIPLE = KiteRule[OrderCase](
    "lot size",
    lambda c: c.request.quantity % _lot(c.inst) != 0,
    rules.LOT_MULTIPLE,
    "rules.md §1 (kite.trade/forum/discussion/9124)",
    f"{IN_THE_BOOK}[LOT_MULTIPLE]",
    fields=lambda c: {"lot": _lot(c.inst)},
)
RMS_RULES: Final[tuple[KiteRule[OrderCase], ...]] = (LOT_MULTIPLE,)
FUNDS_RULES: Final[tuple[KiteRule[FundsCase], ...]] = (
    KiteRule[FundsCase](
        "margin",
        lambda c: c.required > c.available,
        rules.INSUFFICIENT_FUNDS,
        "rules.md §10 (kiteconnect-mocks orders.json)",
        f"{IN_THE_BOOK}[INSUFFICIENT_FUNDS]",
        fields=lambda c: {"required": c.required, "available": c.available},
    ),
)
PRICE_TICK = KiteRule[OrderCase](
    "price on the tick",
    lambda c: _priced(c) and not on_tick(_price(c), c.inst.tick_size),
    rules.PRICE_TICK,
    "rules.md §1",
    f"{IN_THE_BOOK}[PRICE_TICK]",
)
TRIGGER_TICK = KiteRule[OrderCase](
    "trigger on the tick",
    lambda c: _stop(c) and not on_tick(_trigger(c), c.inst.tick_size),
    rules.TRIGGER_TICK,
    "rules.md §1 (kite.trade/forum/discussion/9124)",
    f"{IN_THE_BOOK}[TRIGGER_TICK]",
)
SLM_BARRED = KiteRule[OrderCase](
    "no SL-M in NSE options or on BSE",
    lambda c: (
        c.request.order_type == "SL-M"
        and ((c.inst.exchange == "NFO" and c.inst.is_option) or c.inst.exchange in ("BSE", "BFO"))
    ),
    rules.SLM_BARRED,
    "rules.md §4 (sasonline.in/bulletin.php?p=388; upstox.com/?p=46531)",
    f"{IN_THE_BOOK}[SLM_BARRED NSE option]",
)
EXCHANGE_RULES: Final[tuple[KiteRule[OrderCase], ...]] = (PRICE_TICK, TRIGGER_TICK, SLM_BARRED)

# ----- modify and cancel (rules.md §6, §7) ----------------------------------------------------

AMO_RELEASED = KiteRule[OrderCase](
    "a released AMO is changed as regular",
    lambda c: (
        c.request.variety == "amo" and c.status not in ("", AMO_WAITING) and c.variety == "amo"
    ),
    rules.AMO_RELEASED,
    "rules.md §6 (kite.trade/forum/discussion/comment/40302: a timeout)",
    f"{REFUSED}[AMO_RELEASED]",
    error_type="NetworkException",
    status=504,
)
MODIFY_STATE_RULES: Final[tuple[KiteRule[OrderCase], ...]] = (
    KiteRule[OrderCase](
        "modifiable",
        lambda c: c.status not in WORKING,
        rules.NOT_MODIFIABLE,
        "rules.md §9 (only a working order is modified)",
        f"{REFUSED}[NOT_MODIFIABLE]",
        fields=_status,
    ),
)
CANCEL_STATE_RULES: Final[tuple[KiteRule[OrderCase], ...]] = (
    KiteRule[OrderCase](
        "cancellable",
        lambda c: c.status not in WORKING,
        rules.NOT_CANCELLABLE,
        "rules.md §9 (only a working order is cancelled)",
        f"{REFUSED}[NOT_CANCELLABLE]",
        fields=_status,
    ),
)
CALL_VARIETY_RULES: Final[tuple[KiteRule[str], ...]] = (BAD_VARIETY,)
AMO_RULES: Final[tuple[KiteRule[OrderCase], ...]] = (AMO_RELEASED, AMO_WINDOW)
MODIFY_RULES: Final[tuple[KiteRule[OrderCase], ...]] = (
    KiteRule[OrderCase](
        "25 modifications",
        lambda c: c.modifications >= rules.MAX_MODIFICATIONS,
        rules.TOO_MANY_MODIFICATIONS,
        "rules.md §7 (kite.trade/forum/discussion/9201)",
        f"{REFUSED}[TOO_MANY_MODIFICATIONS]",
        error_type="NetworkException",
    ),
    ORDER_TYPE,
    KiteRule[OrderCase](
        "not below the filled quantity",
        lambda c: c.request.quantity < c.filled or c.request.quantity <= 0,
        rules.BELOW_FILLED,
        "Kite Connect orders API (modify: quantity)",
        f"{REFUSED}[BELOW_FILLED]",
        fields=lambda c: {"filled": c.filled},
    ),
    LOT_MULTIPLE,
    FREEZE,
    LIMIT_PRICE,
    TRIGGER_PRICE,
    MARKET_PROTECTION,
    PRICE_TICK,
    TRIGGER_TICK,
    *CIRCUIT_RULES,
    SLM_BARRED,
)
ORDER_LOOKUP_RULES: Final[tuple[KiteRule[object], ...]] = (
    KiteRule[object](
        "order exists",
        lambda found: found is None,
        rules.NO_SUCH_ORDER,
        "Kite Connect orders API (OrderException)",
        f"{REFUSED}[NO_SUCH_ORDER cancel]",
        error_type="OrderException",
    ),
)

# ----- position conversion (rules.md §5) -----------------------------------------------------

CONVERSION_RULES: Final[tuple[KiteRule[ConversionCase], ...]] = (
    KiteRule[ConversionCase](
        "position to convert",
        lambda c: c.held < c.quantity or c.quantity <= 0,
        rules.NO_POSITION_TO_CONVERT,
        "Kite Connect portfolio API (convert: quantity within the open position)",
        f"{REFUSED}[NO_POSITION_TO_CONVERT]",
    ),
)

# ----- GTT (rules.md §8) ----------------------------------------------------------------------

GTT_RULES: Final[tuple[KiteRule[GttCase], ...]] = (
    KiteRule[GttCase](
        "GTT type",
        lambda c: c.type not in ("single", "two-leg"),
        _bad("type"),
        "Kite Connect GTT API (single or two-leg)",
        f"{REFUSED}[GTT BAD_PARAM type]",
    ),
    KiteRule[GttCase](
        "GTT trigger count",
        lambda c: (
            len(c.values) != (1 if c.type == "single" else 2)
            or c.legs != (1 if c.type == "single" else 2)
        ),
        _bad("trigger_values"),
        "Kite Connect GTT API (one trigger and leg, or two)",
        f"{REFUSED}[GTT BAD_PARAM trigger_values]",
    ),
    KiteRule[GttCase](
        "GTT trigger at the last price",
        lambda c: any(abs(v - c.last_price) < 1e-9 for v in c.values),
        rules.GTT_EQUAL_LAST,
        "rules.md §8 (kite.trade/forum/discussion/comment/45755)",
        f"{REFUSED}[GTT_EQUAL_LAST]",
    ),
    KiteRule[GttCase](
        "OCO upper trigger above the last price",
        lambda c: c.type == "two-leg" and c.values[1] < c.last_price,
        rules.GTT_SECOND_BELOW,
        "rules.md §8 (kite.trade/forum/discussion/comment/45755)",
        f"{REFUSED}[GTT_SECOND_BELOW]",
    ),
    KiteRule[GttCase](
        "OCO lower trigger below the last price",
        lambda c: c.type == "two-leg" and c.values[0] > c.last_price,
        rules.GTT_FIRST_ABOVE,
        "rules.md §8",
        f"{REFUSED}[GTT_FIRST_ABOVE]",
    ),
)
GTT_LEG_RULES: Final[tuple[KiteRule[OrderCase], ...]] = (
    KiteRule[OrderCase](
        "GTT product",
        lambda c: (
            (c.inst.is_equity and c.request.product != "CNC")
            or (c.inst.is_derivative and c.request.product != "NRML")
        ),
        rules.GTT_PRODUCT,
        "zerodha.com/tos/gtt (CNC in NSE/BSE cash, NRML in NSE F&O)",
        f"{REFUSED}[GTT_PRODUCT]",
    ),
    TRANSACTION_TYPE,
    QUANTITY,
)
GTT_TICK_RULES: Final[tuple[KiteRule[GttCase], ...]] = (
    KiteRule[GttCase](
        "GTT prices on the tick",
        lambda c: not all(on_tick(v, c.tick) for v in (*c.values, *c.prices)),
        rules.GTT_TICK,
        "rules.md §8",
        f"{REFUSED}[GTT_TICK]",
        fields=lambda c: {"tick": f"{c.tick:g}"},
    ),
)
GTT_COUNT_RULES: Final[tuple[KiteRule[int], ...]] = (
    KiteRule[int](
        "250 active GTTs",
        lambda active: active >= rules.GTT_MAX_ACTIVE,
        rules.GTT_TOO_MANY,
        "rules.md §8 (zerodha.com/tos/gtt)",
        f"{REFUSED}[GTT_TOO_MANY]",
    ),
)
GTT_FOUND = KiteRule[str | None](
    "GTT exists",
    lambda status: status in (None, "deleted"),
    rules.GTT_NOT_FOUND,
    "Kite Connect GTT API",
    f"{REFUSED}[GTT_NOT_FOUND]",
)
GTT_LOOKUP_RULES: Final[tuple[KiteRule[str | None], ...]] = (GTT_FOUND,)
GTT_CHANGE_RULES: Final[tuple[KiteRule[str | None], ...]] = (
    GTT_FOUND,
    KiteRule[str | None](
        "GTT active",
        lambda status: status != "active",
        rules.GTT_NOT_ACTIVE,
        "rules.md §8 (only an active GTT is modified or deleted)",
        f"{REFUSED}[GTT_NOT_ACTIVE]",
    ),
)

# ----- alerts (kite-domain.md §6) -------------------------------------------------------------


@dataclass(frozen=True)
class AlertCase:
    """An alert as a create or modify call describes it: its instruments as the master found
    them (None: not found), ``rhs_constant`` None when it is not a number, ``basket_read``
    False when its JSON text cannot be read."""

    name: str
    type: str
    lhs: Instrument | None
    lhs_attribute: str
    operator: str
    rhs_type: str
    rhs: Instrument | None
    rhs_constant: float | None
    basket: object
    basket_read: bool


def _ato_basket(c: AlertCase) -> bool:
    return isinstance(c.basket, dict) and bool(c.basket.get("items"))


# The sandbox's alert texts are all UNVERIFIED wording (Kite's alerts API answers an
# InputException naming the parameter); the source is the API's parameter list.
ALERT_API = "Kite Connect alerts API (kite.trade/docs/connect/v3/alerts)"
ALERT_RULES: Final[tuple[KiteRule[AlertCase], ...]] = (
    KiteRule[AlertCase](
        "alert name", lambda c: not c.name, _bad("name"), ALERT_API, f"{REFUSED}[ALERT name]"
    ),
    KiteRule[AlertCase](
        "alert type",
        lambda c: c.type not in ("simple", "ato"),
        _bad("type"),
        ALERT_API,
        f"{REFUSED}[ALERT type]",
    ),
    KiteRule[AlertCase](
        "alert instrument",
        lambda c: c.lhs is None,
        _bad("lhs_tradingsymbol"),
        ALERT_API,
        f"{REFUSED}[ALERT lhs_tradingsymbol]",
    ),
    KiteRule[AlertCase](
        "alert attribute",
        lambda c: c.lhs_attribute != "LastTradedPrice",
        _bad("lhs_attribute"),
        "sandbox limitation: alerts on LastTradedPrice only",
        f"{REFUSED}[ALERT lhs_attribute]",
    ),
    KiteRule[AlertCase](
        "alert operator",
        lambda c: c.operator not in OPERATORS,
        _bad("operator"),
        ALERT_API,
        f"{REFUSED}[ALERT operator]",
    ),
    KiteRule[AlertCase](
        "alert instrument to compare",
        lambda c: c.rhs_type == "instrument" and c.rhs is None,
        _bad("rhs_tradingsymbol"),
        ALERT_API,
        f"{REFUSED}[ALERT rhs_tradingsymbol]",
    ),
    KiteRule[AlertCase](
        "alert constant",
        lambda c: c.rhs_type != "instrument" and c.rhs_constant is None,
        _bad("rhs_constant"),
        ALERT_API,
        f"{REFUSED}[ALERT rhs_constant]",
    ),
    KiteRule[AlertCase](
        "alert basket",
        lambda c: not c.basket_read,
        _bad("basket"),
        ALERT_API,
        f"{REFUSED}[ALERT basket]",
    ),
    KiteRule[AlertCase](
        "ATO basket items",
        lambda c: c.type == "ato" and not _ato_basket(c),
        rules.ATO_NEEDS_BASKET,
        ALERT_API + " (an ATO alert places its basket)",
        f"{REFUSED}[ATO_NEEDS_BASKET]",
    ),
)

ALERT_COUNT_RULES: Final[tuple[KiteRule[int], ...]] = (
    KiteRule[int](
        "200 alerts",
        lambda count: count >= rules.ALERT_MAX,
        rules.ALERT_TOO_MANY,
        "kite-domain.md §6 (at most 200, disabled ones included)",
        f"{REFUSED}[ALERT_TOO_MANY]",
    ),
)
ALERT_LOOKUP_RULES: Final[tuple[KiteRule[object], ...]] = (
    KiteRule[object](
        "alert exists",
        lambda found: found is None,
        rules.ALERT_NOT_FOUND,
        "Kite Connect alerts API",
        f"{REFUSED}[ALERT_NOT_FOUND]",
    ),
)

TABLES: Final[Mapping[str, Sequence[KiteRule[Any]]]] = {
    "place: variety": VARIETY_RULES,
    "place, GTT: instrument": INSTRUMENT_RULES,
    "place: terms": PLACE_RULES,
    "place: market hours": SESSION_RULES,
    "place, convert: MIS": MIS_RULES,
    "place, modify: circuit limits": CIRCUIT_RULES,
    "place: stop side": TRIGGER_SIDE_RULES,
    "place: delivery sell": SELL_RULES,
    "place: RMS": RMS_RULES,
    "place: funds": FUNDS_RULES,
    "place, AMO release: exchange": EXCHANGE_RULES,
    "modify: state": MODIFY_STATE_RULES,
    "cancel: state": CANCEL_STATE_RULES,
    "modify, cancel: variety": CALL_VARIETY_RULES,
    "modify, cancel: AMO": AMO_RULES,
    "modify: terms": MODIFY_RULES,
    "modify, cancel, history: order": ORDER_LOOKUP_RULES,
    "convert: position": CONVERSION_RULES,
    "GTT: trigger": GTT_RULES,
    "GTT: legs": GTT_LEG_RULES,
    "GTT: ticks": GTT_TICK_RULES,
    "GTT: count": GTT_COUNT_RULES,
    "GTT: lookup": GTT_LOOKUP_RULES,
    "GTT: modify, delete": GTT_CHANGE_RULES,
    "alerts: create, modify": ALERT_RULES,
    "alerts: count": ALERT_COUNT_RULES,
    "alerts: lookup": ALERT_LOOKUP_RULES,
}
ALL_RULES: Final[tuple[KiteRule[Any], ...]] = tuple(
    dict.fromkeys(rule for table in TABLES.values() for rule in table)
)
