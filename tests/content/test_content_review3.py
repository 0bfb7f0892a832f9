"""Checks for the third expert review (issue 20 §1): the twenty findings. Each test reads the
catalog text a finding is about, so it fails on the text the review found."""

import re

import pytest
from content_helpers import (
    catalog_root,
    markdown_files,
    mode_pairs,
    numbered_steps,
    recipe_files,
    rel,
    sections,
    split_frontmatter,
    strip_code_blocks,
)


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


def number(text: str) -> float:
    return float(text.replace(",", ""))


# ------------------------------------------------------------- 1. a stop is not guaranteed

REMAINDER = (
    "reconcile, then present a new summary: modify the remainder to a `LIMIT` that can fill, "
    "or cancel it and place a new order, each with its own approval"
)


def test_stop_kind_choice_says_a_stop_is_not_guaranteed():
    step = step_with("orders/stop-loss.md", "Choose the kind")
    assert "A stop is not guaranteed to close the position" in step
    assert "can leave a remainder `OPEN`" in step
    assert REMAINDER in " ".join(steps_of("orders/stop-loss.md"))


def test_exit_order_choice_says_a_protected_market_exit_can_leave_a_remainder():
    step = step_with("orders/exit.md", "Choose the order")
    assert "can leave a remainder `OPEN`" in step
    assert REMAINDER in " ".join(steps_of("orders/exit.md"))


# ------------------------------------------------------------- 2. sellable quantity


@pytest.mark.parametrize("path", markdown_files(), ids=rel)
def test_t1_quantity_is_added_only_where_the_row_shows_it_outside(path):
    """Issue 43 Y2 (catalog-review-4 Y2): the SDK's comment says `quantity` = realised + T+1,
    Zerodha's own fixture (zerodha/kiteconnect-mocks holdings.json: BHEL, SBIN, RELIANCE) has
    T+1 outside it. A page that adds `t1_quantity` must decide per row."""
    text = flat(path.read_text(encoding="utf-8"))
    assert "already includes the T+1" not in text and "already includes `t1_quantity`" not in text
    if re.search(r"quantity \+ t1_quantity", text):
        assert "per row" in text.lower(), "adds t1_quantity without deciding the reading per row"


@pytest.mark.parametrize(
    "name",
    [
        "triggers-and-alerts/gtt.md",
        "triggers-and-alerts/audit.md",
        "orders/prepare.md",
        "orders/exit.md",
    ],
)
def test_sellable_quantity_is_demat_quantity(name):
    text = flat(" ".join(steps_of(name)))
    assert "`realised_quantity` less `used_quantity`" in text
    assert "per row" in text and "t1_quantity" in text
    assert "BTST" in text


def test_gtt_says_a_sell_gtt_above_demat_is_rejected_when_it_triggers():
    step = step_with("triggers-and-alerts/gtt.md", "`realised_quantity` less `used_quantity`")
    assert "rejected when it triggers" in step and "never fires" in step


# ------------------------------------------------------------- 3. funds-check counts once

FUNDS_TEMPLATE = re.compile(
    r"net ([\d,]+\.\d\d) \(cash [\d,]+\.\d\d, collateral ([\d,]+\.\d\d).*?-> needs about "
    r"([\d,]+\.\d\d).*?Verdict: enough \(([\d,]+\.\d\d) to spare before charges; paid from "
    r"cash: net less collateral ([\d,]+\.\d\d)\)",
    re.S,
)


def test_funds_template_does_not_subtract_open_orders_or_m2m_again():
    """A CNC buy is paid from cash: net less collateral, not net (issue 43 Y8; catalog-review-4
    Y8, funds-check's own table: collateral cannot fund delivery or option premium)."""
    text = read("orders/funds-check.md")
    found = FUNDS_TEMPLATE.search(text)
    assert found, "template lines not found"
    net, collateral, need, spare, cash = (number(g) for g in found.groups())
    assert f"{net - collateral:.2f}" == f"{cash:.2f}"
    assert f"{cash - need:.2f}" == f"{spare:.2f}"


def test_funds_model_says_net_already_excludes_blocked_margin_and_m2m():
    text = " ".join(steps_of("orders/funds-check.md"))
    assert "`net` already excludes the margin blocked by open orders" in text
    assert "do not subtract them again" in text


# ------------------------------------------------------------- 4. search rows that feed a pick


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_underlying_search_is_full(path):
    body = split_frontmatter(path.read_text(encoding="utf-8")).body
    for _, item, _ in numbered_steps(sections(body)["Steps"]):
        item = flat(item)
        if "`filter_on` `underlying`" in item:
            assert "`verbosity` `full`" in item, item[:120]


