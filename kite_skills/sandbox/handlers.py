"""What the Kite MCP server's Go handlers do with a tool call: read the arguments
(:mod:`.coerce`), validate them with the server's own texts, call Kite Connect (here the
simulation, per docs/sandbox contract), and return the gokiteconnect structs marshalled
(:mod:`.gotypes`), paginated, or an ``isError`` text.

One table per tool generation (``grouped``, ``legacy``, ``legacy-oldest``). Sources, per
behaviour: ``aditya-narayana-sharma/kite-mcp-server@a51b84d`` (portfolio, orders, gtt,
mutual_funds tools), ``zerodha/kite-mcp-server@d1c5e22:mcp/market_tool.go``,
``@b629a9c:mcp/alerts_tool.go``, ``@60976dd:mcp/session_tool.go`` and ``common.go``,
``@847fe98`` (legacy) and ``@dcf2dc4`` (legacy-oldest); each handler names its file.

A Kite Connect refusal comes back as the server's own text (``Failed to place order``: the
real server only logs Kite's reason), and the reason is kept in :attr:`Result.kite_error`
for the journal and stderr.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Any, Final

from . import coerce as c
from . import gotypes as g
from .sim import KiteConnectError, Simulation
from .sim.order_request import OrderRequest

Args = Mapping[str, Any]


@dataclass(frozen=True)
class Result:
    """A tool result: one text item, ``isError`` or not."""

    text: str
    is_error: bool = False
    kite_error: str | None = None  # Kite Connect's reason, which the real server only logs


def ok(value: Any) -> Result:
    try:
        return Result(g.marshal(value))
    except ValueError:  # NaN or infinity: Go's json.Marshal refuses them too
        return Result("Failed to process response data", True)


def fail(text: str, exc: BaseException | None = None) -> Result:
    return Result(text, True, str(exc) if exc is not None else None)


class Failed(Exception):
    """A handler's early answer (validation text)."""

    def __init__(self, result: Result) -> None:
        super().__init__(result.text)
        self.result = result


Handler = Callable[[Simulation, Args], Result]


@dataclass(frozen=True)
class Generation:
    name: str
    handlers: Mapping[str, Handler]


def _call(what: str, thunk: Callable[[], Any]) -> Any:
    """Run a Kite Connect call; a refusal becomes the handler's ``what`` text."""
    try:
        return thunk()
    except KiteConnectError as exc:
        raise Failed(fail(what, exc)) from exc


def _need(args: Args, *names: str) -> None:
    problem = c.required(args, *names)
    if problem:
        raise Failed(fail(problem))


def guarded(handler: Handler) -> Handler:
    def run(kite: Simulation, args: Args) -> Result:
        try:
            return handler(kite, args)
        except Failed as stop:
            return stop.result

    run.__name__ = handler.__name__
    run.__doc__ = handler.__doc__
    return run


def _modes(tool: str, table: Mapping[str, Handler]) -> Handler:
    """Mode dispatch: a missing or unknown mode gets ``Invalid mode. Must be one of: …``."""
    invalid = f"Invalid mode. Must be one of: {', '.join(table)}"

    def run(kite: Simulation, args: Args) -> Result:
        handler = table.get(c.s(args.get("mode"), ""))
        if handler is None:
            return fail(invalid)
        return handler(kite, args)

    run.__name__ = tool
    return run


# ---------------------------------------------------------------- portfolio


