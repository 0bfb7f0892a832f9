"""What every mode shares: the answer, exact decimals from JSON numbers, and the inputs'
base model (strict, every field described, unknown fields refused)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict

IST = timezone(timedelta(hours=5, minutes=30))
PAISA = Decimal("0.01")
RUPEE = Decimal("1")


class Inputs(BaseModel):
    """A mode's inputs: strict types (no "10" for 10, no true for 1), unknown fields refused.

    Each model's validator is built at its first use, not at import: a server that answers
    one mode builds one mode's (the fourteen built at once cost the warm server 1.2 MB; bench
    section 5, "peak RSS of the warm server")."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, defer_build=True)


@dataclass(frozen=True)
class Answer:
    """One mode's answer: the inputs it used (defaults filled in), the result, and each
    assumption and rounding in words. ``to_dict`` is the structured content."""

    mode: str
    inputs: dict[str, Any]
    result: dict[str, Any]
    assumptions: tuple[str, ...] = ()
    roundings: tuple[str, ...] = ()
    lines: tuple[str, ...] = field(default=(), compare=False)  # the result for reading

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "inputs": jsonable(self.inputs),
            "result": jsonable(self.result),
            "assumptions": list(self.assumptions),
            "roundings": list(self.roundings),
        }

    def to_text(self) -> str:
        out = [f"calc {self.mode}", *self.lines]
        if self.assumptions:
            out += ["Assumptions:", *(f"- {a}" for a in self.assumptions)]
        if self.roundings:
            out += ["Roundings:", *(f"- {r}" for r in self.roundings)]
        return "\n".join(out)


def jsonable(value: Any) -> Any:
    """``value`` with decimals as JSON numbers (a money figure keeps its paise: 1500.05; the
    shortest float that reads back as the same two decimals)."""
    kind = type(value)
    if kind is Decimal:
        return float(value)
    if kind is dict:
        return {k: jsonable(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [jsonable(v) for v in value]
    if kind is float and not math.isfinite(value):
        return str(value)
    return value


def dec(value: float | int) -> Decimal:
    """The decimal a JSON number was written as (1500.05, not 1500.0499999…; 1450, not
    1450.0: strict models hand an integer over as a float)."""
    if isinstance(value, float) and value.is_integer():
        return Decimal(int(value))
    return Decimal(value) if isinstance(value, int) else Decimal(repr(value))


def paise(value: Decimal) -> Decimal:
    """Rounded to the paisa, half up (as a contract note shows money)."""
    return value.quantize(PAISA, rounding=ROUND_HALF_UP)


def rupees(value: Decimal) -> Decimal:
    """Rounded to the rupee, half up (STT and CTT on a contract note)."""
    return value.quantize(RUPEE, rounding=ROUND_HALF_UP)


def to_tick(price: Decimal, tick: Decimal, down: bool) -> Decimal:
    """``price`` moved to a multiple of ``tick``: down (floor) or up (ceiling)."""
    ticks = (price / tick).to_integral_value(rounding=ROUND_FLOOR if down else ROUND_CEILING)
    return (ticks * tick).quantize(tick)


def on_tick(price: Decimal, tick: Decimal) -> bool:
    return price % tick == 0


def money(value: Decimal) -> str:
    """Money for reading: thousands separated, two decimals (15,000.00)."""
    return f"{paise(value):,.2f}"


TIME_FORMAT = "YYYY-MM-DD HH:MM:SS"


def parse_ist(text: str) -> datetime | None:
    """A Kite timestamp (``2026-12-02 11:30:00``, IST) or an ISO time with an offset; None
    when it is neither."""
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return parsed.replace(tzinfo=IST) if parsed.tzinfo is None else parsed


def parse_date(text: str) -> datetime | None:
    """``YYYY-MM-DD`` at midnight IST, or None."""
    try:
        day = datetime.strptime(text.strip(), "%Y-%m-%d")
    except ValueError:
        return None
    return day.replace(tzinfo=IST)
