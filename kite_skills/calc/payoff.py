"""``payoff``: the P&L of a multi-leg position (options and futures, long and short) at expiry
over a price grid, with its breakevens, maximum profit and loss ("unlimited" where it is) and
net premium, and optionally its value at a time before expiry (Black-76, each option's
volatility given).

At expiry the P&L is piecewise linear with kinks at the strikes, so the extremes and the
breakevens are found exactly (in ``decimal``) from the kinks and the slope past the last."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Literal

from pydantic import Field

from . import greeks
from ._common import TIME_FORMAT, Answer, Inputs, dec, money, paise, parse_date, parse_ist
from ._validate import refuse

MAX_GRID_POINTS = 1001
TEXT_GRID_POINTS = 41  # a longer grid is left to the structured content, not the text
UNLIMITED = "unlimited"


class PayoffLeg(Inputs):
    instrument: Literal["CE", "PE", "FUT"] = Field(description="CE, PE or FUT")
    side: Literal["BUY", "SELL"] = Field(description="BUY (long) or SELL (short)")
    price: float = Field(
        ge=0, description="the premium (options) or entry price (futures), in rupees"
    )
    quantity: int = Field(ge=1, description="units (lots × lot size)")
    strike: float | None = Field(default=None, gt=0, description="the strike (options only)")
    volatility: float | None = Field(
        default=None, gt=0, le=500, description="the option's volatility in %, for value_time"
    )
    expiry_date: str | None = Field(
        default=None, description="the leg's `expiry_date`, YYYY-MM-DD, for value_time"
    )


class PayoffInputs(Inputs):
    legs: list[PayoffLeg] = Field(min_length=1, max_length=50, description="the position's legs")
    grid_from: float | None = Field(
        default=None,
        ge=0,
        description="the grid's lowest underlying price (default 80% of the lowest strike)",
    )
    grid_to: float | None = Field(
        default=None,
        gt=0,
        description="the grid's highest underlying price (default 120% of the highest strike)",
    )
    grid_points: int = Field(
        default=41,
        ge=2,
        le=MAX_GRID_POINTS,
        description=f"points on the grid, 2 to {MAX_GRID_POINTS}",
    )
    value_time: str | None = Field(
        default=None,
        description=f"a time before expiry to value the position at too, {TIME_FORMAT} IST "
        "(needs each option leg's volatility and expiry_date)",
    )
    rate: float | None = Field(
        default=None,
        ge=-5,
        le=50,
        description=f"rate in % for value_time (default {greeks.DEFAULT_RATE_PCT})",
    )


def _slope_sign(leg: PayoffLeg) -> int:
    return 1 if leg.side == "BUY" else -1


def pnl_at(legs: list[PayoffLeg], x: Decimal) -> Decimal:
    """The position's P&L at expiry with the underlying at ``x``."""
    total = Decimal(0)
    for leg in legs:
        if leg.instrument == "FUT":
            value = x
        else:
            assert leg.strike is not None
            k = dec(leg.strike)
            value = max(x - k, Decimal(0)) if leg.instrument == "CE" else max(k - x, Decimal(0))
        total += _slope_sign(leg) * leg.quantity * (value - dec(leg.price))
    return total


@dataclass(frozen=True)
class Profile:
    """The P&L at expiry as the straight pieces it is: its value at each kink (0 and every
    strike, ascending) and its whole-number slope from each kink to the next (the last one's
    to any higher price). Worked out once, so that a grid point costs one multiply-add."""

    kinks: tuple[Decimal, ...]
    values: tuple[Decimal, ...]
    slopes: tuple[int, ...]

    def at(self, x: Decimal) -> Decimal:
        i = bisect.bisect_right(self.kinks, x) - 1
        return self.values[i] + self.slopes[i] * (x - self.kinks[i])


