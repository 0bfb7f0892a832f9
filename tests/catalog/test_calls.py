"""The calls a recipe writes: read from the text, and checked against the recorded schemas of
every Kite MCP generation the recipe claims (``catalog validate``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kite_skills import catalog
from kite_skills.catalog import Call
from kite_skills.catalog import extract_calls as extract
from kite_skills.catalog._callcheck import GENERATIONS_KEY
from kite_skills.catalog._callcheck import claimed as read_claim
from kite_skills.cli import main

from .conftest import write_catalog


def params(call: Call) -> list[tuple[str, str | None]]:
    return [(p.name, p.value) for p in call.params]


# -- extraction ------------------------------------------------------------------------------


def test_a_grouped_call_with_parameters_values_and_numbers() -> None:
    (call,) = extract(
        "1. List: `orders` mode `list` with `from` 0 and `limit` 50; page until done.\n"
    )
    assert (call.tool, call.mode, call.line, call.with_params) == ("orders", "list", 1, True)
    assert params(call) == [("from", "0"), ("limit", "50")]


def test_a_call_wrapped_over_lines_keeps_each_parameters_line() -> None:
    text = (
        "Intro.\n\n"
        "2. Resolve: `market` mode\n"
        "   `search` with `search_mode` `get_by_tradingsymbol`, `exchange`, `tradingsymbol` and\n"
        "   `verbosity` `full`. Record `tick_size`.\n"
    )
    (call,) = extract(text)
    assert call.line == 3
    assert params(call) == [
        ("search_mode", "get_by_tradingsymbol"),
        ("exchange", None),
        ("tradingsymbol", None),
        ("verbosity", "full"),
    ]
    assert [p.line for p in call.params] == [4, 4, 4, 5]


def test_example_values_and_as_needed_parameters() -> None:
    (call,) = extract(
        "Call `orders` mode `place` with `variety` `regular`, `quantity`, and as needed "
        '`price`, `tag`. Quote with `instruments` such as `["NSE:INFY"]`.\n'
    )
    assert params(call) == [
        ("variety", "regular"),
        ("quantity", None),
        ("price", None),
        ("tag", None),
    ]
    (quote,) = extract('`market` mode `quote` with `instruments` such as `["NSE:INFY"]`.')
    assert params(quote) == [("instruments", '["NSE:INFY"]')]


def test_or_gives_another_value_after_a_value_and_another_parameter_after_a_name() -> None:
    (call,) = extract(
        "`orders` mode `place` with `order_type` `SL` or `SL-M`, `price` or `market_protection`"
        " and `tag`.\n"
    )
    assert params(call) == [
        ("order_type", "SL"),
        ("order_type", "SL-M"),
        ("price", None),
        ("market_protection", None),
        ("tag", None),
    ]


def test_the_parenthesised_mode_and_the_legacy_twin() -> None:
    first, second = extract(
        "- `orders` (mode `list`) (legacy `get_orders`)\n"
        "- `orders` mode `history` (`get_order_history`)\n"
    )
    assert (first.tool, first.mode, first.twin) == ("orders", "list", "get_orders")
    assert (second.mode, second.twin, second.with_params) == ("history", "get_order_history", False)


def test_a_bare_legacy_name_is_a_call_and_a_list_of_twins_is_not_a_twin() -> None:
    calls = extract(
        "`orders` mode `list` and `orders` mode `all_trades` (legacy `get_orders`, `get_trades`)"
        " slice on the server. Call `place_order` with `variety` `amo`.\n"
    )
    assert [(c.tool, c.mode, c.twin) for c in calls] == [
        ("orders", "list", None),
        ("orders", "all_trades", None),
        ("get_orders", None, None),
        ("get_trades", None, None),
        ("place_order", None, None),
    ]
    assert params(calls[-1]) == [("variety", "amo")]


def test_the_parameter_list_ends_at_prose_and_at_the_next_call() -> None:
    first, second, third = extract(
        "`orders` mode `cancel` with `order_id`, the order's own `variety`, then "
        "`orders` mode `history` with `order_id` and `orders` mode `trades`.\n"
    )
    assert params(first) == [("order_id", None)]
    assert params(second) == [("order_id", None)]
    assert (third.mode, third.with_params) == ("trades", False)


def test_fenced_code_is_not_read() -> None:
    text = "```\n`orders` mode `place` with `variety`\n```\n`portfolio` mode `profile`\n"
    assert [(c.tool, c.line) for c in extract(text)] == [("portfolio", 4)]


def test_a_mark_names_generations_links_and_fallback_calls() -> None:
    (call,) = extract(
        "`market` mode `search` with `search_mode` `get_by_isin` and `isin` (legacy "
        "`search_instruments`; not on legacy-oldest: `search_instruments` with `query` and "
        "`limit`, see [Resolve](../market-data/resolve.md))\n"
    )
    assert call.twin == "search_instruments"
    assert call.unavailable is not None
    assert call.unavailable.generations == ("legacy-oldest",)
    assert call.unavailable.links == ("../market-data/resolve.md",)
    (fallback,) = call.unavailable.fallbacks
    assert (fallback.tool, params(fallback), fallback.only) == (
        "search_instruments",
        [("query", None), ("limit", None)],
        ("legacy-oldest",),
    )


# -- the check -------------------------------------------------------------------------------


def catalog_with(tmp_path: Path, body: str, metadata: str = "") -> Path:
    """A topic ``orders`` whose recipe's body is ``body``; ``metadata`` opens the SKILL.md's
    ``metadata`` with its own lines (the version is added)."""
    metadata = (metadata or "metadata:\n") + '  version: "1"\n'
    skill = (
        "---\nname: orders\ndescription: Orders.\nlicense: MIT\n"
        "compatibility: Needs the Kite MCP server.\n" + metadata + "---\n# Orders\n"
    )
    return write_catalog(
        tmp_path / "cat",
        {
            "index.md": b"# Catalog\n",
            "orders/SKILL.md": skill.encode(),
            "orders/recipe.md": ("---\ndescription: A recipe.\n---\n# Recipe\n\n" + body).encode(),
        },
    )


def problems(tmp_path: Path, body: str, metadata: str = "") -> list[tuple[int, str, str]]:
    root = catalog_with(tmp_path, body, metadata)
    found = catalog.check(root)
    assert all(p.path == f"{root}/orders/recipe.md" for p in found), found
    return [(p.line, p.code, p.message) for p in found]


# The recipe's body starts on line 6 of its file.
LINE = 6


def test_a_correct_call_passes_on_every_generation(tmp_path: Path) -> None:
    body = (
        "1. `orders` mode `place` with `variety` `regular`, `exchange` `NSE`, `tradingsymbol`,"
        " `transaction_type` `BUY`, `quantity`, `product` `CNC`, `order_type` `LIMIT` and"
        " `price` (legacy `place_order`).\n"
    )
    assert problems(tmp_path, body) == []


def test_an_unknown_tool(tmp_path: Path) -> None:
    assert problems(tmp_path, "Call `order` mode `list`.\n") == [
        (
            LINE,
            "call-unknown-tool",
            "`order` mode `list`: no such tool — use one of `portfolio`, `orders`, "
            "`gtt`, `market`, `alerts`, `mutual_funds`, `session`",
        )
    ]


def test_an_unknown_legacy_tool(tmp_path: Path) -> None:
    ((line, code, message),) = problems(tmp_path, "Call `get_order_book`.\n")
    assert (line, code) == (LINE, "call-unknown-tool")
    assert message == (
        "`get_order_book` on legacy and legacy-oldest: is no tool of any Kite MCP server — "
        "check the spelling against tools/list"
    )


def test_an_unknown_mode(tmp_path: Path) -> None:
    assert problems(tmp_path, "Read `portfolio` mode `funds`.\n") == [
        (
            LINE,
            "call-unknown-mode",
            "`portfolio` mode `funds`: `portfolio` has no mode `funds` — use one of `profile`, "
            "`margins`, `holdings`, `positions`",
        )
    ]


def test_an_unknown_parameter(tmp_path: Path) -> None:
    ((line, code, message),) = problems(
        tmp_path, "Read `orders` mode `list` with\n`from` 0 and `page` 2.\n"
    )
    assert (line, code) == (LINE + 1, "call-unknown-param")
    assert message.startswith(
        "`orders` mode `list` on grouped, legacy `get_orders`, legacy-oldest `get_orders`: "
        "has no parameter `page` — drop it or use one it takes: "
    )


def test_a_value_outside_the_enum(tmp_path: Path) -> None:
    assert problems(
        tmp_path,
        "`market` mode `historical` with `instrument_token`, `from_date`,"
        " `to_date` and `interval` `1day`.\n",
    ) == [
        (
            LINE,
            "call-bad-value",
            "`market` mode `historical` on grouped, legacy `get_historical_data`, legacy-oldest "
            "`get_historical_data`: takes no `1day` for `interval` — use one of `minute`, "
            "`3minute`, `5minute`, `10minute`, `15minute`, `30minute`, `60minute`, `day`",
        )
    ]


def test_each_value_given_with_or_is_checked_and_the_parameter_reported_once(
    tmp_path: Path,
) -> None:
    body = "`portfolio` mode `holdings` with `type` `full` or `partial` and `page` 1 or 2.\n"
    found = problems(tmp_path, body, 'metadata:\n  kite-mcp-generations: "grouped"\n')
    assert [(code, message.split(" — ")[0]) for _, code, message in found] == [
        ("call-bad-value", "`portfolio` mode `holdings` on grouped: takes no `partial` for `type`"),
        ("call-unknown-param", "`portfolio` mode `holdings` on grouped: has no parameter `page`"),
    ]


def test_a_parameter_the_handler_ignores(tmp_path: Path) -> None:
    body = (
        "`orders` mode `modify` with `variety`, `order_id`, `order_type`, `quantity` and "
        "`market_protection` `-1`.\n"
    )
    found = problems(tmp_path, body, 'metadata:\n  kite-mcp-generations: "grouped"\n')
    assert found == [
        (
            LINE,
            "call-ignored-param",
            "`orders` mode `modify` on grouped: ignores `market_protection` in mode `modify` — "
            "drop it; the handler never reads it",
        )
    ]


def test_a_required_parameter_the_call_omits(tmp_path: Path) -> None:
    body = (
        "`orders` mode `place` with `exchange`, `tradingsymbol`, `transaction_type`, "
        "`quantity`, `product` and `order_type`.\n"
    )
    assert problems(tmp_path, body) == [
        (
            LINE,
            "call-missing-param",
            "`orders` mode `place` on legacy `place_order` and legacy-oldest `place_order`: "
            "requires `variety` — add `variety` to the call's parameters",
        )
    ]


def test_a_lookup_type_brings_its_own_required_parameters(tmp_path: Path) -> None:
    body = "`market` mode `search` with `search_mode` `get_by_tradingsymbol` and `exchange`.\n"
    found = problems(tmp_path, body, 'metadata:\n  kite-mcp-generations: "grouped legacy"\n')
    assert found == [
        (
            LINE,
            "call-missing-param",
            "`market` mode `search` on grouped and legacy `search_instruments`: requires "
            "`tradingsymbol` — add `tradingsymbol` to the call's parameters",
        )
    ]


def test_a_wrong_legacy_twin(tmp_path: Path) -> None:
    assert problems(tmp_path, "- `orders` mode `list` (legacy `get_trades`)\n") == [
        (
            LINE,
            "call-twin",
            "`orders` mode `list`: its legacy twin is `get_orders`, not `get_trades` — "
            "write (legacy `get_orders`)",
        )
    ]


def test_every_problem_is_reported_at_once_in_line_order(tmp_path: Path) -> None:
    body = (
        "1. `orders` mode `buy`.\n"
        "2. `orders` mode `list` with `page` 1.\n"
        "3. `orders` mode `cancel` with `order_id`.\n"
        "4. `gtt` mode `place` with `trigger_type` `oco`, `exchange`, `tradingsymbol`,"
        " `last_price`, `transaction_type` and `product`.\n"
    )
    found = problems(tmp_path, body)
    assert [(line, code) for line, code, _ in found] == [
        (LINE, "call-unknown-mode"),
        (LINE + 1, "call-unknown-param"),
        (LINE + 2, "call-missing-param"),
        (LINE + 3, "call-bad-value"),
    ]
    root = catalog_with(tmp_path / "again", body)
    shown = [str(p) for p in catalog.check(root)]
    assert shown[0].startswith(f"{root}/orders/recipe.md:{LINE}: `orders` mode `buy`: `orders`")


# -- generations ------------------------------------------------------------------------------

OLDEST_SEARCH = (
    "`market` mode `search` with `search_mode` `get_by_isin`, `isin` and `verbosity` `full`"
)


def test_a_call_a_generation_cannot_make_must_be_marked(tmp_path: Path) -> None:
    found = problems(tmp_path, OLDEST_SEARCH + ".\n")
    assert {code for _, code, _ in found} == {"call-unavailable", "call-missing-param"}
    assert (
        LINE,
        "call-unavailable",
        "`market` mode `search` on legacy-oldest `search_instruments`: has no parameters "
        "`mode` (`search_mode`), `isin`, `verbosity` — mark the call '(not on legacy-oldest: "
        "<fallback>)' with the fallback call or a link to the page that gives it, or claim "
        "fewer generations",
    ) in found


def test_a_marked_call_with_a_fallback_passes(tmp_path: Path) -> None:
    link = OLDEST_SEARCH + " (not on legacy-oldest: see [the fallback](recipe.md#steps)).\n"
    assert problems(tmp_path, link) == []
    call = OLDEST_SEARCH + " (not on legacy-oldest: `search_instruments` with `query`).\n"
    assert problems(tmp_path / "call", call) == []


def test_a_mark_covers_the_same_call_elsewhere_on_the_page(tmp_path: Path) -> None:
    body = (
        "- `market` mode `search` (legacy `search_instruments`; not on legacy-oldest: "
        "[fallback](recipe.md))\n\n1. " + OLDEST_SEARCH + ".\n"
    )
    assert problems(tmp_path, body) == []


def test_a_mark_without_a_fallback(tmp_path: Path) -> None:
    body = OLDEST_SEARCH + " (not on legacy-oldest: there is none).\n"
    assert problems(tmp_path, body) == [
        (
            LINE,
            "call-no-fallback",
            "`market` mode `search` is marked not available on legacy-oldest but gives no "
            "fallback — write the fallback call or link the page that gives it after the colon",
        )
    ]


def test_the_fallback_call_is_checked_on_the_marked_generation(tmp_path: Path) -> None:
    body = OLDEST_SEARCH + " (not on legacy-oldest: `search_instruments` with `verbosity`).\n"
    found = problems(tmp_path, body)
    assert [(code, message.split(":")[0]) for _, code, message in found] == [
        ("call-missing-param", "`search_instruments` on legacy-oldest"),
        ("call-unknown-param", "`search_instruments` on legacy-oldest"),
    ]


def test_a_mark_on_a_call_that_works_is_stale(tmp_path: Path) -> None:
    body = "`orders` mode `list` (not on legacy-oldest: `get_orders`).\n"
    assert problems(tmp_path, body) == [
        (
            LINE,
            "call-stale-mark",
            "`orders` mode `list` is marked not available on legacy-oldest, yet every call of "
            "it here works there — remove 'legacy-oldest' from the mark",
        )
    ]


def test_a_grouped_only_mode_needs_a_mark_on_legacy_servers(tmp_path: Path) -> None:
    found = problems(tmp_path, "`session` mode `status`.\n")
    assert [message.split(" —")[0] for _, _, message in found] == [
        "`session` mode `status` on legacy and legacy-oldest: has no legacy equivalent"
    ]
    marked = "`session` mode `status` (not on legacy, legacy-oldest: `login`).\n"
    assert problems(tmp_path / "marked", marked) == []


def test_a_topic_claims_its_generations_in_skill_metadata(tmp_path: Path) -> None:
    only_new = 'metadata:\n  kite-mcp-generations: "grouped"\n'
    assert problems(tmp_path, OLDEST_SEARCH + ".\n", only_new) == []


def test_an_unknown_generation_in_the_claim(tmp_path: Path) -> None:
    root = catalog_with(tmp_path, "", 'metadata:\n  kite-mcp-generations: "grouped newest"\n')
    assert [(p.path, p.line, p.code, p.message) for p in catalog.check(root)] == [
        (
            f"{root}/orders/SKILL.md",
            7,
            "call-generations",
            "metadata 'kite-mcp-generations' names newest; list generations from: grouped, "
            "legacy, legacy-oldest",
        )
    ]


EVERY_GENERATION = ("grouped", "legacy", "legacy-oldest")


@pytest.mark.parametrize("value", ['""', '" "', '","', '" , "', "''"])
def test_an_empty_generation_claim_is_reported_and_silences_no_check(
    tmp_path: Path, value: str
) -> None:
    """Read as "no generation", an empty value would check the topic's calls on none."""
    root = catalog_with(
        tmp_path, OLDEST_SEARCH + ".\n", f"metadata:\n  {GENERATIONS_KEY}: {value}\n"
    )
    found = [(p.path.rsplit("/", 1)[-1], p.code, p.message) for p in catalog.check(root)]
    assert found[0] == (
        "SKILL.md",
        "call-generations",
        f"metadata '{GENERATIONS_KEY}' names nothing; list generations from: "
        + ", ".join(EVERY_GENERATION),
    )
    # the topic's calls are checked on every generation, as without the key
    assert found[1:] == [
        ("recipe.md", code, message)
        for _, code, message in problems(tmp_path / "no key", OLDEST_SEARCH + ".\n")
    ]
    assert {code for _, code, _ in found[1:]} == {"call-unavailable", "call-missing-param"}


