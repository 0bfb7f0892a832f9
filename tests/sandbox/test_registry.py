"""The sandbox registers its tools in the kit's registry (``Sandbox.tools``) and nothing more:
``tools/list``, the dispatch of ``tools/call`` and ``EXCLUDED_TOOLS`` are derived from it, in
every generation, over the real SDK client in process. These tests iterate the registry, so a
tool is covered the moment it is registered; its listing stays the upstream's (schema,
description, annotations, alphabetical order) and the journal keeps what the client sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from kite_skills.sandbox import handlers, journal, schemas, sim
from kite_skills.sandbox.server import Sandbox, build_server, unknown_tool

from .sandbox_harness import text_of

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def sandbox(generation: str, path: Path, excluded: frozenset[str] = frozenset()) -> Sandbox:
    simulation = sim.Simulation(sim.load_scenario("default"))
    clock = [simulation.now]
    tools = handlers.generation(generation, lambda: clock[0])
    return Sandbox(simulation, lambda: clock[0], tools, journal.Journal(path), excluded=excluded)


def calls(path: Path) -> list[dict[str, Any]]:
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [e for e in entries if e["kind"] == "call"]


@pytest.mark.parametrize("generation", schemas.GENERATIONS)
async def test_tools_list_is_the_registry_and_the_upstreams_listing(
    tmp_path: Path, generation: str
) -> None:
    box = sandbox(generation, tmp_path / "j.jsonl")
    upstream = {t["name"]: t for t in schemas.load(generation)}
    assert box.tools.names() == sorted(upstream)  # every upstream tool, alphabetical
    async with Client(build_server(box), mode="legacy") as client:
        listed = (await client.list_tools()).tools
    assert [t.name for t in listed] == box.tools.names()
    for tool in listed:
        recorded = upstream[tool.name]
        assert tool.input_schema == recorded["inputSchema"], tool.name
        assert tool.description == recorded["description"], tool.name
        annotations = (
            tool.annotations.model_dump(by_alias=True, exclude_none=True)
            if (tool.annotations)
            else None
        )
        assert annotations == recorded.get("annotations"), tool.name


@pytest.mark.parametrize("generation", schemas.GENERATIONS)
async def test_every_registered_tool_is_dispatched_and_journalled(
    tmp_path: Path, generation: str
) -> None:
    path = tmp_path / "j.jsonl"
    box = sandbox(generation, path)
    async with Client(build_server(box), mode="legacy") as client:
        for name in box.tools.names():
            result = await client.call_tool(name, {})
            assert not text_of(result).startswith(("unknown tool", "tool '")), name
    assert [c["tool"] for c in calls(path)] == box.tools.names()
    assert all(c["arguments"] == {} for c in calls(path))


async def test_a_call_without_arguments_is_journalled_as_the_client_sent_it(
    tmp_path: Path,
) -> None:
    """No arguments at all are journalled as null, not as the ``{}`` the dispatch hands the
    handler; an empty object as ``{}``."""
    path = tmp_path / "j.jsonl"
    box = sandbox("legacy", path)
    async with Client(build_server(box), mode="legacy") as client:
        none = await client.call_tool("get_profile")
        empty = await client.call_tool("get_profile", {})
    assert text_of(none) == text_of(empty)
    assert [c["arguments"] for c in calls(path)] == [None, {}]


async def test_excluded_tools_leave_the_registry_and_are_unknown_tools(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    box = sandbox("legacy-oldest", path, excluded=frozenset({"get_ltp", "login", "nope"}))
    assert box.unknown_excluded == ["nope"]
    assert "get_ltp" not in box.tools and "get_ohlc" in box.tools
    async with Client(build_server(box), mode="legacy") as client:
        names = [t.name for t in (await client.list_tools()).tools]
        upstream = sorted(t["name"] for t in schemas.load("legacy-oldest"))
        assert names == [n for n in upstream if n not in {"get_ltp", "login"}]
        with pytest.raises(Exception, match="tool 'get_ltp' not found: tool not found"):
            await client.call_tool("get_ltp", {"instruments": ["NSE:INFY"]})
    (entry,) = calls(path)
    assert entry["tool"] == "get_ltp" and entry["is_error"]
    assert entry["result"] == unknown_tool("get_ltp", "legacy-oldest")
    assert entry["arguments"] == {"instruments": ["NSE:INFY"]}  # its parameters still by value
