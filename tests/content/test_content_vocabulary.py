"""Every tool or tool + mode a recipe names must exist in a Kite MCP vocabulary."""

import pytest
from content_helpers import (
    CALC,
    LEGACY_EQUIVALENT,
    LEGACY_TOOLS,
    LEGACY_WRITERS,
    MODES,
    NEW_TOOLS,
    WRITE_MODES,
    approval_problems,
    catalog_root,
    legacy_mentions,
    markdown_files,
    mode_pairs,
    recipe_files,
    rel,
    sections,
    split_frontmatter,
    vocabulary_problems,
)

from kite_skills import kite_schemas


def test_vocabulary_copies_have_expected_shape():
    assert sorted(NEW_TOOLS) == sorted(MODES)
    assert len(LEGACY_TOOLS) == 23
    assert "login" in LEGACY_TOOLS and "get_orders" in LEGACY_TOOLS


@pytest.mark.parametrize("tool", sorted(MODES))
def test_mode_table_matches_the_mode_enum_the_server_declares(tool):
    schema = kite_schemas.tools("grouped")[tool].input_schema
    assert MODES[tool] == set(schema["properties"]["mode"]["enum"])


def test_write_modes_belong_to_writing_tools():
    for tool, modes in WRITE_MODES.items():
        assert NEW_TOOLS[tool]["writes"] is True
        assert modes <= MODES[tool]
    assert {n for n, t in NEW_TOOLS.items() if t["writes"]} == set(WRITE_MODES)


def test_legacy_equivalents_exist():
    for (tool, mode), legacy in LEGACY_EQUIVALENT.items():
        assert mode in MODES[tool]
        assert legacy in LEGACY_TOOLS
    assert LEGACY_WRITERS == {
        "place_order",
        "modify_order",
        "cancel_order",
        "place_gtt_order",
        "modify_gtt_order",
        "delete_gtt_order",
    }


@pytest.mark.parametrize(
    "snippet",
    [
        "Call `get_order_book` to list orders.",
        "Call `orders` mode `buy` with the symbol.",
        "Call `orders` (mode `buy`) with the symbol.",
        "Call `order` mode `list`.",
        "Read `portfolio` mode `funds`.",
        "Read `portfolio/funds`.",
        "Use `get_alerts` for the list.",
        "Use `place_gtt` to create it.",
        "Call `market` mode\n  `candles` for history.",
        "Call `orders` mode list without backticks.",
    ],
)
def test_checker_catches_bad_names(snippet):
    assert vocabulary_problems(snippet), snippet


@pytest.mark.parametrize(
    "snippet",
    [
        "Call `orders` mode `list` (legacy `get_orders`).",
        "Call `market` mode `search` with `search_mode` `get_by_isin` and `verbosity` `full`.",
        "Call `alerts` mode `get` with `uuids` `[]`, then `gtt` (mode `list`).",
        "Read `portfolio/holdings`, `tools/list` and `order_id`.",
        "```\n`get_not_a_tool` inside a code block is a template\n```",
    ],
)
def test_checker_accepts_good_names(snippet):
    assert vocabulary_problems(snippet) == []


def test_approval_checker_catches_missing_stop():
    # The old layout: the stop came after the step that makes the call.
    after = (
        "1. Read `orders` mode `list`.\n2. Call `orders` mode `place` with\n   `tag`.\n\n"
        "**Stop for approval.** Wait.\n\n3. Verify.\n"
    )
    assert approval_problems(after) == [
        "line 2: write step not preceded by '**Stop for approval.**'"
    ]
    legacy = "1. Call `cancel_order` with `order_id`.\n\nThen verify.\n"
    assert approval_problems(legacy)
    no_recheck = "1. Summarise.\n\n**Stop for approval.** Wait.\n\n2. Call `orders` mode `place`.\n"
    assert "no re-check" in approval_problems(no_recheck)[0]
    good = (
        "1. Summarise.\n\n**Stop for approval.** Wait.\n\n"
        "2. Re-check; if anything changed, a new summary and a new approval.\n"
        "3. Call `orders` mode `place`.\n4. Verify.\n"
    )
    assert approval_problems(good) == []
    two_writes = good + "5. Call `orders` mode `cancel`.\n"
    assert approval_problems(two_writes) == [
        "line 8: write step not preceded by '**Stop for approval.**'"
    ]


@pytest.mark.parametrize("path", markdown_files(), ids=rel)
def test_catalog_names_only_known_tools(path):
    assert vocabulary_problems(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_check_first_names_both_vocabularies(path):
    body = split_frontmatter(path.read_text(encoding="utf-8")).body
    check = sections(body)["Check first"]
    pairs = mode_pairs(check)
    assert pairs, "Check first names no grouped tool + mode"
    assert legacy_mentions(check), "Check first names no legacy tool"
    missing = sorted(
        {LEGACY_EQUIVALENT[p] for p in pairs if p in LEGACY_EQUIVALENT} - legacy_mentions(check)
    )
    assert missing == [], f"legacy names missing from Check first: {missing}"


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_every_tool_in_steps_is_listed_in_check_first(path):
    body = split_frontmatter(path.read_text(encoding="utf-8")).body
    listed = set(mode_pairs(sections(body)["Check first"]))
    used = {p for p in mode_pairs(sections(body)["Steps"]) if p[0] != CALC}  # this server's
    assert sorted(used - listed) == []


def test_catalog_root_is_the_package():
    assert (catalog_root() / "index.md").is_file()