def profile(legs: list[PayoffLeg]) -> Profile:
    xs = sorted({Decimal(0), *(dec(g.strike) for g in legs if g.strike is not None)})
    slopes = []
    for k in xs:  # the slope just above k: calls struck at or below it, puts above it
        slope = 0
        for g in legs:
            signed = _slope_sign(g) * g.quantity
            if g.instrument == "FUT" or (g.instrument == "CE" and dec(g.strike or 0) <= k):
                slope += signed
            elif g.instrument == "PE" and dec(g.strike or 0) > k:
                slope -= signed
        slopes.append(slope)
    return Profile(tuple(xs), tuple(pnl_at(legs, x) for x in xs), tuple(slopes))


def breakevens(legs: list[PayoffLeg]) -> list[Decimal]:
    """Every underlying price where the P&L at expiry is zero, exactly (both ends of a flat
    zero stretch)."""
    return _breakevens(profile(legs))


def _breakevens(shape: Profile) -> list[Decimal]:
    found: list[Decimal] = []
    for i, (a, pa) in enumerate(zip(shape.kinks, shape.values, strict=True)):
        slope = shape.slopes[i]
        if pa == 0:
            found.append(a)
        elif slope and (pa < 0) == (slope > 0):  # heading for zero
            crossing = a - pa / slope
            if i + 1 == len(shape.kinks) or crossing < shape.kinks[i + 1]:
                found.append(crossing)
    return sorted(set(found))