def _holdings_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``GET /portfolio/holdings/summary`` computed from the holdings (the simulation serves
    the holdings; Kite computes the summary from them)."""
    invested = sum(c.f(r.get("average_price")) * c.i(r.get("quantity")) for r in rows)
    current = sum(c.f(r.get("last_price")) * c.i(r.get("quantity")) for r in rows)
    today = sum(c.f(r.get("day_change")) * c.i(r.get("quantity")) for r in rows)
    previous = current - today
    return {
        "total_pnl": round(current - invested, 2),
        "total_pnl_percent": round((current - invested) / invested * 100, 2) if invested else 0,
        "today_pnl": round(today, 2),
        "today_pnl_percent": round(today / previous * 100, 2) if previous else 0,
        "invested_amount": round(invested, 2),
        "current_value": round(current, 2),
    }


def holdings(kind: str, kite: Simulation, args: Args, texts: tuple[str, str, str]) -> Result:
    """Holdings ``type`` full (default; unknown values too), summary (never paginated) or
    compact (portfolio_tool.go:71, get_tools.go:40 in 847fe98)."""
    full_text, summary_text, compact_text = texts
    if kind == "summary":
        rows = _call(summary_text, kite.holdings)
        return ok(g.shape(g.HOLDING_SUMMARY, _holdings_summary(rows)))
    if kind == "compact":
        rows = _call(compact_text, kite.holdings)
        return ok(c.paginate(args, g.shape_all(g.HOLDING_COMPACT, rows)))
    rows = _call(full_text, kite.holdings)
    return ok(c.paginate(args, g.shape_all(g.HOLDING, rows)))


def positions(kite: Simulation, args: Args, what: str) -> Result:
    """Day rows then Net rows in one list, unlabelled, then paginated
    (portfolio_tool.go:132; get_tools.go:93 in dcf2dc4)."""
    both = _call(what, kite.positions)
    rows = list(both.get("day") or []) + list(both.get("net") or [])
    return ok(c.paginate(args, g.shape_all(g.POSITION, rows)))


def _paged_list(fields: tuple[g.Field, ...], method: str, what: str) -> Handler:
    def run(kite: Simulation, args: Args) -> Result:
        rows = _call(what, getattr(kite, method))
        return ok(c.paginate(args, g.shape_all(fields, rows)))

    return run


def _plain(fields: tuple[g.Field, ...], method: str, what: str, many: bool = False) -> Handler:
    def run(kite: Simulation, args: Args) -> Result:
        value = _call(what, getattr(kite, method))
        return ok(g.shape_all(fields, value) if many else g.shape(fields, value))

    return run


# ---------------------------------------------------------------- orders


def order_history(order: tuple[g.Field, ...]) -> Handler:
    def run(kite: Simulation, args: Args) -> Result:
        _need(args, "order_id")
        order_id = c.s(args.get("order_id"))
        rows = _call("Failed to get order history", lambda: kite.order_history(order_id))
        return ok(g.shape_all(order, rows))

    return run


def order_trades(kite: Simulation, args: Args) -> Result:
    _need(args, "order_id")
    order_id = c.s(args.get("order_id"))
    rows = _call("Failed to get order trades", lambda: kite.order_trades(order_id))
    return ok(g.shape_all(g.TRADE, rows))


def _omit(value: Any) -> Any:
    """gokiteconnect's ``url:",omitempty"``: zero numbers and empty strings are not sent."""
    return None if value in (0, 0.0, "") else value


def place(kite: Simulation, args: Args, *, need_variety: bool, protection: bool) -> Result:
    """orders_tool.go:178 (variety optional, default regular); post_tools.go:83 in dcf2dc4
    and :99 in 847fe98 (variety required; market_protection from 847fe98 on)."""
    names = ("exchange", "tradingsymbol", "transaction_type", "quantity", "product", "order_type")
    _need(args, *(("variety", *names) if need_variety else names))
    request = OrderRequest(
        variety=c.s(args.get("variety"), "regular"),
        exchange=c.s(args.get("exchange"), "NSE"),
        tradingsymbol=c.s(args.get("tradingsymbol")),
        transaction_type=c.s(args.get("transaction_type")),
        quantity=c.i(args.get("quantity"), 1),
        product=c.s(args.get("product")),
        order_type=c.s(args.get("order_type")),
        price=_omit(c.f(args.get("price"))),
        validity=_omit(c.s(args.get("validity"))),
        validity_ttl=_omit(c.i(args.get("validity_ttl"))),
        disclosed_quantity=_omit(c.i(args.get("disclosed_quantity"))),
        trigger_price=_omit(c.f(args.get("trigger_price"))),
        iceberg_legs=_omit(c.i(args.get("iceberg_legs"))),
        iceberg_quantity=_omit(c.i(args.get("iceberg_quantity"))),
        tag=_omit(c.s(args.get("tag"))),
        market_protection=_omit(c.f(args.get("market_protection"))) if protection else None,
    )
    answer = _call("Failed to place order", lambda: kite.place(request))
    return ok(g.shape(g.ORDER_RESPONSE, answer))


def modify(kite: Simulation, args: Args, *, need_variety: bool) -> Result:
    """Quantity defaults to 1 and is always sent; exchange, product, validity_ttl, tag and
    market_protection are never forwarded (orders_tool.go:216; post_tools.go:180 dcf2dc4)."""
    _need(
        args,
        *(("variety", "order_id", "order_type") if need_variety else ("order_id", "order_type")),
    )
    variety = c.s(args.get("variety"), "regular")
    order_id = c.s(args.get("order_id"))
    params = {
        "quantity": _omit(c.i(args.get("quantity"), 1)),
        "price": _omit(c.f(args.get("price"))),
        "order_type": _omit(c.s(args.get("order_type"))),
        "trigger_price": _omit(c.f(args.get("trigger_price"))),
        "validity": _omit(c.s(args.get("validity"))),
        "disclosed_quantity": _omit(c.i(args.get("disclosed_quantity"))),
    }
    answer = _call(
        "Failed to modify order", lambda: kite.modify_order(variety, _omit(order_id), **params)
    )
    return ok(g.shape(g.ORDER_RESPONSE, answer))


