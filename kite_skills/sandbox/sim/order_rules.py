"""Kite's checks of a place request before anything enters the book (the InputException
refusals, rules.md §1-§4), each one row: its name, the check, the text a refusal carries
(rules.py, where each text's source is), and the rule's source (issue 41 §5). They run in
the table's order, the first broken one answering, as Kite's own validation does; a new
Kite rule is a new row and its test (tests/sandbox/test_sim_edges.py,
test_sim_rejections.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from . import rules
from .errors import input_error
from .instruments import EQUITY_MAX_QUANTITY, Instrument
from .order_request import OrderRequest

PRODUCTS: Final = ("CNC", "MIS", "NRML", "MTF")
ORDER_TYPES: Final = ("MARKET", "LIMIT", "SL", "SL-M")
VALIDITIES: Final = ("DAY", "IOC", "TTL")
INDEX_OPTIONS_WITH_MARKET: Final = ("NIFTY", "BANKNIFTY")


@dataclass(frozen=True)
class KiteRule:
    name: str
    breaks: Callable[[OrderRequest, Instrument], bool]  # the check: True when broken
    text: Callable[[OrderRequest, Instrument], str]  # the refusal's text
    source: str


def _lot(inst: Instrument) -> int:
    return max(inst.lot_size, 1)


def _legs(r: OrderRequest) -> int:
    return int(r.iceberg_legs or 0)


def _slice(r: OrderRequest) -> int:
    """The quantity one order sends to the exchange (an iceberg's leg)."""
    return int(r.iceberg_quantity or r.quantity) if r.variety == "iceberg" else r.quantity


def _bad(name: str) -> Callable[[OrderRequest, Instrument], str]:
    return lambda _r, _i: rules.BAD_PARAM.format(name=name)


def _fixed(text: str) -> Callable[[OrderRequest, Instrument], str]:
    return lambda _r, _i: text


def _freeze(r: OrderRequest, inst: Instrument) -> str:
    return rules.FREEZE.format(
        qty=r.quantity,
        lots=r.quantity // _lot(inst),
        freeze=inst.freeze_quantity,
        freeze_lots=inst.freeze_quantity // _lot(inst),
    )


PLACE_RULES: Final[tuple[KiteRule, ...]] = (
    KiteRule(
        "transaction type",
        lambda r, i: r.transaction_type not in ("BUY", "SELL"),
        _bad("transaction_type"),
        "Kite Connect orders API (BUY or SELL)",
    ),
    KiteRule("product", lambda r, i: r.product not in PRODUCTS, _bad("product"), "rules.md §5"),
    KiteRule(
        "order type",
        lambda r, i: r.order_type not in ORDER_TYPES,
        _bad("order_type"),
        "rules.md §3",
    ),
    KiteRule(
        "validity",
        lambda r, i: (r.validity or "DAY") not in VALIDITIES,
        _bad("validity"),
        "Kite Connect orders API (DAY, IOC, TTL)",
    ),
    KiteRule(
        "TTL minutes",
        lambda r, i: (r.validity or "DAY") == "TTL" and not r.validity_ttl,
        _bad("validity_ttl"),
        "Kite Connect orders API (validity_ttl with TTL)",
    ),
    KiteRule(
        "quantity",
        lambda r, i: (
            isinstance(r.quantity, bool) or not isinstance(r.quantity, int) or r.quantity <= 0
        ),
        _fixed(rules.BAD_QUANTITY),
        "Kite Connect orders API",
    ),
    KiteRule(
        "tag",
        lambda r, i: r.tag is not None and r.tag != "" and not rules.tag_ok(r.tag),
        _fixed(rules.BAD_TAG),
        "Kite Connect orders API (tag: alphanumeric, 20 characters)",
    ),
    KiteRule(
        "limit price",
        lambda r, i: r.order_type in ("LIMIT", "SL") and float(r.price or 0.0) <= 0,
        _fixed(rules.NEEDS_PRICE),
        "rules.md §3",
    ),
    KiteRule(
        "trigger price",
        lambda r, i: r.order_type in ("SL", "SL-M") and float(r.trigger_price or 0.0) <= 0,
        _fixed(rules.NEEDS_TRIGGER),
        "rules.md §3",
    ),
    KiteRule(
        "market protection",
        lambda r, i: r.order_type in ("MARKET", "SL-M") and float(r.market_protection or 0) == 0,
        _fixed(rules.NO_PROTECTION),
        "rules.md §3: MARKET and SL-M need a non-zero market_protection via the API",
    ),
    KiteRule(
        "no MARKET in stock options",
        lambda r, i: (
            r.order_type == "MARKET" and i.is_option and i.name not in INDEX_OPTIONS_WITH_MARKET
        ),
        _fixed(rules.STOCK_OPTION_MARKET),
        "rules.md §4 (kite.trade/docs/kite/orders)",
    ),
    KiteRule(
        "no MARKET AMO in index options",
        lambda r, i: r.order_type == "MARKET" and i.is_option and r.variety == "amo",
        _fixed(rules.INDEX_OPTION_MARKET_AMO),
        "rules.md §4",
    ),
    KiteRule(
        "disclosed quantity",
        lambda r, i: bool(r.disclosed_quantity) and (r.disclosed_quantity or 0) > r.quantity,
        _fixed(rules.DISCLOSED_QTY),
        "Kite Connect orders API",
    ),
    KiteRule(
        "iceberg legs",
        lambda r, i: r.variety == "iceberg" and not 2 <= _legs(r) <= 50,
        _fixed(rules.ICEBERG_LEGS),
        "rules.md §2 (kite.trade/forum/discussion/comment/46708)",
    ),
    KiteRule(
        "iceberg leg quantity",
        lambda r, i: (
            r.variety == "iceberg"
            and (
                int(r.iceberg_quantity or 0) <= 0
                or int(r.iceberg_quantity or 0) * _legs(r) < r.quantity
                or int(r.iceberg_quantity or 0) % _lot(i) != 0
            )
        ),
        _fixed(rules.ICEBERG_QTY),
        "rules.md §2",
    ),
    KiteRule(
        "freeze quantity",
        lambda r, i: bool(i.freeze_quantity) and _slice(r) > i.freeze_quantity,
        _freeze,
        "rules.md §2 (kite.trade/forum/discussion/comment/42709)",
    ),
    KiteRule(
        "equity 1,00,000-share cap",
        lambda r, i: i.is_equity and _slice(r) > EQUITY_MAX_QUANTITY,
        lambda r, i: rules.EQUITY_MAX.format(qty=r.quantity),
        "rules.md §1 (support: kite-order-rejections)",
    ),
)


def check_place(request: OrderRequest, inst: Instrument) -> None:
    """Raise Kite's refusal of the first rule ``request`` breaks."""
    for rule in PLACE_RULES:
        if rule.breaks(request, inst):
            raise input_error(rule.text(request, inst))
