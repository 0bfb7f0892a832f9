"""The calculators against published figures.

Greeks: John C. Hull, *Options, Futures, and Other Derivatives*: the worked example of the
chapter on the Black-Scholes-Merton model (S 42, K 40, r 10%, σ 20%, T 0.5: call 4.76, put
0.81), the call of the chapter on the Greek letters (S 49, K 50, r 5%, σ 20%, T 20 weeks:
price 2.40, delta 0.522, gamma 0.066, theta -4.31 a year, vega 12.1, rho 8.91 per unit of
rate and volatility), and the Black's-model example of the chapter on futures options
(F 20, K 20, r 9%, σ 25%, T 4 months: put 1.12).

Charges: Zerodha's brokerage calculator (zerodha.com/brokerage-calculator) could not be
reached from here on 2026-12-05, so the intraday trade below is worked by hand from the
documented rates and their sources (zerodha.com/charges as mirrored, NSE's true-to-label
rates, the Stamp Act, SEBI's fee, GST; docs/calc.md lists them), the calculator's own default
trade (buy 1000, sell 1100, 400 shares on NSE)."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

import pytest

from kite_skills.calc import calculate
from kite_skills.calc._common import IST


def quote_time_for(years: float, expiry: str = "2026-07-02") -> str:
    """A quote time ``years`` (of 365 days) before 15:30 IST on ``expiry``."""
    close = datetime.fromisoformat(expiry).replace(hour=15, minute=30, tzinfo=IST)
    return (close - timedelta(seconds=round(years * 365 * 86400))).strftime("%Y-%m-%d %H:%M:%S")


def one_leg(option_type: str, strike: float, underlying: float, vol: float, years: float, **kw):
    arguments = {
        "mode": "greeks",
        "quote_time": quote_time_for(years),
        "legs": [
            {
                "option_type": option_type,
                "strike": strike,
                "underlying": underlying,
                "expiry_date": "2026-07-02",
                "volatility": vol,
            }
        ],
        **kw,
    }
    return calculate(arguments).result["legs"][0]


@pytest.mark.parametrize(("option_type", "printed"), [("CE", 4.76), ("PE", 0.81)])
def test_hull_black_scholes_prices(option_type: str, printed: float) -> None:
    leg = one_leg(option_type, 40, 42, 20, 0.5, model="black_scholes", rate=10, dividend_yield=0)
    assert round(leg["model_price"], 2) == printed


def test_hull_greek_letters_of_a_call() -> None:
    leg = one_leg("CE", 50, 49, 20, 20 / 52, model="black_scholes", rate=5, dividend_yield=0)
    assert round(leg["model_price"], 2) == 2.40
    assert round(leg["delta"], 3) == 0.522
    assert round(leg["gamma"], 3) == 0.066
    assert round(leg["theta"] * 365, 2) == -4.31  # Hull: per year; calc: per calendar day
    assert round(leg["vega"] * 100, 1) == 12.1  # Hull: per unit of volatility; calc: per point
    assert round(leg["rho"] * 100, 2) == 8.91  # Hull: per unit of rate; calc: per 1%


def test_hull_black_76_put_on_a_future() -> None:
    leg = one_leg("PE", 20, 20, 25, 4 / 12, model="black76", rate=9)
    assert round(leg["model_price"], 2) == 1.12


def test_an_intraday_trade_at_the_documented_rates() -> None:
    answer = calculate(
        {
            "mode": "charges",
            "segment": "equity_intraday",
            "exchange": "NSE",
            "quantity": 400,
            "buy_price": 1000,
            "sell_price": 1100,
            "trade_date": "2026-12-01",
        }
    )
    r = answer.result
    by_hand = {
        "turnover": "840000",
        "brokerage": "40.00",  # ₹20 a side: 0.03% of 4,00,000 and 4,40,000 is above ₹20
        "stt_ctt": "110",  # 0.025% of the sell side, 4,40,000
        "exchange_charges": "25.79",  # 0.00307% of 8,40,000 = 25.788
        "sebi_fee": "0.84",  # ₹10 a crore of 8,40,000
        "stamp_duty": "12.00",  # 0.003% of the buy side, 4,00,000
        "gst": "11.99",  # 18% of 40 + 25.79 + 0.84 = 11.9934
        "total": "200.62",
        "breakeven_move": "0.51",  # 200.62 / 400 = 0.50155, rounded up
        "net_pnl": "39799.38",
    }
    assert {k: r[k] for k in by_hand} == {k: Decimal(v) for k, v in by_hand.items()}
    assert r["as_of"] == "2026-12-01"
    assert all(rate["source"] and rate["effective_from"] for rate in r["rates"])


@pytest.mark.parametrize(
    ("day", "segment", "stt"),
    [
        ("2026-03-31", "options", "78"),  # 0.1% of the 78,000 premium sold
        ("2026-04-01", "options", "117"),  # 0.15% from 1 Apr 2026 (Budget 2026)
        ("2026-03-31", "futures", "156"),  # 0.02% of 7,80,000 sold
        ("2026-04-01", "futures", "390"),  # 0.05% from 1 Apr 2026
    ],
)
def test_the_april_2026_stt_change_takes_effect_on_its_day(
    day: str, segment: str, stt: str
) -> None:
    price = 120 if segment == "options" else 1200
    answer = calculate(
        {
            "mode": "charges",
            "segment": segment,
            "exchange": "NSE",
            "quantity": 650,
            "buy_price": price - 20,
            "sell_price": price,
            "trade_date": day,
        }
    )
    assert answer.result["stt_ctt"] == Decimal(stt)
    (used,) = [r for r in answer.result["rates"] if r["component"] == "stt"]
    assert used["effective_from"] == ("2026-04-01" if day == "2026-04-01" else "2024-10-01")