def test_a_key_with_no_value_is_reported_and_silences_no_check(tmp_path: Path) -> None:
    root = catalog_with(tmp_path, OLDEST_SEARCH + ".\n", f"metadata:\n  {GENERATIONS_KEY}:\n")
    codes = [(p.path.rsplit("/", 1)[-1], p.code) for p in catalog.check(root)]
    assert codes[0][0] == "SKILL.md"
    assert ("recipe.md", "call-unavailable") in codes


@pytest.mark.parametrize(
    ("value", "claimed"),
    [
        ('"grouped,"', ("grouped",)),
        ('",legacy"', ("legacy",)),
        ('"legacy grouped"', ("grouped", "legacy")),
    ],
)
def test_a_claim_with_stray_separators_names_its_generations(
    value: str, claimed: tuple[str, ...]
) -> None:
    assert read_claim({"metadata": {GENERATIONS_KEY: value.strip('"')}}) == (claimed, None)


GROUPED_ONLY = f'metadata:\n  {GENERATIONS_KEY}: "grouped"\n'


@pytest.mark.parametrize(
    ("call", "missing"),
    [
        ("`market` mode `search` with `exchange`", "`query`"),  # the default mode: `search`
        ("`market` mode `search` with `query`", None),
        ("`market` mode `search` with `search_mode` `search` and `exchange`", "`query`"),
        ("`market` mode `search` with `search_mode` `get_by_id` and `query`", "`id`"),
        ("`market` mode `search` with `search_mode` `get_by_id` and `id`", None),
        ("`market` mode `search` with `search_mode` `get_by_tradingsymbol` and `exchange`",
         "`tradingsymbol`"),
    ],
)  # fmt: skip
def test_a_search_is_checked_against_its_search_modes_requirements_the_default_one_too(
    tmp_path: Path, call: str, missing: str | None
) -> None:
    found = problems(tmp_path, call + ".\n", GROUPED_ONLY)
    if missing is None:
        assert found == []
    else:
        assert found == [
            (
                LINE,
                "call-missing-param",
                f"`market` mode `search` on grouped: requires {missing} — add {missing} to the "
                "call's parameters",
            )
        ]


