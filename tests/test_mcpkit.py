"""The MCP kit's public surface (kite_skills.mcpkit), as a server on it uses it: the tool
registry from which tools/list, the dispatch and EXCLUDED_TOOLS are derived, and the tool docs
checked against the main server's registry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import types

from kite_skills import mcpkit
from kite_skills.mcpkit import Context, ToolRegistry, ToolResult, ToolSpec, parse_excluded

from .server.harness import TOOLS

ROOT = Path(__file__).resolve().parents[1]


def spec(name: str) -> ToolSpec:
    async def run(ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        return mcpkit.text_result(name)

    return ToolSpec(types.Tool(name=name, input_schema={"type": "object"}), run)


def test_a_name_is_registered_once() -> None:
    with pytest.raises(ValueError, match="two tools are named 'a'"):
        ToolRegistry([spec("a"), spec("b"), spec("a")])


def test_the_listing_is_by_name_and_leaves_out_what_is_hidden_or_excluded() -> None:
    tools = ToolRegistry([spec("b"), spec("a"), spec("c")])
    assert [t.name for t in tools.listing().tools] == ["a", "b", "c"]
    assert [t.name for t in tools.listing(hidden={"b"}).tools] == ["a", "c"]
    left = tools.excluding(parse_excluded(" c ,, nope"))
    assert left.names() == ["a", "b"] and "c" not in left and left.get("c") is None
    assert tools.names() == ["a", "b", "c"]  # excluding makes a new registry


def test_excluded_tools_are_read_as_the_kite_mcp_server_reads_them() -> None:
    assert parse_excluded(" help ,\tskillSave,, ,") == {"help", "skillSave"}
    assert parse_excluded(None) == frozenset() == parse_excluded("")


def test_the_public_names_are_importable() -> None:
    assert sorted(mcpkit.__all__) == sorted(n for n in mcpkit.__all__ if hasattr(mcpkit, n))


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_every_registered_tool_is_documented(tool: str) -> None:
    """The tool docs follow the registry: each tool is named in docs/protocol.md."""
    protocol = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    assert f"`{tool}`" in protocol, f"docs/protocol.md does not name the tool {tool!r}"
