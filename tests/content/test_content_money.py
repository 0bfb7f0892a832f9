"""Checks for the findings of the expert review (issue 11 §1): the data an approval summary is
built from must be right, or approving the summary does not help."""

import datetime as dt
import itertools
import re

import pytest
from content_helpers import (
    catalog_root,
    links,
    markdown_files,
    mode_pairs,
    numbered_steps,
    recipe_files,
    rel,
    rsi,
    sections,
    split_frontmatter,
    strip_code_blocks,
    subsection,
)


def read(name: str) -> str:
    return (catalog_root() / name).read_text(encoding="utf-8")


def steps_of(name: str) -> list[str]:
    """Each numbered step, with its line breaks and indentation collapsed to single spaces."""
    body = split_frontmatter(read(name)).body
    return [" ".join(item.split()) for _, item, _ in numbered_steps(sections(body)["Steps"])]


def placing_recipes() -> list[str]:
    """Recipes whose steps place an order."""
    out = []
    for path in recipe_files():
        steps = sections(split_frontmatter(path.read_text(encoding="utf-8")).body)["Steps"]
        if ("orders", "place") in mode_pairs(steps):
            out.append(rel(path))
    return out


# ------------------------------------------------------------- 1. pagination key

SENTENCE = re.compile(r"(?<=[.;])\s+")


def meta_pagination_problems(text: str) -> list[str]:
    """Sentences that put page information (`has_more`, `total`) under `meta`."""
    flat = re.sub(r"\s+", " ", strip_code_blocks(text))
    return [
        s for s in SENTENCE.split(flat) if "`meta`" in s and ("`has_more`" in s or "`total`" in s)
    ]


def test_meta_checker_catches_the_old_wording():
    old = "Pass `from` and `limit`; `meta` with `total`, `has_more` and `returned` appears."
    assert meta_pagination_problems(old)
    split = "`meta` with\n`total` and `has_more` is present only when `limit` is above 0."
    assert meta_pagination_problems(split)
    new = "`pagination` with `total` and `has_more`. Here `meta` describes the data source."
    assert meta_pagination_problems(new) == []


@pytest.mark.parametrize("path", markdown_files(), ids=rel)
def test_page_information_is_under_pagination_not_meta(path):
    text = path.read_text(encoding="utf-8")
    assert meta_pagination_problems(text) == []
    secs = sections(split_frontmatter(text).body)
    if "Pagination" in secs and "`has_more`" in secs["Pagination"]:
        assert "`pagination`" in secs["Pagination"]


def test_search_meta_is_the_data_source():
    text = read("market-data/resolve.md")
    assert "`{data, pagination, meta}`" in text
    assert '`"bod_instruments"`' in text and "`quote_timestamp`" in text
    assert "`meta.live_quote_enriched`" in text


# ------------------------------------------------------------- 2. Day and Net books

ROW_KEY = ("exchange", "tradingsymbol", "product")


def positions_example() -> tuple[list[dict[str, str]], str]:
    text = subsection(split_frontmatter(read("holdings/positions.md")).body, "Worked example")
    rows = [line for line in text.split("\n") if line.startswith("|")]
    header = [c.strip() for c in rows[0].strip("|").split("|")]
    table = [
        dict(zip(header, (c.strip() for c in r.strip("|").split("|")), strict=True))
        for r in rows[2:]
    ]
    return table, text


def split_books(rows: list[dict[str, str]]) -> list[str]:
    """The recipe's rule: first copy of a repeated key is Day, second Net; once is Net."""
    counts: dict[tuple[str, ...], int] = {}
    for row in rows:
        key = tuple(row[k] for k in ROW_KEY)
        counts[key] = counts.get(key, 0) + 1
    seen: dict[tuple[str, ...], int] = {}
    books = []
    for row in rows:
        key = tuple(row[k] for k in ROW_KEY)
        seen[key] = seen.get(key, 0) + 1
        books.append("Day" if counts[key] == 2 and seen[key] == 1 else "Net")
    return books


def test_positions_example_pnl_recomputes():
    rows, _ = positions_example()
    for row in rows:
        pnl = (
            float(row["sell_value"])
            - float(row["buy_value"])
            + float(row["quantity"]) * float(row["last_price"]) * float(row["multiplier"])
        )
        assert f"{pnl:.2f}" == row["pnl"], row


def test_positions_example_books_follow_the_rule():
    rows, text = positions_example()
    assert split_books(rows) == [row["book"] for row in rows]
    for row in rows:
        if float(row["overnight_quantity"]) > 0:
            assert row["book"] == "Net", row
    closed = [r for r in rows if r["book"] == "Net" and float(r["quantity"]) == 0]
    day_of_closed = [
        r
        for r in rows
        if r["book"] == "Day" and any(r["tradingsymbol"] == c["tradingsymbol"] for c in closed)
    ]
    assert closed and day_of_closed and float(day_of_closed[0]["quantity"]) < 0
    net_total = sum(float(r["pnl"]) for r in rows if r["book"] == "Net")
    all_total = sum(float(r["pnl"]) for r in rows)
    assert f"- Net P&L total = {net_total:.2f}" in text
    assert f"- Sum of every row = {all_total:.2f}" in text


