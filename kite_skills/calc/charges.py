"""``charges``: what a trade costs at Zerodha (brokerage, STT/CTT, exchange transaction
charges, the SEBI fee, stamp duty, GST) per segment, and the move that pays for them.

:data:`RATES` is the dated rate table: one row per rate, each with the date it took effect
and its source. A trade is charged at the newest row of each kind in force on its date."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import ROUND_CEILING, Decimal
from typing import Literal

from pydantic import Field

from ._common import Answer, Inputs, dec, money, paise, rupees
from ._validate import refuse

Segment = Literal[
    "equity_delivery",
    "equity_intraday",
    "futures",
    "options",
    "currency_futures",
    "currency_options",
    "commodity_futures",
    "commodity_options",
]
SEGMENTS: tuple[str, ...] = Segment.__args__  # type: ignore[attr-defined]
Component = Literal["brokerage", "stt", "exchange", "sebi", "stamp", "gst"]
Side = Literal["buy", "sell", "both"]

TABLE_STARTS = date(2024, 10, 1)  # the exchanges' uniform ("true to label") charges began

ZERODHA_CHARGES = (
    "zerodha.com/charges (read 2026-12-05 through the copy at proficientequities.com; the "
    "page itself could not be reached from here)"
)
ZERODHA_MCX = "zerodha.com/charges as of 19 Jun 2026 (quoted by v2.webnotes.in, MCX charges)"
CURRENCY = (
    "the exchanges' currency rates as brokers list them (moneysukh.com/Pricing, "
    "support.hdfcsky.com)"
)
TRUE_TO_LABEL = "SEBI circular of 1 Jul 2024 (uniform exchange charges), in force 1 Oct 2024"
BUDGET_2026 = "Budget 2026 (Finance Act 2026), in force 1 Apr 2026; docs/calc.md"
FINANCE_2024 = "Finance (No. 2) Act 2024, in force 1 Oct 2024"
FINANCE_2013 = "Finance Act 2013 (STT and CTT rates)"
STAMP_ACT = "Indian Stamp Act as amended by the Finance Act 2019, in force 1 Jul 2020"
GST_ACT = "CGST/IGST Acts, 18% on financial services, in force 1 Jul 2017"


@dataclass(frozen=True)
class Rate:
    """One rate: ``percent`` of the ``basis`` on ``side`` (brokerage: ``percent`` capped at
    ``cap`` rupees an order, or ``cap`` flat when ``percent`` is None)."""

    component: Component
    segment: str  # one of SEGMENTS
    exchange: str  # NSE, BSE, MCX, or * for any
    side: Side
    percent: Decimal | None
    effective_from: date
    source: str
    cap: Decimal | None = None

    def describe(self) -> str:
        if self.component == "brokerage":
            if self.percent is None:
                what = f"flat ₹{self.cap} an order"
            elif self.cap is None:
                what = f"{self.percent}%"
            else:
                what = f"{self.percent}% or ₹{self.cap} an order, whichever is lower"
        else:
            what = f"{self.percent}% on {self.side}"
        where = "" if self.exchange == "*" else f" {self.exchange}"
        return f"{self.component}{where} {what} (from {self.effective_from}; {self.source})"


def _r(
    component: Component,
    segments: tuple[str, ...],
    exchange: str,
    side: Side,
    percent: str | None,
    since: date,
    source: str,
    cap: str | None = None,
) -> list[Rate]:
    return [
        Rate(
            component,
            s,
            exchange,
            side,
            Decimal(percent) if percent is not None else None,
            since,
            source,
            Decimal(cap) if cap is not None else None,
        )
        for s in segments
    ]


EQUITY = ("equity_delivery", "equity_intraday")
PERCENT_BROKERAGE = ("equity_intraday", "futures", "currency_futures", "commodity_futures")
FLAT_BROKERAGE = ("options", "currency_options", "commodity_options")
T = TABLE_STARTS

RATES: tuple[Rate, ...] = tuple(
    _r("brokerage", ("equity_delivery",), "*", "both", "0", T, ZERODHA_CHARGES)
    + _r("brokerage", PERCENT_BROKERAGE, "*", "both", "0.03", T, ZERODHA_CHARGES, "20")
    + _r("brokerage", FLAT_BROKERAGE, "*", "both", None, T, ZERODHA_CHARGES, "20")
    + _r("stt", ("equity_delivery",), "*", "both", "0.1", date(2013, 6, 1), FINANCE_2013)
    + _r("stt", ("equity_intraday",), "*", "sell", "0.025", date(2013, 6, 1), FINANCE_2013)
    + _r("stt", ("futures",), "*", "sell", "0.02", date(2024, 10, 1), FINANCE_2024)
    + _r("stt", ("options",), "*", "sell", "0.1", date(2024, 10, 1), FINANCE_2024)
    + _r("stt", ("futures",), "*", "sell", "0.05", date(2026, 4, 1), BUDGET_2026)
    + _r("stt", ("options",), "*", "sell", "0.15", date(2026, 4, 1), BUDGET_2026)
    + _r(
        "stt",
        ("currency_futures", "currency_options"),
        "*",
        "sell",
        "0",
        T,
        "no STT on currency derivatives; " + CURRENCY,
    )
    + _r(
        "stt",
        ("commodity_futures",),
        "*",
        "sell",
        "0.01",
        date(2013, 7, 1),
        FINANCE_2013 + ", non-agricultural commodities",
    )
    + _r("stt", ("commodity_options",), "*", "sell", "0.05", date(2013, 7, 1), FINANCE_2013)
    + _r(
        "exchange",
        EQUITY,
        "NSE",
        "both",
        "0.00307",
        T,
        f"{TRUE_TO_LABEL}; {ZERODHA_CHARGES}, NSE's IPFT included",
    )
    + _r("exchange", EQUITY, "BSE", "both", "0.00375", T, f"{TRUE_TO_LABEL}; {ZERODHA_CHARGES}")
    + _r(
        "exchange",
        ("futures",),
        "NSE",
        "both",
        "0.00183",
        T,
        f"{TRUE_TO_LABEL}; {ZERODHA_CHARGES}, NSE's IPFT included",
    )
    + _r("exchange", ("futures",), "BSE", "both", "0", T, f"{TRUE_TO_LABEL}; {ZERODHA_CHARGES}")
    + _r(
        "exchange",
        ("options",),
        "NSE",
        "both",
        "0.03553",
        T,
        f"{TRUE_TO_LABEL}; {ZERODHA_CHARGES}, on premium, NSE's IPFT included",
    )
    + _r(
        "exchange",
        ("options",),
        "BSE",
        "both",
        "0.0325",
        T,
        f"{TRUE_TO_LABEL}; {ZERODHA_CHARGES}, on premium",
    )
    + _r("exchange", ("currency_futures",), "NSE", "both", "0.00035", T, CURRENCY)
    + _r("exchange", ("currency_futures",), "BSE", "both", "0.00045", T, CURRENCY)
    + _r("exchange", ("currency_options",), "NSE", "both", "0.0311", T, CURRENCY + ", on premium")
    + _r("exchange", ("currency_options",), "BSE", "both", "0.001", T, CURRENCY + ", on premium")
    + _r("exchange", ("commodity_futures",), "MCX", "both", "0.0021", T, ZERODHA_MCX)
    + _r(
        "exchange", ("commodity_options",), "MCX", "both", "0.0418", T, ZERODHA_MCX + ", on premium"
    )
    + _r("sebi", SEGMENTS, "*", "both", "0.0001", T, f"₹10 a crore; {ZERODHA_CHARGES}")
    + _r("stamp", ("equity_delivery",), "*", "buy", "0.015", date(2020, 7, 1), STAMP_ACT)
    + _r(
        "stamp",
        ("equity_intraday", "options", "commodity_options"),
        "*",
        "buy",
        "0.003",
        date(2020, 7, 1),
        STAMP_ACT,
    )
    + _r(
        "stamp", ("futures", "commodity_futures"), "*", "buy", "0.002", date(2020, 7, 1), STAMP_ACT
    )
    + _r(
        "stamp",
        ("currency_futures", "currency_options"),
        "*",
        "buy",
        "0.0001",
        date(2020, 7, 1),
        STAMP_ACT,
    )
    + _r(
        "gst",
        SEGMENTS,
        "*",
        "both",
        "18",
        date(2017, 7, 1),
        GST_ACT + "; on brokerage, exchange charges and the SEBI fee",
    )
)

EXCHANGES = {
    "equity_delivery": ("NSE", "BSE"),
    "equity_intraday": ("NSE", "BSE"),
    "futures": ("NSE", "BSE"),
    "options": ("NSE", "BSE"),
    "currency_futures": ("NSE", "BSE"),
    "currency_options": ("NSE", "BSE"),
    "commodity_futures": ("MCX",),
    "commodity_options": ("MCX",),
}


def rate(component: Component, segment: str, exchange: str, on: date) -> Rate:
    """The newest row of ``component`` for ``segment`` on ``exchange`` in force ``on``."""
    rows = [
        r
        for r in RATES
        if r.component == component
        and r.segment == segment
        and r.exchange in ("*", exchange)
        and r.effective_from <= on
    ]
    return max(rows, key=lambda r: r.effective_from)


class ChargesInputs(Inputs):
    segment: Segment = Field(
        description="equity_delivery, equity_intraday, futures, options, currency_futures, "
        "currency_options, commodity_futures or commodity_options"
    )
    exchange: Literal["NSE", "BSE", "MCX"] = Field(description="NSE or BSE (MCX for commodities)")
    quantity: int = Field(ge=1, description="units traded on each side (lots × lot size)")
    buy_price: float | None = Field(
        default=None,
        gt=0,
        description="the buy price (premium for options), in rupees; omit for a sell only",
    )
    sell_price: float | None = Field(
        default=None,
        gt=0,
        description="the sell price (premium for options), in rupees; omit for a buy only",
    )
    multiplier: float = Field(
        default=1,
        gt=0,
        description="the contract's `multiplier` (MCX, currency); 1 for equity and F&O units",
    )
    trade_date: str = Field(
        description="the trade's date, YYYY-MM-DD (the rates in force that day)"
    )


def run(i: ChargesInputs) -> Answer:
    problems = []
    if i.buy_price is None and i.sell_price is None:
        problems.append("`buy_price`: send buy_price, sell_price or both")
    if i.exchange not in EXCHANGES[i.segment]:
        allowed = " or ".join(EXCHANGES[i.segment])
        problems.append(f"`exchange`: {i.segment} trades on {allowed}, not {i.exchange}")
    try:
        on = date.fromisoformat(i.trade_date)
    except ValueError:
        problems.append(f"`trade_date`: {i.trade_date!r} is not a date — send YYYY-MM-DD")
    else:
        if on < TABLE_STARTS:
            problems.append(
                f"`trade_date`: the rate table starts on {TABLE_STARTS} — send a date from then on"
            )
    if problems:
        raise refuse("charges", *problems)
    units = i.quantity * dec(i.multiplier)
    buy = dec(i.buy_price) * units if i.buy_price is not None else Decimal(0)
    sell = dec(i.sell_price) * units if i.sell_price is not None else Decimal(0)
    turnover = buy + sell
    used = {
        c: rate(c, i.segment, i.exchange, on)
        for c in ("brokerage", "stt", "exchange", "sebi", "stamp", "gst")
    }

    def pct(r: Rate, value: Decimal) -> Decimal:
        assert r.percent is not None
        return value * r.percent / 100

    b = used["brokerage"]
    orders = [v for v in (buy, sell) if v]
    if b.percent is None:
        assert b.cap is not None
        brokerage = b.cap * len(orders)
    else:
        brokerage = sum(
            (paise(min(pct(b, v), b.cap) if b.cap is not None else pct(b, v)) for v in orders),
            Decimal(0),
        )
    s = used["stt"]
    stt = rupees(pct(s, {"both": turnover, "sell": sell, "buy": buy}[s.side]))
    exchange = paise(pct(used["exchange"], turnover))
    sebi = paise(pct(used["sebi"], turnover))
    stamp = paise(pct(used["stamp"], buy))
    gst = paise(pct(used["gst"], brokerage + exchange + sebi))
    total = brokerage + stt + exchange + sebi + stamp + gst
    move = (total / units).quantize(Decimal("0.01"), rounding=ROUND_CEILING)
    result: dict[str, object] = {
        "turnover": turnover,
        "brokerage": brokerage,
        "stt_ctt": stt,
        "exchange_charges": exchange,
        "sebi_fee": sebi,
        "stamp_duty": stamp,
        "gst": gst,
        "total": total,
        "breakeven_move": move,
        "net_pnl": sell - buy - total if buy and sell else None,
        "as_of": i.trade_date,
        "rates": [
            {
                "component": r.component,
                "percent": r.percent,
                "cap": r.cap,
                "side": r.side,
                "effective_from": r.effective_from.isoformat(),
                "source": r.source,
            }
            for r in used.values()
        ],
    }
    lines = [
        f"{i.segment} on {i.exchange}, {i.quantity} units, rates as of {i.trade_date}",
        f"turnover {money(turnover)}",
        f"brokerage {money(brokerage)}; STT/CTT {money(stt)}; exchange {money(exchange)}; "
        f"SEBI {money(sebi)}; stamp {money(stamp)}; GST {money(gst)}",
        f"total {money(total)}; breakeven move {move} a unit",
    ]
    if result["net_pnl"] is not None:
        lines.append(f"net P&L after charges {money(sell - buy - total)}")
    lines += ["rates used:", *(f"- {r.describe()}" for r in used.values())]
    assumptions = [
        f"Zerodha's brokerage and the statutory rates in force on {i.trade_date} (as of that date)",
        "one executed order a side; an order filled in parts at the same price is one order",
        "not included: DP charges on a delivery sell, exercise or assignment of options, "
        "call and trade",
    ]
    if i.segment == "commodity_futures":
        assumptions.append("CTT at the non-agricultural rate")
    return Answer(
        "charges",
        i.model_dump(),
        result,
        tuple(assumptions),
        (
            "STT/CTT rounded to the rupee (as the contract note does); every other charge to "
            "the paisa, half up; GST on the rounded charges",
            "breakeven move rounded up to the paisa, so that it covers the charges",
        ),
        tuple(lines),
    )