# ------------------------------------------------------------- 5. trailing an SL-M


def test_trailing_an_sl_m_is_cancel_and_place_with_a_gap():
    step = step_with("orders/stop-loss.md", "Trailing")
    assert "An `SL-M` stop cannot be trailed by modify through this server" in step
    assert "window with no stop" in step


# ------------------------------------------------------------- 6. iceberg legs


@pytest.mark.parametrize("path", markdown_files(), ids=rel)
def test_iceberg_rule_is_current(path):
    text = flat(path.read_text(encoding="utf-8"))
    assert "2 to 10;" not in text and "at least 10% of the total" not in text


def test_prepare_states_fifty_iceberg_legs():
    assert "`iceberg_legs` 2 to 50" in step_with("orders/prepare.md", "iceberg")


# ------------------------------------------------------------- 7. order-margin API

NO_MARGIN_API = re.compile(r"(there is|has|is) no order-margin API|no: needs the order-margin API")


@pytest.mark.parametrize("path", markdown_files(), ids=rel)
def test_order_margin_api_exists_but_is_not_exposed(path):
    text = flat(path.read_text(encoding="utf-8"))
    assert not NO_MARGIN_API.search(text)
    if "order-margin" in text:
        assert "not expose" in text or "does not offer" in text, "say the server lacks it"


def test_funds_check_names_the_kite_margin_endpoints():
    text = flat(read("orders/funds-check.md"))
    assert "`POST /margins/orders`" in text and "`/margins/basket`" in text


# ------------------------------------------------------------- 8. ATO basket protection


def test_ato_basket_reason_is_right():
    text = flat(read("triggers-and-alerts/alerts.md"))
    assert "no `market_protection` in a basket item" not in text
    assert "basket items do carry `market_protection`" in text


# ------------------------------------------------------------- 9. hosted tool layout


def test_index_tolerates_either_layout_on_hosted_servers():
    text = flat(read("index.md"))
    assert "older and hosted servers have separate tools" not in text
    assert "The hosted server may offer either layout" in text


@pytest.mark.parametrize("name", ["index.md", "troubleshooting/authentication.md"])
def test_hosted_server_is_not_pinned_to_the_legacy_tools(name):
    text = flat(read(name))
    assert "Legacy or hosted server: `login` exists" not in text
    assert "hosted server may offer either layout" in text


# ------------------------------------------------------------- 10. cover orders


def test_prepare_says_what_it_does_about_cover_orders():
    text = flat(read("orders/prepare.md"))
    assert "no `co` or `auction` orders" not in text
    assert "cover orders can be placed" in text and "this catalog does not prepare them" in text


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_no_recipe_says_cover_orders_cannot_be_placed(path):
    text = flat(path.read_text(encoding="utf-8"))
    assert "no cover orders" not in text and "no `co` or" not in text


# ------------------------------------------------------------- 11. bonus credit


def test_bonus_credit_takes_one_to_two_trading_days():
    """SEBI's circular of 16 Sep 2024 (bonus issues announced from 1 Oct 2024): deemed
    allotment on T+1 and trading on T+2 from the record date, which under T+1 settlement is
    the ex-date (catalog-review-4 Y1: tradingqna.com/t/173289; financialexpress.com, "SEBI
    fast-tracks credit, trading of bonus shares to T+2 days"). "About 15 days" was the
    practice before it, and this test held it by mistake until issue 43."""
    text = flat(read("holdings/corporate-actions.md"))
    assert "15 days" not in text and "a few days after the ex-date" not in text
    assert "credited about 1 to 2 trading days after the ex-date" in text
    assert "SEBI's T+2 rule for bonuses announced from 1 Oct 2024" in text


# ------------------------------------------------------------- 12. DDPI before TPIN


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_tpin_warning_reads_demat_consent_first(path):
    text = flat(path.read_text(encoding="utf-8"))
    if "TPIN" not in text:
        return
    assert "`meta.demat_consent`" in text


@pytest.mark.parametrize(
    "name",
    ["triggers-and-alerts/gtt.md", "orders/prepare.md", "troubleshooting/execution.md"],
)
def test_server_cannot_start_a_tpin_authorisation(name):
    assert "this server cannot start a TPIN authorisation" in flat(read(name))


# ------------------------------------------------------------- 13. oldest legacy server