def test_positions_rule_is_not_the_quantity_equation():
    steps = steps_of("holdings/positions.md")
    separate = next(s for s in steps if "Separate the books" in s)
    assert "first copy" in separate and "second copy" in separate
    assert "`overnight_quantity`" in separate
    assert "prefer the row whose `quantity` equals" not in read("holdings/positions.md")


# ------------------------------------------------------------- 3. funds against `net`


@pytest.mark.parametrize(
    "name", ["orders/prepare.md", "orders/funds-check.md", "daily-review/account-briefing.md"]
)
def test_funds_compare_net_margin_not_cash(name):
    step = next(s for s in steps_of(name) if ("portfolio", "margins") in mode_pairs(s))
    assert "`net`" in step
    for context in ("`available.cash`", "`available.collateral`", "`utilised.debits`"):
        assert context in step, context
    assert "available` cash for the segment" not in read(name)


# ------------------------------------------------------------- 4. opening or closing


@pytest.mark.parametrize("name", placing_recipes())
def test_sell_says_whether_it_opens_or_closes(name):
    steps = [s for s in steps_of(name) if ("portfolio", "positions") in mode_pairs(s)]
    assert steps, "a SELL must read positions before it is summarised"
    text = steps[0]
    for phrase in ("opens a short", "closes", "own `product`", "whole lots"):
        assert phrase in text, phrase


# ------------------------------------------------------------- 5. SELL GTTs without DDPI


@pytest.mark.parametrize("name", ["triggers-and-alerts/gtt.md", "triggers-and-alerts/audit.md"])
def test_sell_gtt_checks_tpin_authorisation(name):
    text = " ".join(steps_of(name))
    # issue 43 X5: only `physical` (a POA) is standing authorisation (catalog-review-4 X5)
    assert "`authorised_quantity`" in text and "TPIN" in text and "`physical`" in text


# ------------------------------------------------------------- 6. re-check before the write


@pytest.mark.parametrize("name", placing_recipes())
def test_recheck_after_approval_requotes_and_rechecks(name):
    steps = steps_of(name)
    recheck = next(s for s in steps if "Re-check right before the write" in s)
    assert "quote" in recheck and "session" in recheck and "duplicate" in recheck


# ------------------------------------------------------------- 7. duplicates


@pytest.mark.parametrize("name", placing_recipes())
def test_duplicates_include_complete_orders_and_trades(name):
    step = next(s for s in steps_of(name) if "duplicates" in s)
    assert "`COMPLETE`" in step and ("orders", "all_trades") in mode_pairs(step)


# ------------------------------------------------------------- 8. SL-M


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_sl_m_is_never_offered_without_its_limits(path):
    text = re.sub(r"\s+", " ", strip_code_blocks(path.read_text(encoding="utf-8")))
    writes = {("orders", "place"), ("orders", "modify")} & set(mode_pairs(text))
    if "`SL-M`" not in text or not writes:
        return
    assert re.search(
        r"`SL-M` is (not|never) allowed for NSE index or stock options nor on BSE", text
    )


def test_modify_to_market_is_cancel_and_place():
    text = re.sub(r"\s+", " ", read("orders/modify-cancel.md"))
    assert "A modify to `MARKET` or `SL-M` is not possible through this server" in text
    assert "cancel and place a new order instead, each with its own summary and approval" in text


# ------------------------------------------------------------- facts

TAG_EXAMPLE = re.compile(r"\bks[0-9A-Za-z_-]*\d[0-9A-Za-z_-]*")


@pytest.mark.parametrize("path", markdown_files(), ids=rel)
def test_tag_examples_are_alphanumeric(path):
    for tag in TAG_EXAMPLE.findall(path.read_text(encoding="utf-8")):
        assert tag.isalnum() and len(tag) <= 20, tag


def test_rsi_one_step_check_recomputes():
    text = read("technical-analysis/rsi.md")
    closes = [float(m) for m in re.findall(r"^\| \d+ \| [\d-]+ \| ([\d.]+) \|", text, re.M)]
    found = re.search(r"so RS = (\d+\.\d+) and RSI = (\d+\.\d+)", text)
    assert found
    gains = [max(b - a, 0.0) for a, b in itertools.pairwise(closes)]
    losses = [max(a - b, 0.0) for a, b in itertools.pairwise(closes)]
    avg_gain = (sum(gains[:14]) / 14 * 13 + gains[14]) / 14
    avg_loss = (sum(losses[:14]) / 14 * 13 + losses[14]) / 14
    assert f"{avg_gain / avg_loss:.6f}" == found.group(1)
    assert f"{rsi(closes, 14, 16):.2f}" == found.group(2)