def cancel(kite: Simulation, args: Args, *, need_variety: bool) -> Result:
    """orders_tool.go:232 (no parent_order_id is ever sent)."""
    _need(args, *(("variety", "order_id") if need_variety else ("order_id",)))
    variety = c.s(args.get("variety"), "regular")
    order_id = c.s(args.get("order_id"))
    answer = _call("Failed to cancel order", lambda: kite.cancel_order(variety, _omit(order_id)))
    return ok(g.shape(g.ORDER_RESPONSE, answer))


# ---------------------------------------------------------------- gtt


def _whole(value: float) -> float | int:
    return int(value) if value.is_integer() else value


def _gtt_params(args: Args, product: str) -> tuple[str, dict[str, Any]]:
    """gtt_tool.go:184 and gokiteconnect gtt.go:93-130: every leg a LIMIT order; two-leg
    trigger values and orders sent [lower, upper]; leg numbers default to 0; an empty
    product becomes CNC."""
    trigger_type = c.s(args.get("trigger_type"))
    exchange, symbol = c.s(args.get("exchange")), c.s(args.get("tradingsymbol"))
    side = c.s(args.get("transaction_type"))
    product = product or "CNC"

    def leg(prefix: str) -> tuple[float, dict[str, Any]]:
        order = {
            "exchange": exchange,
            "tradingsymbol": symbol,
            "transaction_type": side,
            "quantity": _whole(c.f(args.get(f"{prefix}quantity"))),
            "order_type": "LIMIT",
            "product": product,
            "price": c.f(args.get(f"{prefix}limit_price")),
        }
        return c.f(args.get(f"{prefix}trigger_value")), order

    if trigger_type == "single":
        value, order = leg("")
        values, orders = [value], [order]
    else:
        (low, low_order), (high, high_order) = leg("lower_"), leg("upper_")
        values, orders = [low, high], [low_order, high_order]
    return trigger_type, {
        "tradingsymbol": symbol,
        "exchange": exchange,
        "trigger_values": values,
        "last_price": c.f(args.get("last_price")),
        "orders": orders,
    }


def gtt_place(kite: Simulation, args: Args, *, bad_type: str) -> Result:
    _need(
        args,
        "exchange",
        "tradingsymbol",
        "last_price",
        "transaction_type",
        "product",
        "trigger_type",
    )
    if c.s(args.get("trigger_type")) not in ("single", "two-leg"):
        return fail(bad_type)
    trigger_type, params = _gtt_params(args, c.s(args.get("product")))
    answer = _call(
        "Failed to place GTT order", lambda: kite.place_gtt(trigger_type=trigger_type, **params)
    )
    return ok(g.shape(g.GTT_RESPONSE, answer))


def gtt_modify(kite: Simulation, args: Args, *, bad_type: str, product_given: bool) -> Result:
    """Gen c passes product when given; gen a/b never do, so gokiteconnect uses CNC
    (gtt_tool.go:146; post_tools.go:489 in dcf2dc4)."""
    _need(
        args,
        "trigger_id",
        "exchange",
        "tradingsymbol",
        "last_price",
        "transaction_type",
        "trigger_type",
    )
    if c.s(args.get("trigger_type")) not in ("single", "two-leg"):
        return fail(bad_type)
    trigger_id = c.i(args.get("trigger_id"))
    product = c.s(args.get("product")) if product_given else ""
    trigger_type, params = _gtt_params(args, product)
    answer = _call(
        "Failed to modify GTT order",
        lambda: kite.modify_gtt(trigger_id, trigger_type=trigger_type, **params),
    )
    return ok(g.shape(g.GTT_RESPONSE, answer))


def gtt_delete(kite: Simulation, args: Args) -> Result:
    _need(args, "trigger_id")
    trigger_id = c.i(args.get("trigger_id"))
    answer = _call("Failed to delete GTT order", lambda: kite.delete_gtt(trigger_id))
    return ok(g.shape(g.GTT_RESPONSE, answer))


# ---------------------------------------------------------------- market


def quote(kite: Simulation, args: Args) -> Result:
    """No check after filtering (market_tool.go:133)."""
    _need(args, "instruments")
    names = c.strings(args.get("instruments")) or []
    answer = _call("Failed to get quotes", lambda: kite.quote(*names))
    return ok(g.shape_map(g.QUOTE, answer))


def _quote_kind(method: str, fields: tuple[g.Field, ...], what: str) -> Handler:
    """ltp/ohlc: ``At least one instrument must be specified`` when nothing usable is left
    (market_tool.go:146,162)."""

    def run(kite: Simulation, args: Args) -> Result:
        _need(args, "instruments")
        names = c.strings(args.get("instruments")) or []
        if not names:
            return fail("At least one instrument must be specified")
        answer = _call(what, lambda: getattr(kite, method)(*names))
        return ok(g.shape_map(fields, answer))

    return run


