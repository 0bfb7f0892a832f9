"""Checks for the fourth expert review (issue 43; ../shared/reviews/catalog-review-4.md, which
gives file:line, the correct fact and a source for each finding): the seven money risks X1-X7,
the facts the review corrected, the Paper-first line, the own-skills search, and the worked
examples of the new recipes, recomputed through the `calc` library where it has a mode. Each
test reads the text a finding is about, so it fails on the text the review found."""

import math
import re
from decimal import Decimal

import pytest
from content_helpers import (
    catalog_root,
    links,
    markdown_files,
    names_write,
    numbered_steps,
    recipe_files,
    rel,
    sections,
    split_frontmatter,
)

from kite_skills.calc import calculate


def read(name: str) -> str:
    return (catalog_root() / name).read_text(encoding="utf-8")


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def steps_of(name: str) -> list[str]:
    body = split_frontmatter(read(name)).body
    return [flat(item) for _, item, _ in numbered_steps(sections(body)["Steps"])]


def step_with(name: str, phrase: str) -> str:
    found = [s for s in steps_of(name) if phrase in s]
    assert found, f"no step of {name} says {phrase!r}"
    return found[0]


def example_of(name: str) -> str:
    body = split_frontmatter(read(name)).body
    return flat(body.split("### Worked example", 1)[1].split("\n## ", 1)[0])


def writes(path) -> bool:
    return any(names_write(item) for _, item, _ in numbered_steps(path.read_text("utf-8")))


# ------------------------------------------------------------- X1. released AMOs

RELEASED = "`AMO REQ RECEIVED`"


@pytest.mark.parametrize("name", ["orders/modify-cancel.md", "orders/cancel-all.md"])
def test_a_released_amo_is_changed_with_variety_regular(name):
    """Zerodha staff, kite.trade forum comments 40302 and 34453: once the OMS sends an AMO to
    the exchange, modify and cancel take `variety` `regular` although the book shows `amo`."""
    step = step_with(name, "although the book still shows `amo`")
    assert (
        RELEASED in step and "`regular`" in step and "although the book still shows `amo`" in step
    )
    assert "reconcile, then" in step and "with the other `variety`" in step
    assert "with its own approval" in step


# ------------------------------------------------------------- X2. hedged books


def test_exit_closes_shorts_before_their_hedges_one_leg_at_a_time():
    step = step_with("orders/exit.md", "`calc` mode `exit_plan`")
    assert "closes shorts before the longs that hedge them" in step
    assert "only after [Reconcile](reconcile.md) shows the previous one `COMPLETE`" in step
    assert "never sell the long that hedges it first" in step
    assert "square-off-all.md" in step


def test_square_off_all_is_hedge_aware():
    steps = steps_of("orders/square-off-all.md")
    text = " ".join(steps)
    assert "puts every short (a BUY to close) before the longs of its group" in text
    assert "If a short's BUY does not fill, stop: do not sell its longs" in text
    assert "Approval of the plan is not approval of each order" in flat(
        read("orders/square-off-all.md")
    )


def test_cancel_all_sends_exits_to_the_hedge_aware_recipe():
    step = step_with("orders/cancel-all.md", "Report what is left")
    assert "[Square off everything](square-off-all.md) (hedges: shorts first" in step


def test_a_stop_on_one_hedge_leg_is_refused_unless_the_summary_says_what_it_leaves_naked():
    (first, *_) = steps_of("orders/stop-loss.md")
    assert "refuse a stop on that leg alone unless the summary says what it leaves naked" in first


# ------------------------------------------------------------- X3. no unwatched stop and target


def test_mis_protection_is_a_stop_and_an_alert_not_two_live_exits():
    step = step_with("orders/entry-stop-target.md", "Choose the kind of protection by product")
    assert "Never leave two full-quantity exits live with nobody watching" in step
    mis = step.split("- `MIS`:", 1)[1]
    assert "a DAY `SL` order only, and a simple alert at the target" in mis
    assert '"I will cancel the other myself"' in mis


def test_the_two_leg_gtt_orientation_for_a_short_and_no_gtt_on_mcx():
    """Zerodha support, gtt-fno: no GTT for the currency and commodity segments; a two-leg
    GTT's triggers are [lower, upper]."""
    step = step_with("orders/entry-stop-target.md", "Choose the kind of protection by product")
    assert "for a short the stop is the **upper** BUY leg" in step
    assert "MCX and currency have no GTT" in step