def run(i: PayoffInputs) -> Answer:
    problems = []
    for n, leg in enumerate(i.legs):
        if (leg.instrument == "FUT") == (leg.strike is not None):
            want = "no strike" if leg.instrument == "FUT" else "its strike"
            problems.append(f"`legs.{n}.strike`: a {leg.instrument} leg takes {want}")
        if leg.instrument == "FUT" and leg.price == 0:
            problems.append(f"`legs.{n}.price`: a futures leg needs its entry price above 0")
    value_time = parse_ist(i.value_time) if i.value_time is not None else None
    if i.value_time is not None and value_time is None:
        problems.append(f"`value_time`: {i.value_time!r} is not a time — send {TIME_FORMAT}")
    if value_time is not None:
        for n, leg in enumerate(i.legs):
            if leg.instrument == "FUT":
                continue
            day = parse_date(leg.expiry_date) if leg.expiry_date else None
            if leg.volatility is None:
                problems.append(
                    f"`legs.{n}.volatility`: missing — value_time needs each option's "
                    "volatility in %"
                )
            if day is None:
                problems.append(
                    f"`legs.{n}.expiry_date`: missing or not YYYY-MM-DD — value_time needs it"
                )
            elif greeks.years_to_expiry(value_time, day) <= 0:
                problems.append(f"`legs.{n}.expiry_date`: the leg expires before value_time")
    low_strike = min((dec(g.strike) for g in i.legs if g.strike), default=None)
    high_strike = max((dec(g.strike) for g in i.legs if g.strike), default=None)
    anchor_low = low_strike or min(dec(g.price) for g in i.legs)
    anchor_high = high_strike or max(dec(g.price) for g in i.legs)
    start = dec(i.grid_from) if i.grid_from is not None else paise(anchor_low * Decimal("0.8"))
    end = dec(i.grid_to) if i.grid_to is not None else paise(anchor_high * Decimal("1.2"))
    if end <= start:
        problems.append(f"`grid_to`: {end} is not above grid_from {start} — send a higher grid_to")
    if problems:
        raise refuse("payoff", *problems)
    step = (end - start) / (i.grid_points - 1)
    grid = [paise(start + step * k) for k in range(i.grid_points)]
    rate = (i.rate if i.rate is not None else greeks.DEFAULT_RATE_PCT) / 100
    shape = profile(i.legs)
    # The grid as columns, one list per quantity, a point's values at the same index. A row
    # object per point repeats its keys: a 200-point reply was 10.1 KiB (now 5.7), and the
    # SDK's check and dump of it 113 µs a call (now 48; bench section 2, "calc payoff").
    columns: dict[str, list[Decimal]] = {
        "underlying": grid,
        "pnl": [paise(shape.at(x)) for x in grid],
    }
    if value_time is not None:
        columns["pnl_at_value_time"] = [
            paise(dec(value_at(i.legs, float(x), value_time, rate))) for x in grid
        ]
    table = (
        [" | ".join(money(c) for c in cells) for cells in zip(*columns.values(), strict=True)]
        if i.grid_points <= TEXT_GRID_POINTS
        else []
    )
    xs = shape.kinks
    at = dict(zip(xs, shape.values, strict=True))
    slope = shape.slopes[-1]
    top, bottom = max(at.values()), min(at.values())
    max_profit: Decimal | str = UNLIMITED if slope > 0 else top
    max_loss: Decimal | str = UNLIMITED if slope < 0 else bottom
    premium = sum(
        (-_slope_sign(g) * g.quantity * dec(g.price) for g in i.legs if g.instrument != "FUT"),
        Decimal(0),
    )
    quantities = {g.quantity for g in i.legs}
    result: dict[str, object] = {
        "net_premium": premium,
        "net_premium_per_unit": premium / quantities.pop() if len(quantities) == 1 else None,
        "breakevens": [paise(b) for b in _breakevens(shape)],
        "max_profit": max_profit if isinstance(max_profit, str) else paise(max_profit),
        "max_profit_at": [x for x in xs if at[x] == top] if max_profit != UNLIMITED else [],
        "max_loss": max_loss if isinstance(max_loss, str) else paise(-max_loss),
        "max_loss_at": [x for x in xs if at[x] == bottom] if max_loss != UNLIMITED else [],
        "grid": columns,
    }
    kind = "credit" if premium > 0 else "debit" if premium < 0 else "no premium"
    lines = [
        f"net premium {money(premium)} ({kind}; a credit is positive)",
        "breakevens: " + (", ".join(money(b) for b in _breakevens(shape)) or "none"),
        f"maximum profit: {max_profit if isinstance(max_profit, str) else money(max_profit)}",
        f"maximum loss: {max_loss if isinstance(max_loss, str) else money(-max_loss)}",
        f"grid: {len(grid)} points from {start} to {end}",
        *(
            ["underlying | P&L at expiry" + (" | P&L at value_time" if value_time else ""), *table]
            if table
            else [f"(the grid's {len(grid)} points are in the structured content)"]
        ),
    ]
    assumptions = [
        "P&L at expiry: options at intrinsic value, futures at the underlying; charges not "
        "included",
        "maximum loss is reported as a positive amount; the underlying cannot go below 0",
    ]
    if value_time is not None:
        assumptions.append(
            f"value at {i.value_time}: Black-76 with each leg's volatility, the grid price as the "
            f"forward, rate {(i.rate if i.rate is not None else greeks.DEFAULT_RATE_PCT):g}%"
        )
    return Answer(
        "payoff",
        i.model_dump(),
        result,
        tuple(assumptions),
        ("money rounded to the paisa, half up; breakevens found exactly, then rounded",),
        tuple(lines),
    )


def value_at(legs: list[PayoffLeg], x: float, when: datetime, rate: float) -> float:
    """The position's P&L at ``when`` (before expiry), the underlying (forward) at ``x``."""
    total = 0.0
    for leg in legs:
        sign = _slope_sign(leg)
        if leg.instrument == "FUT":
            total += sign * leg.quantity * (x - leg.price)
            continue
        assert leg.strike is not None and leg.volatility is not None and leg.expiry_date
        day = parse_date(leg.expiry_date)
        assert day is not None
        t = greeks.years_to_expiry(when, day)
        call = leg.instrument == "CE"
        if x > 0:
            value = greeks.price(
                greeks.Market(x, leg.strike, t, rate, rate, call, True), leg.volatility / 100
            )
        else:  # a forward at 0: the call is worthless, the put worth the discounted strike
            value = 0.0 if call else leg.strike * math.exp(-rate * t)
        total += sign * leg.quantity * (value - leg.price)
    return total