# NSE trading holidays (weekdays) of 2025 up to June, from the NSE holiday circular.
NSE_HOLIDAYS_2025 = {
    dt.date(2025, 2, 26),
    dt.date(2025, 3, 14),
    dt.date(2025, 3, 31),
    dt.date(2025, 4, 10),
    dt.date(2025, 4, 14),
    dt.date(2025, 4, 18),
    dt.date(2025, 5, 1),
}


# Special sessions on a weekend (issue 43 Y15; catalog-review-4 Y15): the Union Budget was
# presented on Saturday 1 Feb 2025 and NSE held a full trading session that day (NSE circular
# of January 2025, "Live trading session on Saturday, February 01, 2025").
NSE_SPECIAL_SESSIONS_2025 = {dt.date(2025, 2, 1)}


def nse_trading_days(start: dt.date, end: dt.date) -> int:
    assert end <= dt.date(2025, 6, 30), "extend NSE_HOLIDAYS_2025 for later dates"
    days, day = 0, start
    while day <= end:
        days += day.weekday() < 5 and day not in NSE_HOLIDAYS_2025
        day += dt.timedelta(days=1)
    return days + sum(start <= s <= end for s in NSE_SPECIAL_SESSIONS_2025)


def test_trading_day_count():
    assert nse_trading_days(dt.date(2025, 1, 1), dt.date(2025, 6, 13)) == 112


@pytest.mark.parametrize("path", markdown_files(), ids=rel)
def test_template_bar_counts_fit_their_dates(path):
    text = path.read_text(encoding="utf-8")
    for start, end, bars in re.findall(
        r"interval day, range (\d{4}-\d\d-\d\d) to (\d{4}-\d\d-\d\d)\nBars used: (\d+)", text
    ):
        possible = nse_trading_days(dt.date.fromisoformat(start), dt.date.fromisoformat(end))
        assert int(bars) == possible, f"{bars} daily bars between {start} and {end}"


FACTS = {
    "orders/prepare.md": [
        "15:20 (equity), 15:25 (F&O) and 25 minutes before the MCX close",
        "fresh MIS orders are blocked",
        "tell the person when to retry",
        "read its schema in `tools/list` first",
        "`iceberg_legs` 2 to 50",
        "every child order",
        "A trigger rounds towards the last price",
        "decide per row whether `quantity` includes `t1_quantity`",
        "cover orders can be placed",
    ],
    "orders/reference/market-sessions.md": [
        "since 8 Dec 2025",
        "only after 06:30 on T+1 for shares bought on T",
    ],
    "orders/reference/selling-held-shares.md": [
        "Decide per row and say which",
        "rejected by the exchange when it triggers",
        "This server cannot start a TPIN authorisation",
    ],
    "orders/exit.md": ["`realised_quantity` less `used_quantity`"],
    "orders/modify-cancel.md": ["the order's own `variety`"],
    "orders/reconcile.md": ["2 rechecks 5 to 10 seconds apart", "before 09:00"],
    "market-data/historical.md": [
        "free Personal plan has no quotes and no historical candles",
        "`day` candles only",
        "is an error, not a shorter series",
    ],
    "market-data/resolve.md": ["`get_by_exch_token` with `exch_token` **and** `exchange`"],
    "daily-review/account-briefing.md": ["`last_price - ohlc.close`"],
    "holdings/concentration.md": ["include them in the weights"],
    "holdings/positions.md": ["in **both** books"],
    "triggers-and-alerts/gtt.md": [
        "strictly between the two triggers",
        "a BUY limit sits at or above its trigger and a SELL limit at or below it",
        "`NRML` in NSE derivatives",
        "less open SELL orders and other SELL GTTs",
        "`realised_quantity` less `used_quantity`",
    ],
    "triggers-and-alerts/audit.md": ["two-leg (OCO)"],
    "triggers-and-alerts/alerts.md": ["only `LIMIT` orders in an ATO basket"],
    "troubleshooting/data.md": ["fails with an error"],
    "troubleshooting/execution.md": ["letters and digits only"],
}


@pytest.mark.parametrize(("name", "phrase"), [(n, p) for n, ps in FACTS.items() for p in ps])
def test_reviewed_fact_is_stated(name, phrase):
    assert phrase in re.sub(r"\s+", " ", read(name))


# ------------------------------------------------------------- the six new recipes (§2)

NEW_RECIPES = (
    "orders/exit.md",
    "orders/expiry-rollover.md",
    "orders/funds-check.md",
    "orders/stop-loss.md",
    "holdings/corporate-actions.md",
    "holdings/mutual-funds.md",
)


@pytest.mark.parametrize("name", NEW_RECIPES)
def test_new_recipe_is_linked_from_index_and_its_topic(name):
    assert name in links(read("index.md"))
    topic, recipe = name.split("/")
    assert recipe in links(read(f"{topic}/SKILL.md"))
