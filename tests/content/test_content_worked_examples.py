"""Recompute the worked examples printed in the recipes. The Markdown is the one source of
each example's numbers: its inputs are read from the page, sent through the `calc` tool's
library where the recipe says to call `calc`, and compared with what the page prints. The
technical-analysis examples (no `calc` mode: the host computes indicators) are recomputed
with the reference implementations of content_helpers."""

import re
from decimal import Decimal

import pytest
from content_helpers import (
    catalog_root,
    ema,
    parse_worked_example,
    rsi,
    sma,
    split_frontmatter,
)
from test_content_fo_recipes import example, printed, read

from kite_skills.calc import calculate
from kite_skills.calc.orders import FAT_FINGER

FUNCS = {"SMA": sma, "EMA": ema, "RSI": rsi}
EXPECTED_KINDS = {
    "moving-averages.md": {"SMA", "EMA"},
    "rsi.md": {"RSI"},
}


def indicator_example(name):
    path = catalog_root() / "technical-analysis" / name
    return parse_worked_example(split_frontmatter(path.read_text(encoding="utf-8")).body)


@pytest.mark.parametrize("name", sorted(EXPECTED_KINDS))
def test_worked_example_values_match(name):
    closes, results = indicator_example(name)
    assert results, "no printed results"
    assert {kind for kind, *_ in results} == EXPECTED_KINDS[name]
    for kind, n, bar, printed_value in results:
        assert bar <= len(closes)
        computed = FUNCS[kind](closes, n, bar)
        assert f"{computed:.2f}" == printed_value, (
            f"{kind}({n}) at bar {bar}: {computed:.4f} vs {printed_value}"
        )


def test_rsi_example_is_rsi_14_with_about_20_bars():
    closes, results = indicator_example("rsi.md")
    assert 15 <= len(closes) <= 30
    assert {n for _, n, _, _ in results} == {14}
    assert max(bar for _, _, bar, _ in results) == len(closes)


def test_moving_average_example_uses_small_n():
    closes, results = indicator_example("moving-averages.md")
    assert all(n <= 10 for _, n, _, _ in results)
    assert max(bar for _, _, bar, _ in results) == len(closes)


def test_reference_implementations():
    closes = [float(x) for x in range(1, 21)]
    assert sma(closes, 5, 5) == 3.0
    assert ema(closes, 5, 5) == sma(closes, 5, 5)  # seeded with the SMA
    assert ema([10.0] * 5 + [16.0], 5, 6) == pytest.approx(12.0)  # alpha = 1/3
    assert rsi(closes, 14, 20) == 100.0  # no losses
    alternating = [10.0, 11.0] * 10
    assert rsi(alternating, 14, 15) == pytest.approx(50.0)


# -- through calc -----------------------------------------------------------------------------


def test_the_greeks_example_is_what_calc_answers():
    rows, text = example("derivatives/greeks.md")
    given = {row["input"]: row["value"] for row in rows}
    lot = int(given["lot size"])
    quote_time, expiry = given["quote time"], given["expiry time"]
    assert expiry.endswith(" 15:30:00"), "calc counts time to 15:30 IST on the expiry date"
    answer = calculate(
        {
            "mode": "greeks",
            "model": "black_scholes",
            "rate": float(given["rate r"].rstrip("%")),
            "dividend_yield": float(given["dividend yield q"].rstrip("%")),
            "quote_time": quote_time,
            "legs": [
                {
                    "option_type": "CE" if "(call)" in given["option"] else "PE",
                    "strike": float(given["strike K"]),
                    "underlying": float(given["underlying S"]),
                    "expiry_date": expiry[:10],
                    "bid": float(given["best bid"]),
                    "ask": float(given["best ask"]),
                    "quantity": lot,
                }
            ],
        }
    )
    leg = answer.result["legs"][0]
    lots = answer.result["portfolio"]
    assert printed(text, "mid") == f"{leg['price_used']:.2f}"
    minutes = round(leg["years"] * 525600)
    assert f"- T = {minutes} minutes / 525600 = {leg['years']:.6f} years" in text
    assert printed(text, "IV") == f"{leg['iv_pct']:.2f}"
    assert f"- d1 = {leg['d1']:.4f}; d2 = {leg['d2']:.4f}" in text
    assert f"- delta = {leg['delta']:.4f} ({lots['delta']:.2f} per lot)" in text
    assert printed(text, "gamma") == f"{leg['gamma']:.6f}"
    assert f"- theta = {leg['theta']:.2f} per day ({lots['theta']:.2f} per lot)" in text
    assert f"- vega = {leg['vega']:.2f} per volatility point ({lots['vega']:.2f} per lot)" in text
    assert (
        f"- IV at the bid = {leg['iv_bid_pct']:.2f}%; IV at the ask = {leg['iv_ask_pct']:.2f}%"
        in text
    )


def test_the_spread_example_is_what_calc_answers():
    rows, text = example("derivatives/spreads.md")
    legs = [
        {
            "instrument": r["contract"][-2:],
            "side": r["side"],
            "strike": float(r["strike"]),
            "price": float(r["price"]),
            "quantity": int(r["quantity"]),
        }
        for r in rows
    ]
    result = calculate({"mode": "payoff", "legs": legs}).result
    debit = -result["net_premium"]
    per_unit = -result["net_premium_per_unit"]
    assert f"- net debit = {per_unit:.2f} per unit, {debit:.2f} in total" in text
    assert printed(text, "maximum loss") == f"{result['max_loss']:.2f}"
    assert printed(text, "maximum profit") == f"{result['max_profit']:.2f}"
    (breakeven,) = result["breakevens"]
    assert printed(text, "breakeven") == f"{breakeven:.2f}"
    low, high = sorted(float(r["strike"]) for r in rows)
    assert f"(NIFTY at or below {low:.0f} at expiry)" in text and result["max_loss_at"][-1] == low
    assert f"(NIFTY at or above {high:.0f} at expiry)" in text
    assert result["max_profit_at"] == [Decimal(str(high))]


def test_the_prepare_summary_size_check_is_what_calc_answers():
    template = read("orders/prepare.md").split("Summary template:")[1].split("```")[1]
    qty, price, tick = re.search(
        r"BUY (\d+) \S+ .* LIMIT @ ([\d.]+) \(tick ([\d.]+)\)", template
    ).groups()
    net = re.search(r"net margin ([\d,]+\.\d\d)", template).group(1).replace(",", "")
    last = re.search(r"Last price ([\d.]+)", template).group(1)
    check = re.search(
        r"Size check: value ([\d,]+\.\d\d) is ([\d.]+)% of net \(guard (\d+)%\); usual size "
        r"(\d+); limit ([\d.]+)% from last price \(guard (\d+)%\)",
        template,
    )
    assert check, "no size check line"
    result = calculate(
        {
            "mode": "check_order",
            "transaction_type": "BUY",
            "order_type": "LIMIT",
            "quantity": int(qty),
            "price": float(price),
            "last_price": float(last),
            "tick_size": float(tick),
            "net": float(net),
            "usual_quantity": int(check.group(4)),
        }
    ).result
    assert check.group(1).replace(",", "") == f"{result['value']:.2f}"
    assert check.group(2) == f"{result['net_share_pct']:.2f}"
    assert check.group(5) == f"{result['price_distance_pct']:.2f}"
    assert (int(check.group(3)), int(check.group(6))) == (
        FAT_FINGER.net_share_pct,
        FAT_FINGER.price_distance_pct,
    )
    codes = [f["code"] for f in result["findings"]]
    assert ("WARNING: the value is above" in template) == ("fat_finger_value" in codes)
    assert codes == ["fat_finger_value"]