# ------------------------------------------------------------- X4. CNC protection past today


def test_cnc_protection_says_when_it_ends_and_is_re_armed_next_session():
    text = flat(read("orders/entry-stop-target.md"))
    assert '"unprotected from 15:30 today until the stop is placed again next session' in text
    assert "offers a reminder alert" in text
    step = step_with("orders/entry-stop-target.md", "Next session (`CNC` only)")
    assert "`realised_quantity`" in step and "its own approved write" in step


# ------------------------------------------------------------- X5. demat_consent


CONSENT_AS_STANDING = re.compile(
    r"`physical` or `consent`|`consent`[^.]{0,40}(no TPIN is needed|POA or DDPI is on file)"
)


@pytest.mark.parametrize("path", markdown_files(), ids=rel)
def test_only_physical_is_standing_authorisation(path):
    """Kite documents `empty`, `consent` and `physical`; `consent` is Zerodha's online per-sell
    consent (zerodha.com/tos/demat-consent; support "how do I fill up the POA form")."""
    text = flat(path.read_text("utf-8"))
    assert not CONSENT_AS_STANDING.search(text)
    assert "shows POA or DDPI" not in text and "with POA or DDPI on file" not in text
    if "TPIN" in text and "`meta.demat_consent`" in text and writes(path):
        assert "`physical`" in text, "says when a TPIN is needed without naming `physical`"


def test_the_calculator_reads_demat_consent_the_same_way():
    holding = {"tradingsymbol": "INFY", "quantity": 10, "t1_quantity": 0, "realised_quantity": 10}
    needs = {
        consent: calculate(
            {"mode": "sellable", "holding": holding, "demat_consent": consent}
        ).result["tpin_needed"]
        for consent in ("physical", "consent", "empty", "something-new")
    }
    assert needs == {"physical": False, "consent": True, "empty": True, "something-new": True}


# ------------------------------------------------------------- X6. cancel everything


def test_cancel_all_marks_and_keeps_protection_by_default():
    step = step_with("orders/cancel-all.md", "Mark every stop order")
    assert step.startswith("3. Always read `portfolio` mode `positions`")
    assert "`portfolio` mode `holdings`" in step
    assert "Protective items are **kept** unless the person strikes them by number" in step
    assert "cancelling leaves it naked" in step


# ------------------------------------------------------------- X7. one product per structure


def test_a_structure_uses_one_product_and_mis_never_protects_nrml():
    step = step_with("derivatives/spreads.md", "uses the short's `product`")
    assert "never protect an `NRML` short with an `MIS` leg" in step


def test_exposure_audit_finds_mis_hedges_on_nrml_shorts():
    step = step_with("daily-review/exposure-audit.md", "Findings, each with its fix")
    for finding in (
        "**naked short**",
        "**no stop or GTT**",
        "**larger than the position**",
        "**one leg of a hedge**",
        "**MIS leg hedging an NRML short**",
        "**ITM stock option**",
        "**sell GTT without TPIN cover**",
        "**margin use**",
        "**top 5 concentrations**",
    ):
        assert finding in step, finding


# ------------------------------------------------------------- facts the review corrected


@pytest.mark.parametrize("path", markdown_files(), ids=rel)
def test_candle_adjustment_is_documented(path):
    """Y3: Zerodha staff, kite.trade forum comments 52542 and 52411: historical data is
    adjusted for corporate actions before 08:00 on the ex-date."""
    text = flat(path.read_text("utf-8"))
    assert "is not documented in the sources" not in text
    assert "Whether Kite's candles are adjusted is not documented" not in text


def test_corporate_actions_divides_only_when_a_jump_is_there():
    step = step_with("holdings/corporate-actions.md", "Check candles around the ex-date")
    assert "Kite back-adjusts candles before 08:00 on the ex-date" in step
    assert "Never divide an adjusted series again" in step


@pytest.mark.parametrize("name", ["orders/prepare.md", "orders/exit.md"])
def test_no_market_orders_in_stock_options(name):
    """Y6: kite.trade/docs/kite/orders: market orders are disabled on stock options."""
    assert "blocks `MARKET`" in flat(" ".join(steps_of(name)))