def test_resolve_has_a_fallback_for_the_oldest_server():
    text = flat(read("market-data/resolve.md"))
    for phrase in (
        "only `query`, `filter_on`, `from` and `limit`",
        "exact `id` match",
        "`limit` above `total`",
    ):
        assert phrase in text, phrase


@pytest.mark.parametrize("name", ["holdings/concentration.md", "daily-review/account-briefing.md"])
def test_holdings_type_is_absent_on_the_oldest_server(name):
    assert "`get_holdings` without `type`" in flat(read(name))


# ------------------------------------------------------------- 14. F&O session gaps in exit


def test_exit_states_fo_session_gaps():
    step = step_with("orders/exit.md", "Check the clock")
    for phrase in ("15:45 to 09:10", "15:30 to 15:45", "09:10 to 09:15", "09:00 to 09:08"):
        assert phrase in step, phrase


# ------------------------------------------------------------- 15. GTT duplicates


def test_gtt_checks_duplicates_before_the_approval():
    body = split_frontmatter(read("triggers-and-alerts/gtt.md")).body
    before_stop = sections(body)["Steps"].split("**Stop for approval.**")[0]
    dup = [flat(i) for _, i, _ in numbered_steps(before_stop) if "duplicate" in i]
    assert dup, "no duplicate check before the approval stop"
    assert ("gtt", "list") in mode_pairs(dup[0])
    assert "same symbol, side and triggers" in dup[0] and "no tag" in dup[0]


# ------------------------------------------------------------- 16. protective limit rounding


@pytest.mark.parametrize("name", ["orders/prepare.md", "orders/stop-loss.md"])
def test_protective_limit_rounds_away_from_the_trigger(name):
    text = " ".join(steps_of(name))
    assert "A stop's protective limit is exempt" in text
    assert "a SELL stop's limit rounds down and a BUY stop's limit up" in text


# ------------------------------------------------------------- 17. index change


def test_briefing_template_prints_the_computed_change():
    text = read("daily-review/templates/briefing-report.md")
    assert "<net_change>" not in text
    indices = [line for line in text.split("\n") if line.startswith(("Indices", "| Indices"))]
    assert len(indices) == 2
    for line in indices:
        assert "last_price - ohlc.close" in line, line


# ------------------------------------------------------------- 18. quote batch sizes


def test_quote_batch_sizes():
    text = flat(read("market-data/resolve.md"))
    assert "Batching LTP and OHLC at 500 is an assumption" not in text
    assert "`market` mode `ltp` and `market` mode `ohlc` take up to 1,000 instruments" in text
    assert "`market` mode `quote` up to 500" in text


@pytest.mark.parametrize("path", markdown_files(), ids=rel)
def test_ltp_batches_are_not_capped_at_500(path):
    text = flat(path.read_text(encoding="utf-8"))
    for sentence in re.split(r"(?<=[.;])\s", text):
        if "`ltp`" in sentence and "batched at 500" in sentence:
            pytest.fail(sentence)


# ------------------------------------------------------------- 19. template bar counts

BARS = re.compile(
    r"Bars used: (\d+) = (\d+) warm-up \+ (\d+) reported \((?:bars (\d+) to (\d+)|bar (\d+))\)"
)


@pytest.mark.parametrize(
    ("name", "warmup_needed"),
    [("technical-analysis/moving-averages.md", 60), ("technical-analysis/rsi.md", 100)],
)
def test_template_bar_counts_add_up(name, warmup_needed):
    text = read(name)
    lines = [line for line in text.split("\n") if line.startswith("Bars used:")]
    assert len(lines) == 1
    found = BARS.match(lines[0])
    assert found, lines[0]
    used, warm, reported = (int(g) for g in found.groups()[:3])
    first = int(found.group(4) or found.group(6))
    last = int(found.group(5) or found.group(6))
    assert used == warm + reported and last == used and last - first + 1 == reported
    assert warm >= warmup_needed
    template = text[text.index(lines[0]) :].split("```")[0]
    earlier = re.search(r"(\d+) bars earlier", template)
    assert reported == (int(earlier.group(1)) + 1 if earlier else 1)


# ------------------------------------------------------------- 20. variety on every place


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_every_place_call_names_variety(path):
    body = split_frontmatter(path.read_text(encoding="utf-8")).body
    for _, item, _ in numbered_steps(strip_code_blocks(sections(body)["Steps"])):
        item = flat(item)
        if ("orders", "place") in mode_pairs(item) and re.search(r"(Call|Place)\b", item):
            assert "`variety`" in item, item[:160]
