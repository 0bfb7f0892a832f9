"""The tool schemas per generation: transcribed from the Kite MCP server's Go sources (each
tool names its repository, commit and path), served as they are, each with a handler; and
the content tests' tool vocabulary names exactly the sandbox's tools and parameters."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kite_skills.sandbox import handlers, schemas
from tests.content.content_helpers import LEGACY_TOOLS, MODES, NEW_TOOLS, PAGINATED_MODES

REFERENCE = Path("/work/shared/reference/kite-mcp")  # the extraction the files were made from
REFERENCE_FILES = {
    "grouped": "tools-grouped.json",
    "legacy": "tools-legacy.json",
    "legacy-oldest": "tools-legacy-oldest.json",
}
COMMITS = {  # the commits each generation was read at (reference generations.json)
    "grouped": {
        "a51b84d99af64412a99b95124e411e9d07ece50a",
        "d1c5e22fe24b4c8368bf98f741f32439dc1b79d2",
        "b629a9c783513bced058b2d54c23df1f255b1f27",
        "60976dd4bbe7483d5e5850d82ec66932df105552",
    },
    "legacy": {"847fe98b40caa1888bf775c25dd5ba8cf5bb2c2d"},
    "legacy-oldest": {"dcf2dc410d579b5ee69681144b4063a29e225658"},
}
REGISTRATION_ORDER = {
    "grouped": ["portfolio", "orders", "gtt", "market", "alerts", "mutual_funds", "session"],
    "legacy-oldest": [
        "login", "get_profile", "get_margins", "get_holdings", "get_positions", "get_trades",
        "get_orders", "get_order_history", "get_order_trades", "get_gtts", "get_mf_holdings",
        "get_quotes", "search_instruments", "get_historical_data", "get_ltp", "get_ohlc",
        "place_order", "modify_order", "cancel_order", "place_gtt_order", "modify_gtt_order",
        "delete_gtt_order",
    ],
}  # fmt: skip
REGISTRATION_ORDER["legacy"] = [*REGISTRATION_ORDER["legacy-oldest"]]
REGISTRATION_ORDER["legacy"].insert(16, "alerts")


SOURCE = re.compile(
    r"(?P<repository>[\w.-]+/kite-mcp-server)@(?P<commit>[0-9a-f]{40}):mcp/\w+\.go:\d+"
)


def tools(generation: str) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in schemas.load(generation)}


def props(tool: dict[str, Any]) -> dict[str, Any]:
    return dict(tool["inputSchema"].get("properties", {}))


@pytest.mark.parametrize("generation", schemas.GENERATIONS)
def test_each_tool_names_the_go_source_it_was_transcribed_from(generation: str) -> None:
    for tool in schemas.load(generation):
        source = SOURCE.fullmatch(tool["source"])
        assert source, (tool["name"], tool["source"])
        assert source["commit"] in COMMITS[generation], tool["name"]
        assert tool["inputSchema"]["type"] == "object"


@pytest.mark.parametrize("generation", schemas.GENERATIONS)
def test_tools_are_served_in_the_real_servers_registration_order(generation: str) -> None:
    assert [t["name"] for t in schemas.load(generation)] == REGISTRATION_ORDER[generation]


@pytest.mark.parametrize("generation", schemas.GENERATIONS)
def test_every_tool_has_a_handler_and_every_handler_a_tool(generation: str) -> None:
    served = handlers.generation(generation, lambda: None)  # type: ignore[arg-type,return-value]
    assert set(served.handlers) == set(tools(generation))


@pytest.mark.parametrize("generation", schemas.GENERATIONS)
def test_schemas_match_the_reference_extraction(generation: str) -> None:
    """Where the reference is at hand (the project's shared material), the files carry its
    schemas unchanged and its sources."""
    path = REFERENCE / REFERENCE_FILES[generation]
    if not path.is_file():
        pytest.skip(f"{path} is not on this machine")
    reference = json.loads(path.read_text(encoding="utf-8"))
    ours = schemas.load(generation)
    assert [t["name"] for t in ours] == [t["name"] for t in reference]
    for mine, theirs in zip(ours, reference, strict=True):
        assert mine["inputSchema"] == theirs["inputSchema"], mine["name"]
        assert mine["description"] == theirs["description"], mine["name"]
        assert mine.get("annotations") == theirs.get("annotations"), mine["name"]
        assert mine["source"] == theirs["source"], mine["name"]


def test_the_oldest_generation_lacks_what_came_later() -> None:
    oldest = tools("legacy-oldest")
    assert set(props(oldest["search_instruments"])) == {"query", "filter_on", "from", "limit"}
    assert "type" not in props(oldest["get_holdings"])
    assert "market_protection" not in props(oldest["place_order"])
    assert "alerts" not in oldest
    # mcp-go's DefaultString("1") on a number property (generations.json wire note)
    assert props(oldest["place_order"])["quantity"]["default"] == "1"
    assert oldest["place_order"]["annotations"]["destructiveHint"] is True


def test_the_legacy_generation_has_the_later_parameters() -> None:
    legacy = tools("legacy")
    assert {"mode", "verbosity", "query", "isin"} <= set(props(legacy["search_instruments"]))
    assert "type" in props(legacy["get_holdings"])
    assert "market_protection" in props(legacy["place_order"])
    assert "variety" in legacy["place_order"]["inputSchema"]["required"]
    assert "annotations" not in legacy["place_order"]


def test_grouped_tools_have_the_modes_the_recipes_use() -> None:
    grouped = tools("grouped")
    for name, modes in MODES.items():
        assert set(props(grouped[name])["mode"]["enum"]) == modes, name
    place = grouped["orders"]["inputSchema"]
    assert place["required"] == ["mode"]  # variety is optional: it defaults to regular
    assert "search_mode" in props(grouped["market"])
    for tool, mode in PAGINATED_MODES:
        assert {"from", "limit"} <= set(props(grouped[tool])), (tool, mode)


@pytest.mark.parametrize(
    ("vocabulary", "generation"), [(NEW_TOOLS, "grouped"), (LEGACY_TOOLS, "legacy")]
)
def test_the_content_vocabulary_is_the_sandbox_vocabulary(
    vocabulary: dict[str, Any], generation: str
) -> None:
    """Every tool and parameter the recipes' vocabulary check knows exists in the sandbox,
    and the sandbox has no tool or parameter that check does not know."""
    served = tools(generation)
    assert set(vocabulary) == set(served)
    for name, tool in vocabulary.items():
        assert set(tool["params"]) == set(props(served[name])), name
