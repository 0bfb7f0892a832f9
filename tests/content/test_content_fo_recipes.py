"""The recipes added for F&O traders (issue 20 §2): option chain, IV and Greeks, spreads, entry
with a stop and a target, cancel everything, and the fat-finger guard in prepare.md. Worked
examples are recomputed here with the standard library only."""

import datetime as dt
import math
import re

import pytest
from content_helpers import (
    catalog_root,
    links,
    mode_pairs,
    numbered_steps,
    sections,
    split_frontmatter,
    subsection,
)

NEW = (
    "derivatives/option-chain.md",
    "derivatives/greeks.md",
    "derivatives/spreads.md",
    "orders/entry-stop-target.md",
    "orders/cancel-all.md",
)


def read(name: str) -> str:
    return (catalog_root() / name).read_text(encoding="utf-8")


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def steps_of(name: str) -> list[str]:
    body = split_frontmatter(read(name)).body
    return [flat(item) for _, item, _ in numbered_steps(sections(body)["Steps"])]


def example(name: str) -> tuple[list[dict[str, str]], str]:
    """The table rows and the text of a recipe's '### Worked example'."""
    text = subsection(split_frontmatter(read(name)).body, "Worked example")
    rows = [line for line in text.split("\n") if line.startswith("|")]
    header = [c.strip() for c in rows[0].strip("|").split("|")]
    table = [
        dict(zip(header, (c.strip() for c in r.strip("|").split("|")), strict=True))
        for r in rows[2:]
    ]
    return table, text


def printed(text: str, label: str) -> str:
    found = re.search(rf"^- {re.escape(label)} = (-?[\d.]+)", text, re.M)
    assert found, f"no '- {label} = ...' line"
    return found.group(1)


@pytest.mark.parametrize("name", NEW)
def test_new_recipe_is_linked_from_index_and_its_topic(name):
    assert name in links(read("index.md"))
    topic, recipe = name.split("/")
    assert recipe in links(read(f"{topic}/SKILL.md"))


# ------------------------------------------------------------- Black-Scholes (stdlib only)