def test_a_legacy_search_is_checked_against_its_default_modes_requirements(tmp_path: Path) -> None:
    legacy = f'metadata:\n  {GENERATIONS_KEY}: "legacy"\n'
    found = problems(tmp_path, "`search_instruments` with `filter_on` `id`.\n", legacy)
    assert [(code, message.split(" —")[0]) for _, code, message in found] == [
        ("call-missing-param", "`search_instruments` on legacy: requires `query`")
    ]
    assert problems(tmp_path / "with query", "`search_instruments` with `query`.\n", legacy) == []


# -- the shipped catalog and the CLI ----------------------------------------------------------


def test_the_shipped_catalog_has_no_call_problems() -> None:
    assert [str(p) for p in catalog.check() if p.code.startswith("call-")] == []


def test_the_shipped_recipes_write_calls_with_parameters() -> None:
    root = catalog.load()
    texts = [root.help(key).text for key in root.keys if key != "/"]
    written = [c for text in texts for c in extract(text) if c.with_params]
    assert len(written) > 40
    assert {c.tool for c in written} >= {"orders", "market", "gtt", "alerts", "portfolio"}


def test_validate_reports_call_problems(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = catalog_with(tmp_path, "Call `orders` mode `buy`.\n")
    assert main(["catalog", "validate", str(root)]) == 1
    err = capsys.readouterr().err
    assert f"{root}/orders/recipe.md:{LINE}: `orders` mode `buy`: `orders` has no mode" in err
    assert "1 problem in" in err


# ---- this server's own `calc` tool: checked against its own schema, on no generation -------


def test_a_correct_calc_call_passes(tmp_path: Path) -> None:
    body = (
        "4. Round it: `calc` mode `tick` with `price`, `tick_size` and `purpose` such as\n"
        "   `buy_limit`; split it with `calc` mode `lots` with `quantity`, `lot_size`,\n"
        "   `freeze_quantity` and `split` `orders` or `iceberg`. `calc` mode `sellable` with\n"
        "   `holding`, `open_sell_orders`, `active_sell_gtts` and `demat_consent` sizes a sell.\n"
    )
    assert problems(tmp_path, body) == []


def test_every_problem_of_a_calc_call_is_reported(tmp_path: Path) -> None:
    body = (
        "Call `calc` mode `tick` with `price`, `tick` and `purpose` `buy`.\n"
        "Then `calc` mode `margin`.\n"
    )
    assert problems(tmp_path, body) == [
        (
            LINE,
            "call-bad-value",
            "`calc` mode `tick`: takes no `buy` for `purpose` — use one of `buy_limit`, "
            "`sell_limit`, `buy_trigger`, `sell_trigger`, `buy_stop_limit`, `sell_stop_limit`",
        ),
        (
            LINE,
            "call-missing-param",
            "`calc` mode `tick`: requires `tick_size` — add `tick_size` to the call's fields",
        ),
        (
            LINE,
            "call-unknown-param",
            "`calc` mode `tick`: has no field `tick` — drop it or use one it takes: `price`, "
            "`tick_size`, `purpose`, `trigger_price`",
        ),
        (
            LINE + 1,
            "call-unknown-mode",
            "`calc` has no mode `margin` — use one of `tick`, `lots`, `sellable`, "
            "`check_order`, `size`, `greeks`, `payoff`, `charges`, `exit_plan`",
        ),
    ]
