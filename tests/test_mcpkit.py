"""The MCP kit's public surface (kite_skills.mcpkit), as a server on it uses it: the tool
registry from which tools/list, the dispatch and EXCLUDED_TOOLS are derived; a throwaway tool
added to each server's registry (the main server's and the sandbox's) is listed and dispatched
with no other change; the tool docs checked against both registries."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Final

import pytest
from mcp import Client, types

from kite_skills import catalog, mcpkit
from kite_skills.mcpkit import Context, ToolRegistry, ToolResult, ToolSpec, parse_excluded
from kite_skills.sandbox import handlers, sim
from kite_skills.sandbox.server import Sandbox
from kite_skills.sandbox.server import build_server as sandbox_server
from kite_skills.server import app
from kite_skills.server.user_skills import UserSkills

from .server.harness import TOOLS

ROOT = Path(__file__).resolve().parents[1]


def grouped_sandbox() -> Sandbox:
    """A sandbox of the default generation, on the default scenario, without a journal."""
    simulation = sim.Simulation(sim.load_scenario("default"))
    return Sandbox(
        simulation, lambda: simulation.now, handlers.grouped(lambda: simulation.now), None
    )


GROUPED: Final = grouped_sandbox().tools.names()
"""The sandbox's tools in its default generation (its registry)."""


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


@pytest.mark.parametrize("tool", GROUPED)
def test_every_registered_sandbox_tool_is_documented(tool: str) -> None:
    """The sandbox's default tools, as its registry has them, are named in docs/sandbox.md
    (their descriptions and schemas are the upstream's own, served from its registry)."""
    page = (ROOT / "docs" / "sandbox.md").read_text(encoding="utf-8")
    assert f"`{tool}`" in page, f"docs/sandbox.md does not name the sandbox tool {tool!r}"


# ----- adding a tool: its handler registered, nothing else touched ------------------------


def throwaway() -> ToolSpec:
    async def run(ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        return mcpkit.text_result(f"echo {arguments.get('word')}")

    schema = {"type": "object", "properties": {"word": {"type": "string"}}}
    return ToolSpec(types.Tool(name="zz_echo", description="throwaway", input_schema=schema), run)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_tool_added_to_the_main_servers_registry_is_listed_and_dispatched(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    registered = app.all_tools

    def with_throwaway(*args: Any) -> ToolRegistry:
        return ToolRegistry([*registered(*args), throwaway()])

    monkeypatch.setattr(app, "all_tools", with_throwaway)
    server = app.build_server(catalog.load(), UserSkills.without_store("not opened"))
    async with Client(server, mode="legacy") as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool("zz_echo", {"word": "hi"})
    assert list(listed) == sorted(TOOLS | {"zz_echo"})
    assert listed["zz_echo"].description == "throwaway"
    assert not result.is_error and result.content[0].text == "echo hi"  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_tool_added_to_the_sandboxs_registry_is_listed_and_dispatched() -> None:
    simulation = sim.Simulation(sim.load_scenario("default"))
    box = Sandbox(
        simulation, lambda: simulation.now, handlers.grouped(lambda: simulation.now), None
    )
    box.tools = ToolRegistry([*box.tools, throwaway()])
    async with Client(sandbox_server(box), mode="legacy") as client:
        listed = [t.name for t in (await client.list_tools()).tools]
        result = await client.call_tool("zz_echo", {"word": "hi"})
    assert listed == [*GROUPED, "zz_echo"]  # by name, as the upstream lists
    assert not result.is_error and result.content[0].text == "echo hi"  # type: ignore[union-attr]


def test_a_tools_listing_is_made_only_by_the_registry() -> None:
    """One owner of ``tools/list``: ``ToolRegistry.listing`` (the guard relays its upstream's
    listing, which no registry here holds). A server that builds a ``ListToolsResult`` of its
    own would list tools its dispatch does not know, or the other way round."""
    package = ROOT / "kite_skills"
    allowed = {"kite_skills/mcpkit/tools.py", "kite_skills/guard/server.py"}
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                called = node.func
                name = (
                    called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", "")
                )
                if name == "ListToolsResult":
                    found.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno}")
    strays = [f for f in found if f.rsplit(":", 1)[0] not in allowed]
    assert strays == [], f"{strays}: list a server's tools with ToolRegistry.listing"