def test_sessions_carry_the_gaps_the_review_found():
    """Y5: NSE/FAOP/71092 (pre-open closes at random between 09:07 and 09:08, no SL or IOC);
    Zerodha support, auto-amo (no AMOs 01:00 to 05:30; none for ETFs)."""
    text = flat(read("orders/reference/market-sessions.md"))
    for fact in (
        "a random moment between 09:07 and 09:08",
        "SL and IOC orders are not accepted in pre-open",
        "08:58 to 09:00",
        "except 01:00 to 05:30",
        "not allowed for ETFs",
    ):
        assert fact in text, fact


def test_index_option_rollover_asks_which_expiry_and_warns_about_expiry_day_margin():
    """Y12: SEBI/HO/MRD/TPD-1/P/CIR/2024/132: no calendar-spread benefit on expiry day."""
    text = flat(" ".join(steps_of("orders/expiry-rollover.md")))
    assert "Ask which expiry" in text and "**weekly**" in text
    assert "On expiry day a calendar spread gets no margin benefit" in text


CURRENT_LOTS = {"NIFTY": 65, "BANKNIFTY": 30}  # NSE/FAOP/70616, from the January 2026 series


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_examples_use_current_nifty_lots(path):
    """Y11: a NIFTY row of 75 (the 2025 lot) invites copying; examples use 65."""
    text = path.read_text("utf-8")
    assert not re.search(r"\b75 NIFTY2\d", text)
    assert not re.search(r"NIFTY25\w+ \S+ \S+ +qty 75\b", text)


def test_the_spread_sign_is_a_named_net_credit():
    """Y13: Σ SELL − Σ BUY is a net credit; negative is a debit."""
    assert "net credit per unit = Σ SELL prices − Σ BUY prices (negative = a debit)" in flat(
        read("derivatives/spreads.md")
    )


def test_cash_funded_buys_are_judged_against_cash():
    """Y8: collateral cannot fund delivery or option premium (funds-check's own table)."""
    for name in ("orders/prepare.md", "orders/funds-check.md"):
        assert "`net` less `available.collateral`" in flat(" ".join(steps_of(name)))


def test_the_equity_share_cap_is_stated():
    """Y16: Kite takes at most 1,00,000 shares in one equity order, and an iceberg is not
    available for MARKET or SL-M orders on BSE (catalog review 4 Y16: rules.md §1, support
    kite-order-rejections)."""
    step = step_with("orders/prepare.md", "Check the size")
    assert "at most 1,00,000 shares an order" in step
    assert "BSE MARKET/SL-M" in step.split("iceberg", 1)[1]


def test_greeks_rate_is_current_and_black76_is_preferred():
    """Y4: the 91-day T-bill has been about 5.3-5.5% since H2 2025 (RBI auction results)."""
    step = step_with("derivatives/greeks.md", "State the inputs")
    assert "default 6.5%" not in step and "5.3% to 5.5%" in step
    assert "Black-76" in step and "synthetic forward" in step


# ------------------------------------------------------------- the walk-through

VAGUE = re.compile(r"\b(if|or) anything changed\b", re.I)


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_a_re_check_names_what_sends_the_agent_back(path):
    assert not VAGUE.search(flat(path.read_text("utf-8")))


def test_reconcile_matches_by_the_first_history_row_and_trusts_the_trades():
    text = flat(" ".join(steps_of("orders/reconcile.md")))
    assert "the time of the **first** row of `orders` mode `history`" in text
    assert "trust the trades" in text


def test_prepare_proposes_a_limit_at_the_touch():
    step = step_with("orders/prepare.md", "Take a live quote")
    assert "If the person named no price, propose a LIMIT at the touch" in step


def test_option_chain_defaults_to_the_nearest_expiry_and_says_so():
    step = step_with("derivatives/option-chain.md", "List the contracts")
    assert "by default the nearest one not yet expired" in step and "say so" in step


# ------------------------------------------------------------- Paper first, own skills

PAPER_FIRST = (
    "**Paper first.** Rehearse this recipe on `kite-skills sandbox` before the real account "
    "([Paper first](../index.md#paper-first))."
)