def _date(value: Any, which: str) -> datetime:
    try:
        return datetime.strptime(c.s(value), "%Y-%m-%d %H:%M:%S").replace(tzinfo=g.IST)
    except ValueError:
        raise Failed(fail(f"Failed to parse {which}, use format YYYY-MM-DD HH:MM:SS")) from None


def historical(kite: Simulation, args: Args) -> Result:
    """market_tool.go:178: dates as ``2006-01-02 15:04:05``; continuous and oi default false."""
    _need(args, "instrument_token", "from_date", "to_date", "interval")
    token = c.i(args.get("instrument_token"))
    start, end = _date(args.get("from_date"), "from_date"), _date(args.get("to_date"), "to_date")
    interval = c.s(args.get("interval"))
    continuous, oi = c.b(args.get("continuous")), c.b(args.get("oi"))
    rows = _call(
        "Failed to get historical data",
        lambda: kite.historical_data(token, start, end, interval, continuous=continuous, oi=oi),
    )
    return ok(g.shape_all(g.HISTORICAL, rows))


# The instrument master's fields as the server keeps them (kc/instruments/instruments.go,
# struct Instrument, in dcf2dc4 and 847fe98): full objects, and the compact subset
# (verbosity=compact).
FULL_INSTRUMENT: Final[tuple[g.Field, ...]] = (
    ("id", "s"),
    ("instrument_token", "i"),
    ("exchange_token", "i"),
    ("tradingsymbol", "s"),
    ("exchange", "s"),
    ("isin", "s"),
    ("name", "s"),
    ("series", "s"),
    ("last_price", "f"),
    ("strike", "f"),
    ("tick_size", "f"),
    ("lot_size", "i"),
    ("multiplier", "i"),
    ("instrument_type", "s"),
    ("segment", "s"),
    ("delivery_units", "s"),
    ("price_units", "s"),
    ("freeze_quantity", "i"),
    ("max_order_quantity", "i"),
    ("expiry_type", "s"),
    ("expiry_date", "s"),
    ("exercise_start_date", "s"),
    ("exercise_end_date", "s"),
    ("issue_date", "s"),
    ("listing_date", "s"),
    ("maturity_date", "s"),
    ("lower_circuit_limit", "f"),
    ("upper_circuit_limit", "f"),
    ("active", "b"),
)
COMPACT_INSTRUMENT: Final[tuple[g.Field, ...]] = (
    ("id", "s"),
    ("instrument_token", "i"),
    ("tradingsymbol", "s"),
    ("exchange", "s"),
    ("name", "s"),
    ("instrument_type", "s"),
    ("segment", "s"),
    ("lot_size", "i"),
    ("active", "b"),
)
LIVE_QUOTE_FIELDS: Final = [
    "last_price",
    "lower_circuit_limit",
    "upper_circuit_limit",
    "ohlc",
    "timestamp",
]


def master(kite: Simulation) -> list[dict[str, Any]]:
    """The instrument master as the server holds it: each CSV row with ``id`` =
    ``EXCHANGE:TRADINGSYMBOL``, ``expiry`` as ``expiry_date``, the facts its JSON master
    carries beside the CSV's (ISIN, freeze and maximum order quantities, circuit limits, from
    the simulation's ``instrument_facts``), and ``active``."""
    rows = []
    for row in _call("Instrument manager is not initialized.", kite.instruments):
        item = dict(row)
        exchange, symbol = str(row.get("exchange", "")), str(row.get("tradingsymbol", ""))
        item["id"] = f"{exchange}:{symbol}"
        item.setdefault("expiry_date", row.get("expiry") or "")
        item.setdefault("active", True)
        try:
            facts = kite.instrument_facts(exchange, symbol)
        except LookupError:
            facts = None
        if facts is not None:
            item.setdefault("isin", facts.isin)
            item.setdefault("freeze_quantity", facts.freeze_quantity)
            item.setdefault("max_order_quantity", facts.max_order_quantity)
            item.setdefault("lower_circuit_limit", facts.lower_circuit)
            item.setdefault("upper_circuit_limit", facts.upper_circuit)
        rows.append(item)
    return rows


def _search_rows(rows: list[dict[str, Any]], query: str, filter_on: str) -> list[dict[str, Any]]:
    """kc/instruments/search.go:70-86 in 847fe98: a case-insensitive substring match on the
    field, or for ``underlying`` an exact exchange and name (query ``EXCH:NAME`` or ``NAME``
    for NFO). Kept in the master's order (the real server's order follows Go map iteration
    and changes between calls)."""
    if filter_on == "underlying":
        parts = query.split(":")
        if len(parts) > 2:
            raise Failed(
                fail("Invalid query format, specify exch:underlying, where exchange is BFO/NFO")
            )
        exchange, name = (parts[0], parts[1]) if len(parts) == 2 else ("NFO", parts[0])
        return [r for r in rows if r.get("exchange") == exchange and r.get("name") == name]
    field = {"name": "name", "tradingsymbol": "tradingsymbol", "isin": "isin"}.get(filter_on, "id")
    wanted = query.lower()
    return [r for r in rows if wanted in str(r.get(field) or "").lower()]


