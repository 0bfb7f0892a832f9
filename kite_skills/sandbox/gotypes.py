"""Kite Connect answers as the Kite MCP server returns them: gokiteconnect decodes each REST
answer into a Go struct and the server marshals that struct back (``MarshalResponse``), so a
tool result carries exactly the struct's fields, zero values included, in the struct's order,
with Go's number and time formats and Go's HTML-safe escaping.

Field lists transcribed from zerodha/gokiteconnect@621645de61f8b54deaf5ff4b6df16868fcf80710
(orders.go, portfolio.go, user.go, margins.go, gtt.go, market.go, mutualfunds.go, alerts.go,
models/snaps.go, models/time.go).
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timedelta, timezone
from typing import Any, Final

IST: Final = timezone(timedelta(hours=5, minutes=30), "IST")
ZERO_TIME: Final = "0001-01-01T00:00:00Z"  # Go's time.Time{} marshalled

# A field's kind: "s" string, "i" integer, "f" float64, "b" bool, "t" models.Time,
# "m" map[string]interface{} (nil -> null), "ls" []string (nil -> null), "any" passed through,
# or a nested struct (a tuple of fields), or ("list", struct) for a slice of structs.
Field = tuple[str, Any]

OHLC: Final[tuple[Field, ...]] = (("open", "f"), ("high", "f"), ("low", "f"), ("close", "f"))
DEPTH_ITEM: Final = (("price", "f"), ("quantity", "i"), ("orders", "i"))

ORDER: Final[tuple[Field, ...]] = (
    ("account_id", "s"),
    ("placed_by", "s"),
    ("order_id", "s"),
    ("exchange_order_id", "s"),
    ("parent_order_id", "s"),
    ("status", "s"),
    ("status_message", "s"),
    ("status_message_raw", "s"),
    ("order_timestamp", "t"),
    ("exchange_update_timestamp", "t"),
    ("exchange_timestamp", "t"),
    ("variety", "s"),
    ("modified", "b"),
    ("meta", "m"),
    ("exchange", "s"),
    ("tradingsymbol", "s"),
    ("instrument_token", "i"),
    ("order_type", "s"),
    ("transaction_type", "s"),
    ("validity", "s"),
    ("validity_ttl", "i"),
    ("product", "s"),
    ("quantity", "f"),
    ("disclosed_quantity", "f"),
    ("price", "f"),
    ("trigger_price", "f"),
    ("average_price", "f"),
    ("filled_quantity", "f"),
    ("pending_quantity", "f"),
    ("cancelled_quantity", "f"),
    ("auction_number", "s"),
    ("market_protection", "f"),
    ("tag", "s"),
    ("tags", "ls"),
    ("guid", "s"),
)
# The oldest generation (zerodha/kite-mcp-server@dcf2dc4) builds on gokiteconnect v4.3.5 (its
# go.mod), whose Order struct has neither MarketProtection nor GUID; they came in v4.4.0
# (zerodha/gokiteconnect@v4.3.5:orders.go, type Order).
ORDER_V435: Final[tuple[Field, ...]] = tuple(
    f for f in ORDER if f[0] not in ("market_protection", "guid")
)
TRADE: Final[tuple[Field, ...]] = (
    ("average_price", "f"),
    ("quantity", "f"),
    ("trade_id", "s"),
    ("product", "s"),
    ("fill_timestamp", "t"),
    ("exchange_timestamp", "t"),
    ("exchange_order_id", "s"),
    ("order_id", "s"),
    ("transaction_type", "s"),
    ("tradingsymbol", "s"),
    ("exchange", "s"),
    ("instrument_token", "i"),
)
MTF_HOLDING: Final = (
    ("quantity", "i"),
    ("used_quantity", "i"),
    ("average_price", "f"),
    ("value", "f"),
    ("initial_margin", "f"),
)
HOLDING: Final[tuple[Field, ...]] = (
    ("tradingsymbol", "s"),
    ("exchange", "s"),
    ("instrument_token", "i"),
    ("isin", "s"),
    ("product", "s"),
    ("price", "f"),
    ("used_quantity", "i"),
    ("quantity", "i"),
    ("t1_quantity", "i"),
    ("realised_quantity", "i"),
    ("authorised_quantity", "i"),
    ("authorised_date", "t"),
    ("opening_quantity", "i"),
    ("collateral_quantity", "i"),
    ("collateral_type", "s"),
    ("discrepancy", "b"),
    ("average_price", "f"),
    ("last_price", "f"),
    ("close_price", "f"),
    ("pnl", "f"),
    ("day_change", "f"),
    ("day_change_percentage", "f"),
    ("mtf", MTF_HOLDING),
)
HOLDING_COMPACT: Final[tuple[Field, ...]] = (
    ("exchange", "s"),
    ("tradingsymbol", "s"),
    ("instrument_token", "i"),
    ("t1_quantity", "i"),
    ("quantity", "i"),
)
HOLDING_SUMMARY: Final[tuple[Field, ...]] = (
    ("total_pnl", "f"),
    ("total_pnl_percent", "f"),
    ("today_pnl", "f"),
    ("today_pnl_percent", "f"),
    ("invested_amount", "f"),
    ("current_value", "f"),
)
POSITION: Final[tuple[Field, ...]] = (
    ("tradingsymbol", "s"),
    ("exchange", "s"),
    ("instrument_token", "i"),
    ("product", "s"),
    ("quantity", "i"),
    ("overnight_quantity", "i"),
    ("multiplier", "f"),
    ("average_price", "f"),
    ("close_price", "f"),
    ("last_price", "f"),
    ("value", "f"),
    ("pnl", "f"),
    ("m2m", "f"),
    ("unrealised", "f"),
    ("realised", "f"),
    ("buy_quantity", "i"),
    ("buy_price", "f"),
    ("buy_value", "f"),
    ("buy_m2m", "f"),
    ("sell_quantity", "i"),
    ("sell_price", "f"),
    ("sell_value", "f"),
    ("sell_m2m", "f"),
    ("day_buy_quantity", "i"),
    ("day_buy_price", "f"),
    ("day_buy_value", "f"),
    ("day_sell_quantity", "i"),
    ("day_sell_price", "f"),
    ("day_sell_value", "f"),
)
USER_PROFILE: Final[tuple[Field, ...]] = (
    ("user_id", "s"),
    ("user_name", "s"),
    ("user_shortname", "s"),
    ("avatar_url", "s"),
    ("user_type", "s"),
    ("email", "s"),
    ("broker", "s"),
    ("meta", (("demat_consent", "s"),)),
    ("products", "ls"),
    ("order_types", "ls"),
    ("exchanges", "ls"),
)
_AVAILABLE: Final = (
    ("adhoc_margin", "f"),
    ("cash", "f"),
    ("collateral", "f"),
    ("intraday_payin", "f"),
    ("live_balance", "f"),
    ("opening_balance", "f"),
)
_USED: Final = (
    ("debits", "f"),
    ("exposure", "f"),
    ("m2m_realised", "f"),
    ("m2m_unrealised", "f"),
    ("option_premium", "f"),
    ("payout", "f"),
    ("span", "f"),
    ("holding_sales", "f"),
    ("turnover", "f"),
    ("liquid_collateral", "f"),
    ("stock_collateral", "f"),
    ("delivery", "f"),
)
MARGINS: Final[tuple[Field, ...]] = (
    ("enabled", "b"),
    ("net", "f"),
    ("available", _AVAILABLE),
    ("utilised", _USED),
)
ALL_MARGINS: Final[tuple[Field, ...]] = (("equity", MARGINS), ("commodity", MARGINS))
GTT: Final[tuple[Field, ...]] = (
    ("id", "i"),
    ("user_id", "s"),
    ("type", "s"),
    ("created_at", "t"),
    ("updated_at", "t"),
    ("expires_at", "t"),
    ("status", "s"),
    (
        "condition",
        (
            ("exchange", "s"),
            ("tradingsymbol", "s"),
            ("last_price", "f"),
            ("trigger_values", "lf"),
        ),
    ),
    ("orders", ("list", ORDER)),
    ("meta", (("rejection_reason", "s"),)),
)
QUOTE: Final[tuple[Field, ...]] = (
    ("instrument_token", "i"),
    ("timestamp", "t"),
    ("last_price", "f"),
    ("last_quantity", "i"),
    ("last_trade_time", "t"),
    ("average_price", "f"),
    ("volume", "i"),
    ("buy_quantity", "i"),
    ("sell_quantity", "i"),
    ("ohlc", OHLC),
    ("net_change", "f"),
    ("oi", "f"),
    ("oi_day_high", "f"),
    ("oi_day_low", "f"),
    ("lower_circuit_limit", "f"),
    ("upper_circuit_limit", "f"),
    ("depth", (("buy", ("depth", DEPTH_ITEM)), ("sell", ("depth", DEPTH_ITEM)))),
)
QUOTE_OHLC: Final[tuple[Field, ...]] = (
    ("instrument_token", "i"),
    ("last_price", "f"),
    ("ohlc", OHLC),
)
QUOTE_LTP: Final[tuple[Field, ...]] = (("instrument_token", "i"), ("last_price", "f"))
HISTORICAL: Final[tuple[Field, ...]] = (
    ("date", "t"),
    ("open", "f"),
    ("high", "f"),
    ("low", "f"),
    ("close", "f"),
    ("volume", "i"),
    ("oi", "i"),
)
MF_HOLDING: Final[tuple[Field, ...]] = (
    ("folio", "s"),
    ("fund", "s"),
    ("tradingsymbol", "s"),
    ("average_price", "f"),
    ("last_price", "f"),
    ("last_price_date", "s"),
    ("pnl", "f"),
    ("quantity", "f"),
)
ORDER_RESPONSE: Final[tuple[Field, ...]] = (("order_id", "s"),)
GTT_RESPONSE: Final[tuple[Field, ...]] = (("trigger_id", "i"),)
ALERT_ORDER_PARAMS: Final[tuple[Field, ...]] = (
    ("transaction_type", "s"),
    ("product", "s"),
    ("order_type", "s"),
    ("validity", "s"),
    ("validity_ttl", "i"),
    ("quantity", "i"),
    ("price", "f"),
    ("trigger_price", "f"),
    ("disclosed_quantity", "i"),
    ("last_price", "f"),
    ("variety", "s"),
    ("tags", "ls"),
    ("squareoff", "f"),
    ("stoploss", "f"),
    ("trailing_stoploss", "f"),
    ("iceberg_legs", "i"),
    ("market_protection", "f"),
    ("gtt", "omit"),  # *OrderGTTParams, omitempty
)
BASKET_ITEM: Final[tuple[Field, ...]] = (
    ("type", "s"),
    ("tradingsymbol", "s"),
    ("exchange", "s"),
    ("weight", "i"),
    ("params", ALERT_ORDER_PARAMS),
    ("id", "omitzero"),  # int, omitempty
    ("instrument_token", "omitzero"),
)
BASKET: Final[tuple[Field, ...]] = (
    ("name", "s"),
    ("type", "s"),
    ("tags", "ls"),
    ("items", ("list", BASKET_ITEM)),
)
ALERT: Final[tuple[Field, ...]] = (
    ("type", "s"),
    ("user_id", "s"),
    ("uuid", "s"),
    ("name", "s"),
    ("status", "s"),
    ("disabled_reason", "s"),
    ("lhs_attribute", "s"),
    ("lhs_exchange", "s"),
    ("lhs_tradingsymbol", "s"),
    ("operator", "s"),
    ("rhs_type", "s"),
    ("rhs_attribute", "s"),
    ("rhs_exchange", "s"),
    ("rhs_tradingsymbol", "s"),
    ("rhs_constant", "f"),
    ("alert_count", "i"),
    ("created_at", "t"),
    ("updated_at", "t"),
    ("basket", ("pointer", BASKET)),  # *Basket, omitempty
)
ALERT_HISTORY: Final[tuple[Field, ...]] = (
    ("uuid", "s"),
    ("type", "s"),
    ("meta", "any"),
    ("condition", "s"),
    ("created_at", "t"),
    ("order_meta", "any"),
)

_INT64_MIN: Final = -(2**63)


def go_int(value: Any) -> int:
    """A JSON number as Go's int conversion leaves it (truncated toward zero; out of range or
    not finite: the minimum int64, as amd64 converts)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**63 else _INT64_MIN
    if isinstance(value, float):
        if not math.isfinite(value) or not -(2.0**63) <= value < 2.0**63:
            return _INT64_MIN
        return int(value)
    return 0


