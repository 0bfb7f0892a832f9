"""Fast in-memory checks of the server (``Client(server)``, no subprocess): the tool table,
the tool filter, byte-exact CRLF reads, and unexpected exceptions becoming proper errors."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client, types
from mcp.client import advertise
from mcp.shared.exceptions import MCPError

from kite_skills import catalog
from kite_skills.catalog import Catalog
from kite_skills.server.app import INSTRUCTIONS, build_server, excluded_tools
from kite_skills.server.user_skills import UserSkills
from kite_skills.store import AgentView, Store

from .harness import ROOT, SKILLS_EXTENSION, TOOLS, custom_request

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["legacy", "auto"])
async def client(
    request: pytest.FixtureRequest, loaded: Catalog, store: Store
) -> AsyncIterator[Client]:
    server = build_server(loaded, UserSkills(AgentView(store)))
    async with Client(server, mode=request.param) as c:
        yield c


async def test_tool_table(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        schema = tool.input_schema
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object"
        assert schema.get("additionalProperties") is False, tool.name
        assert set(schema.get("required", [])) <= set(schema["properties"]), tool.name
        assert tool.description and tool.title, tool.name
        assert tool.annotations is not None and tool.annotations.open_world_hint is False
        if tool.output_schema is not None:
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
            assert set(tool.output_schema.get("required", [])) <= set(
                tool.output_schema["properties"]
            )
    assert tools["help"].output_schema is not None


async def test_help_output_matches_its_schema(client: Client, loaded: Catalog) -> None:
    (tool,) = [t for t in (await client.list_tools()).tools if t.name == "help"]
    assert tool.output_schema is not None
    for key in loaded.keys:
        result = await client.call_tool("help", {"key": key})
        assert not result.is_error, key
        jsonschema.validate(result.structured_content, tool.output_schema)
        assert result.structured_content == loaded.help(key).to_dict()


async def test_instructions(client: Client) -> None:
    assert client.instructions == INSTRUCTIONS
    sentences = [s for s in INSTRUCTIONS.split(". ") if s]
    assert len(sentences) == 4
    for word in ("skills/list", "help", "approval"):
        assert word in INSTRUCTIONS


async def test_instructions_send_an_agent_to_the_persons_own_skills_before_a_recipe(
    client: Client,
) -> None:
    text = client.instructions or ""
    assert "look for the person's own skills with the skills tool" in text
    assert text.index("skills tool") < text.index("skills/list")  # before the catalog


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_advertised_client_in_memory(loaded: Catalog, store: Store, mode: str) -> None:
    server = build_server(loaded, UserSkills(AgentView(store)))
    async with Client(server, mode=mode, extensions=[advertise(SKILLS_EXTENSION)]) as c:
        assert {t.name for t in (await c.list_tools()).tools} == TOOLS - {"help"}
        assert (await c.call_tool("help", {})).is_error
        assert c.server_capabilities.extensions == {SKILLS_EXTENSION: {"directoryRead": True}}


def test_excluded_tools() -> None:
    names, unknown = excluded_tools(" help ,\tskillSave,, nope ,", TOOLS)
    assert names == {"help", "skillSave", "nope"}
    assert unknown == ["nope"]
    assert excluded_tools(None, TOOLS) == (frozenset(), [])
    assert excluded_tools(" , ", TOOLS) == (frozenset(), [])


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_excluded_tools_in_memory(loaded: Catalog, store: Store, mode: str) -> None:
    server = build_server(
        loaded, UserSkills(AgentView(store)), frozenset({"skills", "skillPublish"})
    )
    async with Client(server, mode=mode) as c:
        assert {t.name for t in (await c.list_tools()).tools} == TOOLS - {"skills", "skillPublish"}
        for name in ("skills", "skillPublish"):
            with pytest.raises(MCPError) as info:
                await c.call_tool(name, {"name": "x"})
            assert info.value.code == -32602
        assert c.server_capabilities.extensions == {SKILLS_EXTENSION: {"directoryRead": True}}
        assert (await custom_request(c, "skills/list", {}))["skills"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_crlf_files_are_read_byte_exact(tmp_path: Path, store: Store, mode: str) -> None:
    root = tmp_path / "catalog"
    shutil.copytree(ROOT / "skills_catalog", root, ignore=shutil.ignore_patterns("*.py*"))
    crlf = root / "orders" / "reconcile.md"
    raw = crlf.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    crlf.write_bytes(raw)
    server = build_server(catalog.load(root), UserSkills(AgentView(store)))
    async with Client(server, mode=mode) as c:
        (content,) = (await c.read_resource("skill://orders/reconcile.md")).contents
        assert isinstance(content, types.TextResourceContents)
        assert content.text.encode("utf-8") == raw
        assert "\r\n" in content.text
        entry = (await custom_request(c, "skills/get", {"uri": "skill://orders/SKILL.md"}))["skill"]
        (item,) = [r for r in entry["resources"] if r["uri"] == "skill://orders/reconcile.md"]
        assert item == {
            "uri": "skill://orders/reconcile.md",
            "digest": "sha256:" + hashlib.sha256(raw).hexdigest(),
            "size": len(raw),
        }


def _boom(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("secret internals")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_unexpected_exceptions_become_proper_errors(
    loaded: Catalog, store: Store, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_skills = UserSkills(AgentView(store))
    server = build_server(loaded, user_skills)
    monkeypatch.setattr(Catalog, "skills", property(_boom))
    monkeypatch.setattr(Catalog, "skill", _boom)
    monkeypatch.setattr(Catalog, "read", _boom)
    monkeypatch.setattr(Catalog, "help", _boom)
    monkeypatch.setattr(Catalog, "resources", _boom)
    monkeypatch.setattr(store, "list_live", _boom)
    async with Client(server, mode=mode) as c:
        for request in (
            custom_request(c, "skills/list", {}),
            custom_request(c, "skills/get", {"uri": "skill://orders/SKILL.md"}),
            c.read_resource("skill://orders/SKILL.md"),
            c.list_resources(),
        ):
            with pytest.raises(MCPError) as info:
                await request
            assert info.value.code == -32603, info.value  # never the SDK's legacy code 0
            assert "secret internals" not in str(info.value)
            assert "internal error" in str(info.value)
        for name in ("help", "skills"):
            result = await c.call_tool(name, {})
            assert result.is_error, name
            (text,) = [x.text for x in result.content if isinstance(x, types.TextContent)]
            assert f"internal error in {name}" in text
            assert "secret internals" not in text
        # the server keeps serving
        assert {t.name for t in (await c.list_tools()).tools} == TOOLS