def _lookup(
    kite: Simulation, args: Args, search_mode: str, default_filter: str = "id"
) -> list[dict[str, Any]]:
    rows = master(kite)
    if search_mode == "get_by_id":
        _need(args, "id")
        found = [r for r in rows if r["id"] == c.s(args.get("id"))]
    elif search_mode == "get_by_tradingsymbol":
        _need(args, "exchange", "tradingsymbol")
        key = f"{c.s(args.get('exchange'))}:{c.s(args.get('tradingsymbol'))}"
        found = [r for r in rows if r["id"] == key]
    elif search_mode == "get_by_isin":
        _need(args, "isin")
        found = [r for r in rows if r.get("isin") and r.get("isin") == c.s(args.get("isin"))]
    elif search_mode == "get_by_inst_token":
        _need(args, "inst_token")
        token = c.i(args.get("inst_token"))
        found = [r for r in rows if c.i(r.get("instrument_token")) == token]
    elif search_mode == "get_by_exch_token":
        _need(args, "exchange", "exch_token")
        exchange, token = c.s(args.get("exchange")), c.i(args.get("exch_token"))
        found = [
            r
            for r in rows
            if r.get("exchange") == exchange and c.i(r.get("exchange_token")) == token
        ]
    else:  # "search", and any other value (the Go switch's default)
        _need(args, "query")
        return _search_rows(
            rows, c.s(args.get("query")), c.s(args.get("filter_on"), default_filter)
        )
    if not found:
        raise Failed(fail("Instrument not found"))
    return found[:1] if search_mode != "get_by_isin" else found


def _go_map(value: dict[str, Any]) -> dict[str, Any]:
    """A Go ``map[string]interface{}`` marshals with its keys sorted."""
    return {key: value[key] for key in sorted(value)}


def search_grouped(kite: Simulation, args: Args) -> Result:
    """market search (market_tool.go:212-450 in d1c5e22): rows and the answer are Go maps
    (keys sorted, so ``{data, meta[, pagination]}``); compact rows by default; live quotes
    on request, for the page only, and ``meta.live_quote_enriched`` is the flag as given."""
    found = _lookup(kite, args, c.s(args.get("search_mode"), "search"))
    compact = c.s(args.get("verbosity"), "compact") == "compact"
    rows = [g.shape(COMPACT_INSTRUMENT if compact else FULL_INSTRUMENT, r) for r in found]
    paged = c.paginate(args, rows)
    page = paged["data"] if isinstance(paged, dict) else paged
    enrich = c.b(args.get("include_live_quote"))
    if enrich and page:
        ids = [r["id"] for r in page]
        quotes = _call("Failed to get live quotes for search enrichment", lambda: kite.quote(*ids))
        for row in page:
            q = g.shape(g.QUOTE, quotes.get(row["id"]) or {})
            row.update(
                last_price=q["last_price"],
                lower_circuit_limit=q["lower_circuit_limit"],
                upper_circuit_limit=q["upper_circuit_limit"],
                ohlc=q["ohlc"],
                quote_timestamp=q["timestamp"],
            )
    page = [_go_map(row) for row in page]
    meta: dict[str, Any] = {
        "instrument_data_source": "bod_instruments",
        "live_quote_enriched": enrich,
    }
    if enrich:
        meta["live_quote_fields"] = LIVE_QUOTE_FIELDS
    answer: dict[str, Any] = {"data": page, "meta": _go_map(meta)}
    if isinstance(paged, dict):
        answer["pagination"] = paged["pagination"]  # a struct: its fields keep their order
    return ok(_go_map(answer))


def search_legacy(kite: Simulation, args: Args) -> Result:
    """search_instruments in 847fe98 (market_tools.go:121): ``mode`` and ``verbosity``;
    a bare array or the pagination envelope, no meta."""
    found = _lookup(kite, args, c.s(args.get("mode"), "search"))
    compact = c.s(args.get("verbosity"), "compact") == "compact"
    return ok(
        c.paginate(
            args, [g.shape(COMPACT_INSTRUMENT if compact else FULL_INSTRUMENT, r) for r in found]
        )
    )


def search_oldest(kite: Simulation, args: Args) -> Result:
    """search_instruments in dcf2dc4 (market_tools.go:75): query and filter_on only; full
    objects."""
    _need(args, "query")
    found = _search_rows(master(kite), c.s(args.get("query")), c.s(args.get("filter_on"), "id"))
    return ok(c.paginate(args, [g.shape(FULL_INSTRUMENT, r) for r in found]))


# ---------------------------------------------------------------- alerts

ALERT_REQUIRED: Final = (
    "name",
    "alert_type",
    "lhs_exchange",
    "lhs_tradingsymbol",
    "lhs_attribute",
    "operator",
    "rhs_type",
)