def _parse_time(text: str) -> datetime | None:
    """models.Time's layouts: IST wall times, then zoned ones (models/time.go)."""
    for layout in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d"):
        try:
            return datetime.strptime(text, layout).replace(tzinfo=IST)
        except ValueError:
            continue
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=IST)


def go_time(value: Any) -> str:
    """A Kite timestamp (``YYYY-MM-DD HH:MM:SS`` or ``YYYY-MM-DD`` IST, or zoned) as Go's
    time.Time marshals it (RFC 3339); empty, null or unreadable -> the zero time."""
    if isinstance(value, datetime):
        moment: datetime | None = value if value.tzinfo else value.replace(tzinfo=IST)
    elif isinstance(value, str) and value.strip():
        moment = _parse_time(value.strip())
    else:
        moment = None
    if moment is None:
        return ZERO_TIME
    text = moment.isoformat()
    if moment.microsecond:
        head, _, rest = text.partition(".")
        digits, zone = rest[:6].rstrip("0"), rest[6:]
        text = f"{head}.{digits}{zone}"
    return text.replace("+00:00", "Z") if moment.utcoffset() == timedelta(0) else text


def _float(value: Any) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)  # Go writes 1500, not 1500.0
    return value


def shape(fields: tuple[Field, ...], value: Any) -> dict[str, Any]:
    """``value`` (a Kite JSON object) as the Go struct ``fields`` marshals it."""
    source = value if isinstance(value, dict) else {}
    out: dict[str, Any] = {}
    for name, kind in fields:
        item = source.get(name)
        if kind == "omit":
            if item is not None:
                out[name] = item
        elif kind == "omitzero":
            number = go_int(item) if isinstance(item, int | float) else 0
            if number:
                out[name] = number
        elif isinstance(kind, tuple) and kind and kind[0] == "pointer":
            if isinstance(item, dict):
                out[name] = shape(kind[1], item)
        else:
            out[name] = _one(kind, item)
    return out