def norm_cdf(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def norm_pdf(x: float) -> float:
    return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def d1_d2(s: float, k: float, t: float, r: float, q: float, vol: float) -> tuple[float, float]:
    d1 = (math.log(s / k) + (r - q + vol * vol / 2) * t) / (vol * math.sqrt(t))
    return d1, d1 - vol * math.sqrt(t)


def bs_price(s, k, t, r, q, vol, call):
    d1, d2 = d1_d2(s, k, t, r, q, vol)
    if call:
        return s * math.exp(-q * t) * norm_cdf(d1) - k * math.exp(-r * t) * norm_cdf(d2)
    return k * math.exp(-r * t) * norm_cdf(-d2) - s * math.exp(-q * t) * norm_cdf(-d1)


def implied_vol(price, s, k, t, r, q, call):
    lo, hi = 0.0001, 5.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if bs_price(s, k, t, r, q, mid, call) > price:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


def test_black_scholes_reference():
    # Put-call parity and a textbook value (S=K=100, T=1, r=5%, vol=20%: call 10.45).
    call = bs_price(100, 100, 1, 0.05, 0, 0.2, True)
    put = bs_price(100, 100, 1, 0.05, 0, 0.2, False)
    assert f"{call:.2f}" == "10.45"
    assert call - put == pytest.approx(100 - 100 * math.exp(-0.05))
    assert implied_vol(call, 100, 100, 1, 0.05, 0, True) == pytest.approx(0.2, abs=1e-9)


def test_greeks_worked_example_recomputes():
    rows, text = example("derivatives/greeks.md")
    inputs = {row["input"]: row["value"] for row in rows}
    s = float(inputs["underlying S"])
    k = float(inputs["strike K"])
    call = "(call)" in inputs["option"]
    bid, ask = float(inputs["best bid"]), float(inputs["best ask"])
    r = float(inputs["rate r"].rstrip("%")) / 100
    q = float(inputs["dividend yield q"].rstrip("%")) / 100
    lot = int(inputs["lot size"])
    start = dt.datetime.fromisoformat(inputs["quote time"])
    end = dt.datetime.fromisoformat(inputs["expiry time"])
    minutes = (end - start).total_seconds() / 60
    t = minutes / 525600
    assert end.time() == dt.time(15, 30), "expiry time is 15:30 IST"

    mid = (bid + ask) / 2
    assert printed(text, "mid") == f"{mid:.2f}"
    assert f"- T = {minutes:.0f} minutes / 525600 = {t:.6f} years" in text
    vol = implied_vol(mid, s, k, t, r, q, call)
    assert bs_price(s, k, t, r, q, vol, call) == pytest.approx(mid, abs=1e-6)
    assert printed(text, "IV") == f"{vol * 100:.2f}"
    d1, d2 = d1_d2(s, k, t, r, q, vol)
    assert f"- d1 = {d1:.4f}; d2 = {d2:.4f}" in text

    disc_q = math.exp(-q * t)
    delta = disc_q * (norm_cdf(d1) if call else norm_cdf(d1) - 1)
    gamma = disc_q * norm_pdf(d1) / (s * vol * math.sqrt(t))
    vega = s * disc_q * norm_pdf(d1) * math.sqrt(t) / 100
    decay = -s * disc_q * norm_pdf(d1) * vol / (2 * math.sqrt(t))
    if call:
        theta = (
            decay - r * k * math.exp(-r * t) * norm_cdf(d2) + q * s * disc_q * norm_cdf(d1)
        ) / 365
    else:
        theta = (
            decay + r * k * math.exp(-r * t) * norm_cdf(-d2) - q * s * disc_q * norm_cdf(-d1)
        ) / 365
    assert f"- delta = {delta:.4f} ({delta * lot:.2f} per lot)" in text
    assert printed(text, "gamma") == f"{gamma:.6f}"
    assert f"- theta = {theta:.2f} per day ({theta * lot:.2f} per lot)" in text
    assert f"- vega = {vega:.2f} per volatility point ({vega * lot:.2f} per lot)" in text
    low = implied_vol(bid, s, k, t, r, q, call)
    high = implied_vol(ask, s, k, t, r, q, call)
    assert f"- IV at the bid = {low * 100:.2f}%; IV at the ask = {high * 100:.2f}%" in text


def test_greeks_template_repeats_the_example():
    _, text = example("derivatives/greeks.md")
    template = read("derivatives/greeks.md").split("Report template:")[1].split("```")[1]
    for label in ("IV", "delta", "gamma"):
        assert printed(text, label) in template, label
    assert "r = 6.50%; q = 0.00% (assumptions)" in template


def test_greeks_recipe_states_inputs_and_limits():
    steps = " ".join(steps_of("derivatives/greeks.md"))
    for phrase in ("mid", "525,600", "15:30 IST", "risk-free rate", "dividend yield", "bisection"):
        assert phrase in steps, phrase
    limits = flat(read("derivatives/greeks.md")).split("When not to trust them:")[1]
    assert "Illiquid strikes" in limits and "Near expiry" in limits


# ------------------------------------------------------------- option chain


def test_option_chain_example_recomputes():
    rows, text = example("derivatives/option-chain.md")
    calls = sum(int(r["CE oi"]) for r in rows)
    puts = sum(int(r["PE oi"]) for r in rows)
    assert printed(text, "PCR (OI, strikes shown)") == f"{puts / calls:.2f}"
    d_calls = sum(int(r["CE oi"]) - int(r["CE oi prev"]) for r in rows)
    d_puts = sum(int(r["PE oi"]) - int(r["PE oi prev"]) for r in rows)
    assert f"- Change in OI: calls {d_calls:+d}, puts {d_puts:+d}" in text
    warnings = []
    for r in rows:
        for side in ("CE", "PE"):
            bid, ask = float(r[f"{side} bid"]), float(r[f"{side} ask"])
            pct = (ask - bid) / ((ask + bid) / 2) * 100
            if pct > 1:
                warnings.append(
                    f"- Liquidity warning: {r['strike']} {side} spread {ask - bid:.2f} = "
                    f"{pct:.2f}% of mid"
                )
    assert warnings
    assert sorted(re.findall(r"^- Liquidity warning:.*$", text, re.M)) == sorted(warnings)


def test_option_chain_uses_full_underlying_search_and_batched_quotes():
    steps = steps_of("derivatives/option-chain.md")
    search = next(s for s in steps if "`filter_on` `underlying`" in s)
    assert "`verbosity` `full`" in search and "`total`" in search
    quote = next(s for s in steps if "Quote the chosen contracts" in s)
    assert "500" in quote and "1,000" in quote and "`oi`" in quote and "`volume`" in quote
    stale = sections(split_frontmatter(read("derivatives/option-chain.md")).body)[
        "Stale or missing data"
    ]
    assert "Outside market hours" in stale


# ------------------------------------------------------------- spreads


def test_spread_example_recomputes():
    rows, text = example("derivatives/spreads.md")
    buy = [r for r in rows if r["side"] == "BUY"]
    sell = [r for r in rows if r["side"] == "SELL"]
    assert len(buy) == len(sell) == 1 and rows[0]["side"] == "BUY"  # hedge listed first
    qty = int(buy[0]["quantity"])
    assert qty == int(sell[0]["quantity"])
    debit = float(buy[0]["price"]) - float(sell[0]["price"])
    width = float(sell[0]["strike"]) - float(buy[0]["strike"])
    assert f"- net debit = {debit:.2f} per unit, {debit * qty:.2f} in total" in text
    assert printed(text, "maximum loss") == f"{debit * qty:.2f}"
    assert printed(text, "maximum profit") == f"{(width - debit) * qty:.2f}"
    assert printed(text, "breakeven") == f"{float(buy[0]['strike']) + debit:.2f}"


def test_spread_places_the_hedge_first_and_the_short_after_its_fill():
    steps = steps_of("derivatives/spreads.md")
    order = next(s for s in steps if "Order of the legs" in s)
    assert "the long (hedge) leg first" in order and "only after the hedge is `COMPLETE`" in order
    funds = next(s for s in steps if s.startswith("5. Funds"))
    assert "only after the hedge has filled" in funds and "does not expose" in funds
    resolve = next(s for s in steps if "Resolve every leg" in s)
    assert "`freeze_quantity`" in resolve and "`lot_size`" in resolve
    places = [i for i, s in enumerate(steps) if ("orders", "place") in mode_pairs(s)]
    assert len(places) == 2
    between = " ".join(steps[places[0] + 1 : places[1]])
    assert "`COMPLETE`" in between and "filled whole lots" in between
    assert "holds the long leg alone" in steps[places[1] + 1]


# ------------------------------------------------------------- entry with a stop and a target


def test_entry_sizes_the_protection_from_the_fill():
    steps = steps_of("orders/entry-stop-target.md")
    writes = [i for i, s in enumerate(steps) if mode_pairs(s) and "place" in s and "`tag`" in s]
    assert writes, "no entry place step"
    after = " ".join(steps[writes[0] + 1 :])
    assert "`filled_quantity`" in after and "never from the order's `quantity`" in after
    assert ("gtt", "place") in mode_pairs(after)
    text = flat(read("orders/entry-stop-target.md"))
    assert "`meta.demat_consent`" in text and "TPIN" in text
    assert "T+1 shares, not demat shares" in text


# ------------------------------------------------------------- cancel everything


def test_cancel_all_lists_approves_cancels_reconciles_and_reports():
    steps = steps_of("orders/cancel-all.md")
    text = " ".join(steps)
    assert ("orders", "list") in mode_pairs(steps[0]) and ("gtt", "list") in mode_pairs(steps[1])
    summary = next(s for s in steps if "Present one summary" in s)
    assert "numbered list" in summary and 'no "cancel all" or "exit all" call' in summary
    cancel = next(s for s in steps if ("orders", "cancel") in mode_pairs(s))
    assert ("gtt", "delete") in mode_pairs(cancel) and "own `variety`" in cancel
    assert "Reconcile" in text and "Report what is left" in text
    body = split_frontmatter(read("orders/cancel-all.md")).body
    assert body.index("**Stop for approval.**") < body.index("Cancel each approved item")


# ------------------------------------------------------------- fat-finger guard (prepare.md)


def test_prepare_has_a_fat_finger_guard_with_defaults():
    step = next(s for s in steps_of("orders/prepare.md") if "Fat-finger guard" in s)
    for phrase in ("`net` (default 25%)", "5 times", "usual size", "5% from `last_price`"):
        assert phrase in step, phrase
    assert "today's trades" in step and "holding's `quantity`" in step


def test_prepare_summary_size_check_recomputes():
    template = read("orders/prepare.md").split("Summary template:")[1].split("```")[1]
    qty, price = re.search(r"BUY (\d+) \S+ .* LIMIT @ ([\d.]+)", template).groups()
    net = float(re.search(r"net margin ([\d,]+\.\d\d)", template).group(1).replace(",", ""))
    last = float(re.search(r"Last price ([\d.]+)", template).group(1))
    value = int(qty) * float(price)
    check = re.search(
        r"Size check: value ([\d,]+\.\d\d) is ([\d.]+)% of net \(guard (\d+)%\); usual size "
        r"(\d+); limit ([\d.]+)% from last price \(guard (\d+)%\)",
        template,
    )
    assert check, "no size check line"
    assert float(check.group(1).replace(",", "")) == value
    assert check.group(2) == f"{value / net * 100:.2f}"
    assert check.group(5) == f"{abs(float(price) - last) / last * 100:.2f}"
    above = value / net * 100 > int(check.group(3))
    assert ("WARNING: the value is above" in template) == above