def _alert_params(args: Args, *, ato_basket_required: bool) -> dict[str, Any]:
    """validateAlertParams and buildAlertParams (alerts_tool.go:287-340 in b629a9c): a missing
    or empty value is ``is required``; the rhs checked by its type; the basket required and
    checked for ATO alerts (c), or checked whenever given (b)."""
    for name in ALERT_REQUIRED:
        if args.get(name) in (None, ""):
            raise Failed(fail(f"parameter '{name}': is required"))
    rhs_type = c.s(args.get("rhs_type"))
    params: dict[str, Any] = {
        "name": c.s(args.get("name")),
        "type": c.s(args.get("alert_type")),
        "lhs_exchange": c.s(args.get("lhs_exchange")),
        "lhs_tradingsymbol": c.s(args.get("lhs_tradingsymbol")),
        "lhs_attribute": c.s(args.get("lhs_attribute")),
        "operator": c.s(args.get("operator")),
        "rhs_type": rhs_type,
    }
    if rhs_type == "constant":
        if "rhs_constant" not in args:
            raise Failed(fail("parameter 'rhs_constant': is required when rhs_type=constant"))
        params["rhs_constant"] = c.f(args.get("rhs_constant"))
    elif rhs_type == "instrument":
        for name in ("rhs_exchange", "rhs_tradingsymbol", "rhs_attribute"):
            if args.get(name) in (None, ""):
                raise Failed(fail(f"parameter '{name}': is required when rhs_type=instrument"))
            params[name] = c.s(args.get(name))
    else:
        raise Failed(fail("parameter 'rhs_type': must be 'constant' or 'instrument'"))
    basket_text = c.s(args.get("basket"))
    ato = params["type"] == "ato" and ato_basket_required
    if ato and not basket_text:
        raise Failed(fail("parameter 'basket': is required when alert_type=ato"))
    if basket_text:
        basket, problem = _basket(basket_text)
        if problem is not None:
            if ato or not ato_basket_required:  # validateAlertParams (c), or b's own check
                raise Failed(fail("parameter 'basket': must be valid JSON"))
            raise Failed(  # c, not ato: buildAlertParams parses it
                fail(f"Failed to build alert parameters: failed to parse basket JSON: {problem}")
            )
        if ato and not basket.get("items"):
            raise Failed(
                fail(
                    "parameter 'basket': must contain at least one basket item when alert_type=ato"
                )
            )
        params["basket"] = basket
    return params


def _basket(text: str) -> tuple[dict[str, Any], str | None]:
    """``json.Unmarshal`` into kiteconnect.Basket: an object whose ``items`` (if any) is an
    array of objects; anything else is an error."""
    try:
        basket = json.loads(text)
    except ValueError as exc:
        return {}, str(exc)
    if not isinstance(basket, dict):
        return {}, f"cannot unmarshal {type(basket).__name__} into Go value of type Basket"
    items = basket.get("items")
    if items is not None and not (
        isinstance(items, list) and all(isinstance(i, dict) for i in items)
    ):
        return {}, "cannot unmarshal items into Go struct field Basket.items"
    return basket, None


def alerts(*, ato_basket_required: bool) -> Handler:
    def get(kite: Simulation, args: Args) -> Result:
        uuids = c.strings(args.get("uuids")) or []
        history = c.b(args.get("history"))
        if len(uuids) == 1:
            uuid = uuids[0]
            alert = _call(f"Failed to get alert {uuid}", lambda: kite.get_alert(uuid))
            out: dict[str, Any] = {"alert": g.shape(g.ALERT, alert)}
            found = _history(kite, uuid) if history else None
            if found is not None:  # a history that cannot be read is only logged
                out["history"] = g.shape_all(g.ALERT_HISTORY, found)
            return ok(out)
        if uuids:
            every = _call("Failed to get alerts", kite.get_alerts)
            # a nil slice when none match: "alerts": null
            listed = [a for a in every if a.get("uuid") in uuids] or None
        else:
            filters = {k: c.s(args.get(k)) for k in ("status", "type") if c.s(args.get(k))}
            listed = _call("Failed to get alerts", lambda: kite.get_alerts(filters or None))
        out = {"alerts": g.shape_all(g.ALERT, listed) if listed is not None else None}
        if history and listed:
            histories = {}
            for alert in listed:
                key = c.s(alert.get("uuid"))
                found = _history(kite, key)
                if found is not None:
                    histories[key] = g.shape_all(g.ALERT_HISTORY, found)
            out["histories"] = _go_map(histories)
        return ok(out)

    def create(kite: Simulation, args: Args) -> Result:
        params = _alert_params(args, ato_basket_required=ato_basket_required)
        alert = _call("Failed to create alert", lambda: kite.create_alert(**params))
        return ok({"alert": g.shape(g.ALERT, alert)})

    def modify(kite: Simulation, args: Args) -> Result:
        uuids = c.strings(args.get("uuids")) or []
        if not uuids:
            return fail("UUID is required for modify mode")
        params = _alert_params(args, ato_basket_required=ato_basket_required)
        alert = _call(
            f"Failed to modify alert {uuids[0]}", lambda: kite.modify_alert(uuids[0], **params)
        )
        return ok({"alert": g.shape(g.ALERT, alert)})

    def delete(kite: Simulation, args: Args) -> Result:
        uuids = c.strings(args.get("uuids")) or []
        if not uuids:
            return fail("At least one UUID is required for delete mode")
        _call("Failed to delete alerts", lambda: kite.delete_alerts(*uuids))
        # a Go map: keys sorted
        return ok({"deleted_count": len(uuids), "deleted_uuids": uuids, "success": True})

    return _modes("alerts", {"get": get, "create": create, "modify": modify, "delete": delete})


