"""``greeks``: implied volatility from an option's price, then delta, gamma, theta, vega and
rho, per leg and for the portfolio of legs.

Black-76 on the future or synthetic forward is the default (no dividend guess: the forward
carries it); Black-Scholes on spot takes a stated rate and dividend yield. Time runs in years
of 365 days to 15:30 IST on the expiry date. Floats (``math``): these are model numbers, not
money."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from pydantic import Field

from ._common import TIME_FORMAT, Answer, Inputs, parse_date, parse_ist
from ._validate import refuse

EXPIRY_TIME = timedelta(hours=15, minutes=30)  # IST, on the expiry date
YEAR_SECONDS = 365 * 24 * 3600
MIN_VOL, MAX_VOL = 0.0001, 5.0  # 0.01% to 500% a year
DEFAULT_RATE_PCT = 5.5  # the 91-day T-bill since late 2025 (docs/calc.md)
Model = Literal["black76", "black_scholes"]


def norm_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


def norm_pdf(x: float) -> float:
    return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)


@dataclass(frozen=True)
class Market:
    """What prices an option besides its volatility. For Black-76 the underlying is the
    forward and ``carry`` equals ``rate`` (the forward already holds the carry)."""

    underlying: float
    strike: float
    years: float
    rate: float  # continuously compounded, a year
    carry: float  # dividend yield (Black-Scholes) or the rate (Black-76)
    call: bool
    black76: bool


@dataclass(frozen=True)
class Greeks:
    price: float
    d1: float
    d2: float
    delta: float
    gamma: float
    theta: float  # per calendar day
    vega: float  # per volatility point (1%)
    rho: float  # per 1% of rate


def price(m: Market, vol: float) -> float:
    d1, d2 = _d(m, vol)
    s = m.underlying * math.exp(-m.carry * m.years)
    k = m.strike * math.exp(-m.rate * m.years)
    if m.call:
        return s * norm_cdf(d1) - k * norm_cdf(d2)
    return k * norm_cdf(-d2) - s * norm_cdf(-d1)


def _d(m: Market, vol: float) -> tuple[float, float]:
    root = vol * math.sqrt(m.years)
    d1 = (math.log(m.underlying / m.strike) + (m.rate - m.carry + vol * vol / 2) * m.years) / root
    return d1, d1 - root


def greeks(m: Market, vol: float) -> Greeks:
    d1, d2 = _d(m, vol)
    t, r, q = m.years, m.rate, m.carry
    sq = math.exp(-q * t)
    kr = m.strike * math.exp(-r * t)
    value = price(m, vol)
    gamma = sq * norm_pdf(d1) / (m.underlying * vol * math.sqrt(t))
    vega = m.underlying * sq * norm_pdf(d1) * math.sqrt(t) / 100
    decay = -m.underlying * sq * norm_pdf(d1) * vol / (2 * math.sqrt(t))
    if m.call:
        delta = sq * norm_cdf(d1)
        theta = decay - r * kr * norm_cdf(d2) + q * m.underlying * sq * norm_cdf(d1)
        rho = kr * t * norm_cdf(d2)
    else:
        delta = sq * (norm_cdf(d1) - 1)
        theta = decay + r * kr * norm_cdf(-d2) - q * m.underlying * sq * norm_cdf(-d1)
        rho = -kr * t * norm_cdf(-d2)
    if m.black76:
        rho = -t * value  # the forward is held: only the discount moves
    return Greeks(value, d1, d2, delta, gamma, theta / 365, vega, rho / 100)


def bounds(m: Market) -> tuple[float, float]:
    """The no-arbitrage range of a European option's price."""
    s = m.underlying * math.exp(-m.carry * m.years)
    k = m.strike * math.exp(-m.rate * m.years)
    return (max(0.0, s - k), s) if m.call else (max(0.0, k - s), k)


