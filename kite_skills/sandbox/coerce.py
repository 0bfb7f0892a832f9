"""How the Kite MCP server reads a tool's arguments (``mcp/common.go``): the ``SafeAssert*``
helpers that never fail (a wrong type gives the default), ``ValidateRequired`` and its texts,
and ``from``/``limit`` pagination. Sources:
zerodha/kite-mcp-server@60976dd4bbe7483d5e5850d82ec66932df105552:mcp/common.go:93-296 (the
same helpers in 847fe98 and dcf2dc4).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from .gotypes import go_int

TRUE_WORDS: Final = frozenset({"true", "True", "TRUE", "1", "yes", "Yes", "YES", "on", "On", "ON"})
FALSE_WORDS: Final = frozenset(
    {"false", "False", "FALSE", "0", "no", "No", "NO", "off", "Off", "OFF"}
)


def go_format(value: Any) -> str:
    """Go's ``fmt.Sprintf("%v", value)`` for a decoded JSON value."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return _go_float(value)
    if isinstance(value, int):
        return _go_float(float(value)) if abs(value) >= 10**21 else str(value)
    if isinstance(value, list):
        return "[" + " ".join(go_format(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_format(value[k])}" for k in sorted(value)) + "]"
    return "<nil>"


def _go_float(value: float) -> str:
    if not math.isfinite(value):
        return "+Inf" if value > 0 else ("-Inf" if value < 0 else "NaN")
    return f"{value:g}" if abs(value) >= 1e21 or abs(value) < 1e-4 else repr(value)


def s(value: Any, default: str = "") -> str:
    """SafeAssertString: nil -> default; a string as is; anything else formatted with %v."""
    if value is None:
        return default
    return go_format(value)


def i(value: Any, default: int = 0) -> int:
    """SafeAssertInt: a JSON number truncated toward zero; any other type -> default."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    if isinstance(value, int) and 2**53 <= abs(value) < 2**63:
        return go_int(float(value))  # Go decoded it as a float64 first
    return go_int(value)


def f(value: Any, default: float = 0.0) -> float:
    """SafeAssertFloat64: a JSON number; any other type -> default."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    try:
        return float(value)
    except OverflowError:  # no float64 holds it
        return default


def b(value: Any, default: bool = False) -> bool:
    """SafeAssertBool: a bool, or one of the true/false words; else default."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        if value in TRUE_WORDS:
            return True
        if value in FALSE_WORDS:
            return False
    return default


def strings(value: Any) -> list[str] | None:
    """SafeAssertStringArray: a non-array -> nil; each element read with SafeAssertString
    (a number becomes its text), empty ones dropped (common.go:221 in dcf2dc4)."""
    if not isinstance(value, list):
        return None
    return [text for text in (s(v, "") for v in value) if text != ""]


def required(args: Mapping[str, Any], *names: str) -> str | None:
    """ValidateRequired: the first failing parameter's text, or None."""
    for name in names:
        value = args.get(name)
        if value is None:
            return f"parameter '{name}': is required"
        if value == "" or (isinstance(value, list) and not value):
            return f"parameter '{name}': cannot be empty"
    return None


def paginate(args: Mapping[str, Any], rows: Sequence[Any]) -> Any:
    """``from``/``limit``: ``rows[from:]`` bare when limit <= 0, else the envelope
    ``{data, pagination: {from, limit, total, has_more, returned}}`` with ``from`` and
    ``limit`` echoed as given (common.go:198-296)."""
    start_raw, limit = i(args.get("from"), 0), i(args.get("limit"), 0)
    total = len(rows)
    start = min(max(start_raw, 0), total)
    if limit <= 0:
        return list(rows[start:])
    page = list(rows[start : min(start + limit, total)])
    return {
        "data": page,
        "pagination": {
            "from": start_raw,
            "limit": limit,
            "total": total,
            "has_more": start_raw + len(page) < total,
            "returned": len(page),
        },
    }