def _history(kite: Simulation, uuid: str) -> list[dict[str, Any]] | None:
    """An alert's history; None when it cannot be read (the real server only logs that)."""
    try:
        rows = kite.get_alert_history(uuid)
    except KiteConnectError:
        return None
    return rows if isinstance(rows, list) else None


def _with_reason(handler: Handler) -> Handler:
    """The alerts handlers append Kite's reason: ``Failed to create alert: <err>``."""

    def run(kite: Simulation, args: Args) -> Result:
        try:
            result = handler(kite, args)
        except Failed as stop:
            result = stop.result
        if result.is_error and result.kite_error is not None:
            return Result(f"{result.text}: {result.kite_error}", True, result.kite_error)
        return result

    return run


# ---------------------------------------------------------------- session


def _profile_name(kite: Simulation) -> str:
    try:
        return c.s(kite.profile().get("user_name"))
    except KiteConnectError:
        return ""


def session(clock: Callable[[], datetime]) -> Handler:
    """session_tool.go:53-108. The simulated account is always signed in: status says so,
    and logout answers as the real one does while the simulation stays signed in."""

    def status(kite: Simulation, args: Args) -> Result:
        login, expires = session_window(kite.scenario.clock, clock())
        # A Go map marshals with its keys sorted.
        return ok(
            {
                "authenticated": True,
                "created_at": g.go_time(login),
                "expires_at": g.go_time(expires),
                "kite_session_expired": False,
                "kite_session_expires_at": g.go_time(expires),
                "session_id": SESSION_ID,
                "status": "authenticated",
                "terminated": False,
            }
        )

    def logout(kite: Simulation, args: Args) -> Result:
        return ok({"success": True, "session_id": SESSION_ID, "status": "logged_out"})

    return _modes("session", {"status": status, "logout": logout})


SESSION_ID: Final = "kite-sandbox-simulated-session"
KITE_EXPIRY: Final = time(6, 0)  # a Kite access token expires at 06:00 the next day


def session_window(login: datetime, now: datetime) -> tuple[datetime, datetime]:
    """(login, expiry) of the simulated session: logged in at the scenario's clock, valid
    until 06:00 the next day (Kite Connect's token expiry), then logged in again at that
    06:00 for another day (the simulated account is always signed in)."""
    expires = datetime.combine(login.date() + timedelta(days=1), KITE_EXPIRY, login.tzinfo)
    while now >= expires:
        login, expires = expires, expires + timedelta(days=1)
    return login, expires


def login(text: str) -> Handler:
    """login (setup_tools.go): the simulated account is always signed in."""

    def run(kite: Simulation, args: Args) -> Result:
        return Result(text.format(name=_profile_name(kite)))

    return run


# ---------------------------------------------------------------- the tables

HOLDINGS_GROUPED: Final = (
    "Failed to get holdings",
    "Failed to get holdings summary",
    "Failed to get compact holdings",
)