def implied_vol(m: Market, target: float) -> float | str:
    """The volatility whose price is ``target`` (between 0.01% and 500%, to within 1e-11 of
    the underlying), or why there is none."""
    low_bound, high_bound = bounds(m)
    if target <= low_bound:
        return (
            f"price {target:g} is at or below the option's lower bound {low_bound:.4f} "
            "(its discounted intrinsic value): no volatility fits"
        )
    if target >= high_bound:
        return (
            f"price {target:g} is at or above the option's upper bound {high_bound:.4f}: "
            "no volatility fits"
        )
    low, high = MIN_VOL, MAX_VOL
    if price(m, low) > target:
        return f"price {target:g} is below the price at 0.01% volatility ({price(m, low):.4f})"
    if price(m, high) < target:
        return f"price {target:g} is above the price at 500% volatility ({price(m, high):.4f})"
    # Newton's steps on vega, kept inside a bisection bracket that only shrinks: a few
    # steps where bisection alone takes about forty.
    root_t = math.sqrt(m.years)
    vol = min(max(math.sqrt(2 * math.pi / m.years) * target / m.underlying, low), high)
    for _ in range(100):
        diff = price(m, vol) - target
        if abs(diff) <= 1e-11 * m.underlying:
            return vol
        if diff > 0:
            high = vol
        else:
            low = vol
        d1 = _d(m, vol)[0]
        vega = m.underlying * math.exp(-m.carry * m.years) * norm_pdf(d1) * root_t
        step = vol - diff / vega if vega > 0 else low
        vol = step if low < step < high else (low + high) / 2
        if high - low < 1e-13:
            break
    return vol


def years_to_expiry(quote_time: datetime, expiry: datetime) -> float:
    return ((expiry + EXPIRY_TIME) - quote_time).total_seconds() / YEAR_SECONDS


class Leg(Inputs):
    option_type: Literal["CE", "PE"] = Field(description="CE (call) or PE (put)")
    strike: float = Field(gt=0, description="the option's `strike`")
    underlying: float = Field(
        gt=0,
        description="the future's price or synthetic forward (black76), or the spot's "
        "`last_price` (black_scholes)",
    )
    expiry_date: str = Field(description="the option's `expiry_date`, YYYY-MM-DD")
    option_price: float | None = Field(
        default=None,
        gt=0,
        description="the option's price to solve IV from (omit to use the mid of bid and ask)",
    )
    bid: float | None = Field(default=None, gt=0, description="the best bid, `depth.buy[0].price`")
    ask: float | None = Field(default=None, gt=0, description="the best ask, `depth.sell[0].price`")
    volatility: float | None = Field(
        default=None, gt=0, le=500, description="a volatility in % to use instead of solving IV"
    )
    quantity: int = Field(
        default=1,
        description="units held, negative for a short (lots × lot size); 1 for one unit",
    )


class GreeksInputs(Inputs):
    legs: list[Leg] = Field(min_length=1, max_length=50, description="the options, one per leg")
    quote_time: str = Field(
        description=f"the quote's `timestamp`, {TIME_FORMAT} in IST (or ISO with an offset)"
    )
    model: Model = Field(
        default="black76",
        description="black76 (on the future or synthetic forward; preferred) or "
        "black_scholes (on spot, with a stated rate and dividend yield)",
    )
    rate: float | None = Field(
        default=None,
        ge=-5,
        le=50,
        description=f"the risk-free rate in % a year, continuously compounded (black76 "
        f"default {DEFAULT_RATE_PCT}; required for black_scholes)",
    )
    dividend_yield: float | None = Field(
        default=None,
        ge=0,
        le=50,
        description="the dividend yield in % a year (black_scholes only; required there)",
    )