def _one(kind: Any, item: Any) -> Any:
    if kind == "s":
        return item if isinstance(item, str) else ""
    if kind == "i":
        return go_int(item) if isinstance(item, int | float) else 0
    if kind == "f":
        return _float(item)
    if kind == "b":
        return item if isinstance(item, bool) else False
    if kind == "t":
        return go_time(item)
    if kind == "m":
        return item if isinstance(item, dict) else None
    if kind == "ls":
        return [x for x in item if isinstance(x, str)] if isinstance(item, list) else None
    if kind == "lf":
        return [_float(x) for x in item] if isinstance(item, list) else None
    if kind == "any":
        return item
    if isinstance(kind, tuple) and kind and kind[0] == "list":
        return [shape(kind[1], x) for x in item] if isinstance(item, list) else None
    if isinstance(kind, tuple) and kind and kind[0] == "depth":  # a [5]DepthItem array
        rows = item if isinstance(item, list) else []
        return [shape(kind[1], rows[i] if i < len(rows) else {}) for i in range(5)]
    return shape(kind, item)


def shape_all(fields: tuple[Field, ...], rows: Any) -> list[dict[str, Any]]:
    return [shape(fields, row) for row in rows] if isinstance(rows, list) else []


def shape_map(fields: tuple[Field, ...], value: Any) -> dict[str, Any]:
    """A Go map of structs (Quote, QuoteLTP, QuoteOHLC): keys sorted, as Go marshals maps."""
    source = value if isinstance(value, dict) else {}
    return {key: shape(fields, source[key]) for key in sorted(source)}


_HTML_UNSAFE: Final = re.compile("[<>&\u2028\u2029]")
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def marshal(value: Any) -> str:
    """``json.Marshal``: compact, ``<``, ``>``, ``&``, U+2028 and U+2029 escaped, and text
    that is not valid Unicode replaced by U+FFFD."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if not text.isascii():
        text = _LONE_SURROGATE.sub("\ufffd", text)
    return _HTML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