def test_paper_first_has_one_owner():
    index = read("index.md")
    assert "## Paper first" in index and "`kite-skills sandbox`" in index
    lines = [
        line
        for path in markdown_files()
        for line in path.read_text("utf-8").split("\n")
        if line.startswith("**Paper first.**")
    ]
    assert set(lines) == {PAPER_FIRST}, "one line, the same everywhere"


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_every_write_recipe_says_paper_first(path):
    check = sections(split_frontmatter(path.read_text("utf-8")).body)["Check first"]
    assert (PAPER_FIRST in check) == writes(path)


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_check_first_searches_the_persons_own_skills(path):
    check = sections(split_frontmatter(path.read_text("utf-8")).body)["Check first"]
    assert check.lstrip().startswith("Search the person's own skills first: `skills` with `q`")
    assert "../index.md#your-own-skills-come-first" in links(check)


# ------------------------------------------------------------- the new recipes

NEW = (
    "orders/position-size.md",
    "daily-review/exposure-audit.md",
    "orders/square-off-all.md",
    "derivatives/payoff.md",
    "derivatives/expiry-day.md",
    "orders/charges.md",
    "holdings/rebalance.md",
    "daily-review/pre-market.md",
    "daily-review/journal.md",
)


@pytest.mark.parametrize("name", NEW)
def test_new_recipe_is_linked_and_has_a_worked_example(name):
    assert name in links(read("index.md"))
    topic, page = name.split("/")
    assert page in links(read(f"{topic}/SKILL.md"))
    assert "### Worked example" in read(name)


def signed(value: Decimal) -> str:
    """A number as the recipes print it: two decimals, a true minus sign."""
    return f"{value:.2f}".replace("-", "−")


def money(text: str) -> Decimal:
    return Decimal(text.replace(",", ""))


def test_position_size_example_is_what_calc_answers():
    text = example_of("orders/position-size.md")
    shares = calculate(
        {"mode": "size", "entry": 1500, "stop": 1455, "risk_amount": 5000, "lot_size": 1}
    ).result
    assert f"**{shares['quantity']} shares**, risk **{money(str(shares['risk'])):,.2f}**" in text
    lots = calculate(
        {"mode": "size", "entry": 26000, "stop": 25900, "risk_amount": 5000, "lot_size": 65}
    ).result
    assert lots["lots"] == 0 and "**0 lots: refused**" in text
    assert f"**{money(str(lots['risk_per_lot'])):,.2f}**, above the budget" in text


def test_charges_example_is_what_calc_answers():
    text = example_of("orders/charges.md")
    trade = {
        "mode": "charges",
        "segment": "options",
        "exchange": "NSE",
        "quantity": 65,
        "buy_price": 100,
        "sell_price": 120,
    }
    now = calculate({**trade, "trade_date": "2026-12-01"}).result
    for label, key in (
        ("turnover", "turnover"),
        ("brokerage", "brokerage"),
        ("STT", "stt_ctt"),
        ("exchange", "exchange_charges"),
        ("SEBI", "sebi_fee"),
        ("stamp", "stamp_duty"),
        ("GST", "gst"),
    ):
        assert f"{label} {money(str(now[key])):,.2f}" in text, label
    assert f"total **{money(str(now['total'])):,.2f}**" in text
    assert f"breakeven move **{money(str(now['breakeven_move'])):,.2f}**" in text
    assert f"net P&L **{money(str(now['net_pnl'])):,.2f}**" in text
    before = calculate({**trade, "trade_date": "2026-03-31"}).result
    assert f"pays STT **{money(str(before['stt_ctt'])):,.2f}**" in text


def test_square_off_example_is_what_calc_answers():
    legs = {"25500PE": 65, "25700PE": -65, "26300CE": -65, "26500CE": 65}
    plan = calculate(
        {
            "mode": "exit_plan",
            "positions": [
                {
                    "tradingsymbol": f"NIFTY26D15{k}",
                    "exchange": "NFO",
                    "product": "NRML",
                    "quantity": q,
                }
                for k, q in legs.items()
            ],
        }
    ).result
    printed = re.findall(
        r"\d\. (BUY|SELL) (\d+) (\S+) NFO NRML", example_of("orders/square-off-all.md")
    )
    assert printed == [
        (s["transaction_type"], str(s["quantity"]), s["tradingsymbol"]) for s in plan["steps"]
    ]
    assert [s[0] for s in printed] == ["BUY", "BUY", "SELL", "SELL"]  # shorts first