def grouped(clock: Callable[[], datetime]) -> Generation:
    """The 7 grouped tools (generation c)."""
    portfolio = _modes(
        "portfolio",
        {
            "profile": _plain(g.USER_PROFILE, "profile", "Failed to get profile"),
            "margins": _plain(g.ALL_MARGINS, "margins", "Failed to get margins"),
            "holdings": lambda k, a: holdings(c.s(a.get("type"), "full"), k, a, HOLDINGS_GROUPED),
            "positions": lambda k, a: positions(k, a, "Failed to execute portfolio_positions"),
        },
    )
    orders = _modes(
        "orders",
        {
            "list": _paged_list(g.ORDER, "orders", "Failed to execute orders_list"),
            "history": order_history(g.ORDER),
            "trades": order_trades,
            "all_trades": _paged_list(g.TRADE, "trades", "Failed to execute orders_all_trades"),
            "place": lambda k, a: place(k, a, need_variety=False, protection=True),
            "modify": lambda k, a: modify(k, a, need_variety=False),
            "cancel": lambda k, a: cancel(k, a, need_variety=False),
        },
    )
    bad_type = "parameter 'trigger_type': must be 'single' or 'two-leg'"
    gtt = _modes(
        "gtt",
        {
            "list": _paged_list(g.GTT, "get_gtts", "Failed to execute gtt_list"),
            "place": lambda k, a: gtt_place(k, a, bad_type=bad_type),
            "modify": lambda k, a: gtt_modify(k, a, bad_type=bad_type, product_given=True),
            "delete": gtt_delete,
        },
    )
    market = _modes(
        "market",
        {
            "quote": quote,
            "ltp": _quote_kind("ltp", g.QUOTE_LTP, "Failed to get LTP"),
            "ohlc": _quote_kind("ohlc", g.QUOTE_OHLC, "Failed to get OHLC data"),
            "historical": historical,
            "search": search_grouped,
        },
    )
    mutual_funds = _modes(
        "mutual_funds",
        {
            "holdings": _plain(
                g.MF_HOLDING, "mf_holdings", "Failed to get mutual fund holdings", True
            )
        },
    )
    table: dict[str, Handler] = {
        "portfolio": portfolio,
        "orders": orders,
        "gtt": gtt,
        "market": market,
        "alerts": _with_reason(alerts(ato_basket_required=True)),
        "mutual_funds": mutual_funds,
        "session": session(clock),
    }
    return Generation("grouped", {k: guarded(v) for k, v in table.items()})


def _legacy_common(bad_type: str, order: tuple[g.Field, ...] = g.ORDER) -> dict[str, Handler]:
    """The separate tools both legacy generations share; ``order`` is their gokiteconnect's
    Order struct."""
    return {
        "get_profile": _plain(g.USER_PROFILE, "profile", "Failed to execute get_profile"),
        "get_margins": _plain(g.ALL_MARGINS, "margins", "Failed to execute get_margins"),
        "get_positions": lambda k, a: positions(k, a, "Failed to execute get_positions"),
        "get_trades": _paged_list(g.TRADE, "trades", "Failed to execute get_trades"),
        "get_orders": _paged_list(order, "orders", "Failed to execute get_orders"),
        "get_order_history": order_history(order),
        "get_order_trades": order_trades,
        "get_gtts": _paged_list(g.GTT, "get_gtts", "Failed to execute get_gtts"),
        "get_mf_holdings": _paged_list(
            g.MF_HOLDING, "mf_holdings", "Failed to execute get_mf_holdings"
        ),
        "get_quotes": quote,
        "get_historical_data": historical,
        "get_ltp": _quote_kind("ltp", g.QUOTE_LTP, "Failed to get latest trading prices"),
        "get_ohlc": _quote_kind("ohlc", g.QUOTE_OHLC, "Failed to get OHLC data"),
        "modify_order": lambda k, a: modify(k, a, need_variety=True),
        "cancel_order": lambda k, a: cancel(k, a, need_variety=True),
        "place_gtt_order": lambda k, a: gtt_place(k, a, bad_type=bad_type),
        "modify_gtt_order": lambda k, a: gtt_modify(k, a, bad_type=bad_type, product_given=False),
        "delete_gtt_order": gtt_delete,
    }


LEGACY_BAD_TYPE: Final = "Invalid trigger_type. Must be 'single' or 'two-leg'"
LEGACY_HOLDINGS: Final = ("Failed to execute get_holdings",) * 3


def legacy() -> Generation:
    """The separate tools of 847fe98 (generation b)."""
    table = _legacy_common(LEGACY_BAD_TYPE)
    table.update(
        login=login("You are already logged in as {name}. There is no need to log in again."),
        get_holdings=lambda k, a: holdings(c.s(a.get("type"), "full"), k, a, LEGACY_HOLDINGS),
        search_instruments=search_legacy,
        alerts=_with_reason(alerts(ato_basket_required=False)),
        place_order=lambda k, a: place(k, a, need_variety=True, protection=True),
    )
    return Generation("legacy", {k: guarded(v) for k, v in table.items()})


def legacy_oldest() -> Generation:
    """The oldest separate tools, dcf2dc4 (generation a)."""
    table = _legacy_common(LEGACY_BAD_TYPE, g.ORDER_V435)
    table.update(
        login=login("You are already logged in as {name}"),
        get_holdings=lambda k, a: holdings("full", k, a, LEGACY_HOLDINGS),
        search_instruments=search_oldest,
        place_order=lambda k, a: place(k, a, need_variety=True, protection=False),
    )
    return Generation("legacy-oldest", {k: guarded(v) for k, v in table.items()})


def generation(name: str, clock: Callable[[], datetime]) -> Generation:
    if name == "grouped":
        return grouped(clock)
    if name == "legacy":
        return legacy()
    if name == "legacy-oldest":
        return legacy_oldest()
    raise ValueError(f"unknown tool generation {name!r}")