def run(i: GreeksInputs) -> Answer:
    problems = []
    quote = parse_ist(i.quote_time)
    if quote is None:
        problems.append(f"`quote_time`: {i.quote_time!r} is not a time — send {TIME_FORMAT}")
    if i.model == "black_scholes":
        if i.rate is None:
            problems.append("`rate`: missing — black_scholes needs a stated rate in %")
        if i.dividend_yield is None:
            problems.append(
                "`dividend_yield`: missing — black_scholes needs a stated dividend yield in % "
                "(0 for none)"
            )
    elif i.dividend_yield is not None:
        problems.append("`dividend_yield`: black76 takes none (the forward holds it) — drop it")
    expiries = []
    for n, leg in enumerate(i.legs):
        day = parse_date(leg.expiry_date)
        if day is None:
            problems.append(
                f"`legs.{n}.expiry_date`: {leg.expiry_date!r} is not a date — send YYYY-MM-DD"
            )
        elif quote is not None and years_to_expiry(quote, day) <= 0:
            problems.append(f"`legs.{n}.expiry_date`: the option expired before the quote time")
        expiries.append(day)
        given = [leg.option_price is not None, leg.volatility is not None]
        if sum(given) > 1 or (not any(given) and (leg.bid is None or leg.ask is None)):
            problems.append(
                f"`legs.{n}`: send one of option_price, volatility, or both bid and ask"
            )
        if leg.bid is not None and leg.ask is not None and leg.bid > leg.ask:
            problems.append(f"`legs.{n}.bid`: {leg.bid} is above the ask {leg.ask}")
    if problems:
        raise refuse("greeks", *problems)
    assert quote is not None
    rate_pct = i.rate if i.rate is not None else DEFAULT_RATE_PCT
    rate = rate_pct / 100
    black76 = i.model == "black76"
    carry = rate if black76 else (i.dividend_yield or 0.0) / 100
    rows, refusals = [], []
    totals = dict.fromkeys(("delta", "gamma", "theta", "vega", "rho"), 0.0)
    for n, (leg, day) in enumerate(zip(i.legs, expiries, strict=True)):
        assert day is not None
        t = years_to_expiry(quote, day)
        m = Market(leg.underlying, leg.strike, t, rate, carry, leg.option_type == "CE", black76)
        target = leg.option_price
        if target is None and leg.volatility is None:
            assert leg.bid is not None and leg.ask is not None
            target = (leg.bid + leg.ask) / 2
        if leg.volatility is not None:
            vol: float | str = leg.volatility / 100
        else:
            assert target is not None
            vol = implied_vol(m, target)
        if isinstance(vol, str):
            refusals.append(f"`legs.{n}`: {vol}")
            continue
        g = greeks(m, vol)
        row: dict[str, object] = {
            "leg": n,
            "years": round(t, 6),
            "price_used": target,
            "iv_pct": round(vol * 100, 4),
            "model_price": round(g.price, 4),
            "d1": round(g.d1, 4),
            "d2": round(g.d2, 4),
            "delta": round(g.delta, 4),
            "gamma": round(g.gamma, 6),
            "theta": round(g.theta, 4),
            "vega": round(g.vega, 4),
            "rho": round(g.rho, 4),
            "quantity": leg.quantity,
        }
        for side, quote_price in (("bid", leg.bid), ("ask", leg.ask)):
            if quote_price is not None and leg.volatility is None:
                at = implied_vol(m, quote_price)
                row[f"iv_{side}_pct"] = round(at * 100, 4) if isinstance(at, float) else at
        for name in totals:
            totals[name] += getattr(g, name) * leg.quantity
        rows.append(row)
    if refusals:
        raise refuse("greeks", *refusals)
    portfolio = {k: round(v, 4) for k, v in totals.items()}
    assumptions = [
        f"model {i.model}: "
        + (
            "Black-76 on the underlying given as the forward (future or synthetic)"
            if black76
            else "Black-Scholes on spot"
        ),
        f"rate {rate_pct:g}% a year, continuously compounded"
        + (" (default: the 91-day T-bill)" if i.rate is None else ""),
        "time to expiry in years of 365 days to 15:30 IST on the expiry date",
        "theta per calendar day, vega per volatility point, rho per 1% of rate",
    ]
    if not black76:
        assumptions.insert(2, f"dividend yield {i.dividend_yield:g}% a year")
    if any(leg.option_price is None and leg.volatility is None for leg in i.legs):
        assumptions.append("price used: the mid of bid and ask")
    lines = [
        f"leg {r['leg']}: IV {r['iv_pct']:.2f}%; delta {r['delta']}; gamma {r['gamma']}; "
        f"theta {r['theta']}/day; vega {r['vega']}; rho {r['rho']} (T {r['years']} years)"
        for r in rows
    ]
    if len(rows) > 1 or i.legs[0].quantity != 1:
        lines.append(
            f"portfolio (× quantity): delta {portfolio['delta']}; gamma {portfolio['gamma']}; "
            f"theta {portfolio['theta']}/day; vega {portfolio['vega']}; rho {portfolio['rho']}"
        )
    return Answer(
        "greeks",
        i.model_dump(),
        {"legs": rows, "portfolio": portfolio},
        tuple(assumptions),
        ("nothing rounded before the end; IV to 4 decimals of %, Greeks to 4 (gamma 6)",),
        tuple(lines),
    )