def test_payoff_example_is_what_calc_answers():
    text = example_of("derivatives/payoff.md")
    sigma = 26000 * 0.12 * math.sqrt(7 / 365)
    assert f"σ = 26000 × 0.12 × √(7/365) = {sigma:.2f}, taken as {round(sigma)}" in text
    step = round(sigma)
    legs = [
        {"instrument": "PE", "side": "BUY", "strike": 25500, "price": 20, "quantity": 65},
        {"instrument": "PE", "side": "SELL", "strike": 25700, "price": 45, "quantity": 65},
        {"instrument": "CE", "side": "SELL", "strike": 26300, "price": 40, "quantity": 65},
        {"instrument": "CE", "side": "BUY", "strike": 26500, "price": 15, "quantity": 65},
    ]
    result = calculate(
        {
            "mode": "payoff",
            "legs": legs,
            "grid_from": 26000 - 2 * step,
            "grid_to": 26000 + 2 * step,
            "grid_points": 5,
        }
    ).result
    assert (
        f"net credit = {result['net_premium_per_unit']:.2f} per unit, "
        f"{result['net_premium']:.2f} in total" in text
    )
    low, high = result["breakevens"]
    assert f"breakevens = {low:.2f} and {high:.2f}" in text
    assert (
        f"maximum profit = {result['max_profit']:.2f}; maximum loss = {result['max_loss']:.2f}"
        in text
    )
    grid = result["grid"]
    points = zip(("−2σ", "−1σ", "0", "+1σ", "+2σ"), grid["underlying"], grid["pnl"], strict=True)
    for label, underlying, pnl in points:
        assert f"{label} ({Decimal(underlying):.0f}) {signed(Decimal(pnl))}" in text


def test_expiry_day_example_recomputes():
    text = example_of("derivatives/expiry-day.md")
    sale = Decimal("99.00") * 65 * Decimal("0.0015")
    exercise = (Decimal("26000") - Decimal("25900")) * 65 * Decimal("0.0015")
    assert f"STT = 99.00 × 65 × 0.15% = **{sale:.2f}**" in text
    assert f"STT = 6,500.00 × 0.15% = **{exercise:.2f}**" in text


def test_rebalance_example_recomputes():
    text = example_of("holdings/rebalance.md")
    held = {"INFY": (100, Decimal(1500)), "TCS": (20, Decimal(4000))}
    cash = Decimal(70000)
    total = sum(q * p for q, p in held.values()) + cash
    targets = {"INFY": Decimal("0.40"), "TCS": Decimal("0.40")}
    trades = {}
    for name, (qty, price) in held.items():
        change = (targets[name] * total - qty * price) / price
        trades[name] = int(change)  # towards zero: never overshoot a sell
    assert trades == {"INFY": -20, "TCS": 10}
    assert "**SELL 20**" in text and "**BUY 10**" in text
    after = cash - sum(q * held[n][1] for n, q in trades.items())
    assert f"= **{after:,.2f}** ({after / total:.0%})" in text


def test_exposure_audit_example_recomputes():
    text = example_of("daily-review/exposure-audit.md")
    use = Decimal(120000) / (Decimal(120000) + Decimal(30000)) * 100
    assert f"**{use:.1f}%**" in text


def test_pre_market_example_recomputes():
    text = example_of("daily-review/pre-market.md")
    distance = abs(Decimal("1485") - Decimal("1500")) / Decimal("1500") * 100
    assert f"**{distance:.2f}%**" in text
    used = Decimal(80000) + Decimal(20000)
    assert f"cash shortfall **{used / 2 - Decimal(40000):,.2f}**" in text


def test_journal_example_recomputes():
    text = example_of("daily-review/journal.md")
    buy = (Decimal("1499.60") - Decimal("1500.00")) * 10
    sell = (Decimal("26000.00") - Decimal("25998.50")) * 65
    assert f"**{signed(buy)}** (better)" in text and f"**{signed(sell)}** (worse)" in text


def test_the_catalog_counts_in_the_docs_are_the_catalog_s():
    root = catalog_root().parent
    count = len(recipe_files())
    assert count == 36
    assert f"of {count} recipes:" in (root / "README.md").read_text("utf-8")
    assert f"The catalog holds {count} recipes in 8 topics" in (
        root / "docs" / "catalog.md"
    ).read_text("utf-8")
