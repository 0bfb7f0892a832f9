"""The person's limits: one JSON file that only a person writes (``kite-skills guard limits``
or the dashboard's Guard page). The guard's MCP server reads it before every write and never
writes it; no MCP tool reads or writes it (tests/guard/test_boundary.py).

Each limit is a row of :data:`RULES`: its name, what it checks, the message a person reads,
its default, and the two tests that prove it (one where it fires, one just below its
threshold where it must not). The checks themselves are in :mod:`kite_skills.guard.judge`.

Default file: ``guard-limits.json`` in ``kite-skills/`` under the per-user config folder
(Linux ``$XDG_CONFIG_HOME`` or ``~/.config``); written with mode 0600, replaced atomically.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import time
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .. import exposure, os_dirs
from ..errors import KiteError

APP: Final = "kite-skills"
NAME: Final = "guard-limits.json"
MAX_REASON_CHARS: Final = 500  # the kill switch's reason
SEGMENTS: Final = ("NSE", "BSE", "NFO", "BFO", "MCX", "CDS")
PRODUCTS: Final = ("CNC", "NRML", "MIS", "MTF")


class LimitsError(KiteError):
    """The limits file cannot be read or a limit cannot be set as given."""


class KillSwitch(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    reason: str = Field(min_length=1, max_length=MAX_REASON_CHARS)
    by: str
    at: str  # ISO time, UTC


class Limits(BaseModel):
    """Every limit; None is "no limit"."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kill_switch: KillSwitch | None = None
    max_order_value: float | None = Field(default=500_000, gt=0)
    max_quantity: int | None = Field(default=None, gt=0)
    max_lots: int | None = Field(default=None, gt=0)
    max_orders_per_day: int | None = Field(default=100, gt=0)
    max_value_per_day: float | None = Field(default=None, gt=0)
    max_orders_per_minute: int | None = Field(default=10, gt=0)
    duplicate_window_seconds: int | None = Field(default=120, gt=0)
    segments: tuple[str, ...] | None = None
    products: tuple[str, ...] | None = None
    instruments: tuple[str, ...] | None = None
    market_orders: bool = True
    trading_hours: tuple[time, time] | None = None  # IST, weekdays
    # The sandbox's watch rules (kite_skills/exposure.py), judged before a write goes out.
    hedge_broken: bool = True
    short_before_hedge: bool = True
    over_exit: bool = True
    protection_removed: bool = True
    ask: bool = True  # ask the person (MCP elicitation) where the client can; else refuse

    @field_validator("segments", "products", "instruments")
    @classmethod
    def _upper(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return None if value is None else tuple(v.strip().upper() for v in value)


@dataclass(frozen=True)
class Rule:
    """One limit: its setting in :class:`Limits`, what it checks, the message (formatted with
    the numbers), its default in words, and its tests in tests/guard/test_limits.py."""

    name: str
    setting: str
    checks: str
    message: str
    default: str
    fires: str
    quiet: str


_TESTS: Final = "tests/guard/test_limits.py::"


def _rule(name: str, setting: str, checks: str, message: str, default: str) -> Rule:
    slug = name.replace("-", "_")
    return Rule(
        name,
        setting,
        checks,
        message,
        default,
        f"{_TESTS}test_{slug}_fires",
        f"{_TESTS}test_{slug}_quiet",
    )


def _watch_rule(row: exposure.Rule) -> Rule:
    """One of the sandbox's watch rules: its name, what it detects and its advice are
    :mod:`kite_skills.exposure`'s; the guard says what the write would leave."""
    how = "its order as if it filled" if row is exposure.HEDGE_BROKEN else "its effect applied"
    return _rule(
        row.name,
        row.name.replace("-", "_"),
        f"{row.detects} (judged before the write: {how})",
        f"after this write, {{detail}} ({{instruments}}): {row.message}",
        "on",
    )


RULES: Final[tuple[Rule, ...]] = (
    _rule(
        "kill-switch",
        "kill_switch",
        "any write while the kill switch is on (never asked: only a person lifts it)",
        "the kill switch is on ({reason}, set by {by} at {at}): no writes at all",
        "off",
    ),
    _rule(
        "order-value",
        "max_order_value",
        "an order's value: quantity × its limit price (a MARKET or SL-M order: the last "
        "price or its trigger)",
        "this order is {value}, above your {limit} limit per order",
        "₹5,00,000",
    ),
    _rule(
        "quantity",
        "max_quantity",
        "an order's quantity",
        "{value} units, above your {limit} per order",
        "none",
    ),
    _rule(
        "lots",
        "max_lots",
        "an F&O order's lots (quantity ÷ the lot size the upstream's instrument search gives)",
        "{value} lots, above your {limit} lots per order",
        "none",
    ),
    _rule(
        "orders-per-day",
        "max_orders_per_day",
        "orders in today's order book (read from the upstream) with this one",
        "this would be order {value} today, above your {limit} orders a day",
        "100",
    ),
    _rule(
        "value-per-day",
        "max_value_per_day",
        "today's traded and open value in the order book (filled × average price, pending × "
        "price) with this order",
        "today's orders would come to {value}, above your {limit} a day",
        "none",
    ),
    _rule(
        "orders-per-minute",
        "max_orders_per_minute",
        "orders placed or modified through this guard in the last 60 seconds, with this one",
        "this would be order {value} in a minute, above your {limit} a minute",
        "10",
    ),
    _rule(
        "duplicate",
        "duplicate_window_seconds",
        "an order with the same instrument, side, quantity and price as one placed through "
        "this guard within the window",
        "the same order ({value}) went in {ago} s ago, within your {limit} s duplicate window",
        "120 s",
    ),
    _rule(
        "segment",
        "segments",
        "the order's exchange is among the allowed segments",
        "{value} is not among your allowed segments ({limit})",
        "all",
    ),
    _rule(
        "product",
        "products",
        "the order's product is among the allowed products",
        "{value} is not among your allowed products ({limit})",
        "all",
    ),
    _rule(
        "instrument",
        "instruments",
        "the order's EXCHANGE:TRADINGSYMBOL is among the allowed instruments",
        "{value} is not among your allowed instruments ({limit})",
        "all",
    ),
    _rule(
        "market-orders",
        "market_orders",
        "a MARKET or SL-M order while MARKET orders are off",
        "a {value} order, and your MARKET orders are off",
        "on",
    ),
    _rule(
        "trading-hours",
        "trading_hours",
        "the time (IST, Monday to Friday) is within your trading hours",
        "it is {value} IST, outside your trading hours {limit}",
        "none",
    ),
    *(_watch_rule(row) for row in exposure.RULES),
)


def rule(name: str) -> Rule:
    for row in RULES:
        if row.name == name:
            return row
    raise KeyError(name)


def rupees(value: float) -> str:
    """₹ with Indian digit grouping: 480000 → ₹4,80,000; paise only when there are any."""
    whole, paise = divmod(round(value * 100), 100)
    digits = str(abs(whole))
    head, tail = digits[:-3], digits[-3:]
    groups: list[str] = []
    while len(head) > 2:
        groups.insert(0, head[-2:])
        head = head[:-2]
    if head:
        groups.insert(0, head)
    text = ",".join([*groups, tail]) if groups else tail
    return f"{'-' if whole < 0 else ''}₹{text}" + (f".{paise:02d}" if paise else "")


def default_path(env: Mapping[str, str], platform: str | None = None) -> Path:
    return os_dirs.config_dir(env, platform or sys.platform) / APP / NAME


def load(path: Path) -> Limits:
    """The limits in ``path``; the defaults when there is no file yet."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Limits()
    except OSError as exc:
        raise LimitsError(f"{path}: cannot read the guard's limits: {exc.strerror or exc}") from exc
    try:
        return Limits.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "the file"
        raise LimitsError(
            f"{path}:1: {where}: {first['msg']} — fix it with 'kite-skills guard limits set' "
            "or on the dashboard's Guard page"
        ) from exc


def save(path: Path, limits: Limits) -> None:
    """Write ``limits`` (mode 0600), replacing the file in one rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = json.dumps(limits.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)


def with_setting(limits: Limits, setting: str, text: str) -> Limits:
    """``limits`` with one setting parsed from a person's words (``off`` for no limit)."""
    fields = Limits.model_fields
    if setting not in fields or setting == "kill_switch":
        names = ", ".join(n for n in fields if n != "kill_switch")
        raise LimitsError(
            f"{setting!r} is not a limit — one of: {names} (the kill switch: "
            "'kite-skills guard limits kill REASON')"
        )
    switch = fields[setting].annotation is bool  # on or off, never "no limit"
    value: Any = text.strip()
    if value.lower() in ("off", "none", ""):
        value = False if switch else None
    elif switch:
        if value.lower() not in ("on", "off"):
            raise LimitsError(f"{setting}: say on or off (got {text!r})")
        value = True
    elif setting in ("segments", "products", "instruments"):
        value = tuple(v for v in value.replace(" ", ",").split(",") if v)
    elif setting == "trading_hours":
        start, _, end = value.partition("-")
        value = (start.strip(), end.strip())
    elif setting in ("max_order_value", "max_value_per_day"):
        value = value.replace(",", "").lstrip("₹")
    try:
        return Limits.model_validate({**limits.model_dump(), setting: value})
    except ValidationError as exc:
        said = exc.errors(include_url=False)[0]["msg"]
        raise LimitsError(f"{setting} {text!r}: {said}") from exc


def in_words(limits: Limits, setting: str) -> str:
    """A setting as a person reads it."""
    value = getattr(limits, setting)
    if setting == "kill_switch":
        return "off" if value is None else f"ON since {value.at} by {value.by}: {value.reason}"
    if value is None:
        return "off"
    if isinstance(value, bool):
        return "on" if value else "off"
    if setting in ("max_order_value", "max_value_per_day"):
        return rupees(value)
    if setting == "trading_hours":
        return f"{value[0]:%H:%M}-{value[1]:%H:%M} IST, Monday to Friday"
    if isinstance(value, tuple):
        return ", ".join(value)
    return str(value)


EXTRA: Final = (("ask", "ask you (MCP elicitation) where the client can, instead of refusing"),)


def describe(limits: Limits) -> list[str]:
    """Every limit: its setting, value, and what it checks."""
    rows = [(r.setting, r.checks) for r in RULES] + list(EXTRA)
    return [f"{setting:<26} {in_words(limits, setting):<16} {checks}" for setting, checks in rows]


def settings() -> tuple[str, ...]:
    """Every setting a person may write with :func:`with_setting`, in the rule rows' order."""
    return tuple(r.setting for r in RULES if r.setting != "kill_switch") + tuple(
        name for name, _ in EXTRA
    )


def as_text(limits: Limits, setting: str) -> str:
    """A setting as :func:`with_setting` reads it back (a form's value)."""
    value = getattr(limits, setting)
    if value is None or value is False:
        return "off"
    if value is True:
        return "on"
    if setting == "trading_hours":
        return f"{value[0]:%H:%M}-{value[1]:%H:%M}"
    if isinstance(value, tuple):
        return ",".join(value)
    return f"{value:g}" if isinstance(value, float) else str(value)
