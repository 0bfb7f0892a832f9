"""The server over its stdio wire (in process), driven by the SDK's own client in both eras,
with and without advertising the Skills extension (issue 3, behaviours 1-7)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, types
from mcp.shared.exceptions import MCPError

from kite_skills import catalog

from .harness import MODERN, ROOT, SKILLS_EXTENSION, TOOLS, Target, custom_request, sdk_client

pytestmark = pytest.mark.anyio

CATALOG_DIR = ROOT / "skills_catalog"
CACHE = {"resultType": "complete", "ttlMs": 300000, "cacheScope": "public"}
ERAS = [("legacy", "2025-11-25"), ("auto", MODERN)]
COMBOS = [
    pytest.param(mode, version, skills, id=f"{mode}-{'skills' if skills else 'plain'}")
    for mode, version in ERAS
    for skills in (False, True)
]


def catalog_files() -> dict[str, bytes]:
    """Every skill file in the repository's catalog, by URI (index.md is no resource)."""
    return {
        "skill://" + p.relative_to(CATALOG_DIR).as_posix(): p.read_bytes()
        for p in sorted(CATALOG_DIR.rglob("*.md"))
        if p.parent != CATALOG_DIR
    }


def skill_uris() -> list[str]:
    return sorted(u for u in catalog_files() if u.endswith("/SKILL.md"))


async def expect_error(awaitable: Any, code: int, *words: str) -> MCPError:
    with pytest.raises(MCPError) as info:
        await awaitable
    assert info.value.code == code, info.value
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    return info.value


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


@pytest.mark.parametrize(("mode", "version", "skills"), COMBOS)
async def test_negotiation(
    target: Target, shiv_root: Path, db: Path, mode: str, version: str, skills: bool
) -> None:
    async with sdk_client(target, shiv_root, db, mode=mode, skills=skills) as client:  # type: ignore[arg-type]
        # 1. the era: legacy initialize, or server/discover at 2026-07-28
        assert client.protocol_version == version
        assert client.server_info is not None and client.server_info.name == "kite-skills"
        instructions = client.instructions or ""
        assert "skills/list" in instructions and "help" in instructions
        assert "approval" in instructions
        # 2. capabilities: resources and the Skills extension, in both eras
        caps = client.server_capabilities
        assert caps.extensions == {SKILLS_EXTENSION: {"directoryRead": True}}
        assert caps.resources is not None
        assert caps.resources.subscribe and caps.resources.list_changed
        # 4. help is listed iff the client did not advertise the extension
        names = [t.name for t in (await client.list_tools()).tools]
        assert ("help" in names) is (not skills)
        assert TOOLS - {"help"} <= set(names)
        result = await client.call_tool("help", {"key": "/orders"})
        if skills:
            assert result.is_error
            message = text_of(result)
            assert "skills/list" in message and "skills/get" in message
            assert "resources/read" in message
        else:
            assert not result.is_error
            assert result.structured_content is not None
            assert result.structured_content["key"] == "/orders"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_help_tool(target: Target, shiv_root: Path, db: Path, mode: str) -> None:
    loaded = catalog.load()
    async with sdk_client(target, shiv_root, db, mode=mode) as client:  # type: ignore[arg-type]
        (tool,) = [t for t in (await client.list_tools()).tools if t.name == "help"]
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.idempotent_hint is True
        assert tool.annotations.open_world_hint is False
        assert tool.annotations.destructive_hint is False
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert tool.input_schema["properties"]["key"]["type"] == "string"
        assert "key" not in tool.input_schema.get("required", [])

        for key in (None, "/", "/orders", "/orders/", "/orders/reconcile"):
            arguments = {} if key is None else {"key": key}
            result = await client.call_tool("help", arguments)
            assert not result.is_error, text_of(result)
            page = loaded.help(key)
            assert result.structured_content == page.to_dict()
            assert text_of(result) == page.to_markdown()

        # 3. invalid input and unknown keys: tool errors with guidance, never protocol errors
        for bad, words in [
            ({"key": 5}, ["key", "string"]),
            ({"key": {"a": 1}}, ["key", "string"]),
            ({"key": "/" + "x" * 1024}, ["1025 bytes", "1024"]),
            ({"key": "/orders/unknown"}, ["/orders/unknown", "Nearest page: /orders"]),
            ({"key": "/ORDERS"}, ["/ORDERS"]),
            ({"key": "/orders", "other": 1}, ["other"]),
        ]:
            result = await client.call_tool("help", bad)
            assert result.is_error, bad
            message = text_of(result)
            for word in words:
                assert word in message, (bad, message)
            assert "Traceback" not in message
        # the unknown-key guidance lists the order recipes
        result = await client.call_tool("help", {"key": "/orders/unknown"})
        assert "/orders/reconcile" in text_of(result)

        # exactly 1024 bytes is within the limit: looked up (unknown), not refused as too long
        key = "/" + "é" * 511 + "x"  # 1 + 1022 + 1 bytes
        assert len(key.encode()) == 1024
        result = await client.call_tool("help", {"key": key})
        assert result.is_error
        assert "no help page at" in text_of(result)
        assert "bytes" not in text_of(result).split("\n")[0]


@pytest.mark.parametrize(("mode", "version", "skills"), COMBOS)
async def test_skills_extension(
    target: Target, shiv_root: Path, db: Path, mode: str, version: str, skills: bool
) -> None:
    files = catalog_files()
    async with sdk_client(target, shiv_root, db, mode=mode, skills=skills) as client:  # type: ignore[arg-type]
        listing = await custom_request(client, "skills/list", {})
        again = await custom_request(client, "skills/list", {})
        assert listing == again  # deterministic
        for field, value in CACHE.items():
            assert listing[field] == value, field
        assert "nextCursor" not in listing
        uris = [s["uri"] for s in listing["skills"]]
        assert uris == sorted(uris) == skill_uris()
        assert (await custom_request(client, "skills/list", {"cursor": ""}))["skills"] == (
            listing["skills"]
        )
        await expect_error(
            custom_request(client, "skills/list", {"cursor": "abc"}), -32602, "cursor"
        )

        for entry in listing["skills"]:
            got = await custom_request(client, "skills/get", {"uri": entry["uri"]})
            assert got["skill"] == entry
            for field, value in CACHE.items():
                assert got[field] == value, field
            # the manifest: every file of the skill once, digest and size of the raw bytes
            directory = entry["uri"].removesuffix("SKILL.md")
            manifest = {r["uri"]: r for r in entry["resources"]}
            assert len(manifest) == len(entry["resources"])
            assert sorted(manifest) == sorted(u for u in files if u.startswith(directory))
            assert entry["uri"] in manifest
            for uri, item in manifest.items():
                read = await client.read_resource(uri)
                (content,) = read.contents
                assert isinstance(content, types.TextResourceContents)
                raw = content.text.encode("utf-8")
                assert raw == files[uri]
                assert item["size"] == len(raw)
                assert item["digest"] == "sha256:" + hashlib.sha256(raw).hexdigest()
            assert entry["frontmatter"]["name"] == directory.rstrip("/").rsplit("/", 1)[-1]

        await expect_error(
            custom_request(client, "skills/get", {"uri": "skill://nope/SKILL.md"}),
            -32602,
            "skill://nope/SKILL.md",
            "no skill is served there",
        )
        await expect_error(
            custom_request(client, "skills/get", {"uri": "skill://orders/prepare.md"}),
            -32602,
            "skill://orders/prepare.md",
            "not a SKILL.md",
        )
        await expect_error(custom_request(client, "skills/get", {}), -32602, "needs 'uri'")
        await expect_error(
            custom_request(client, "skills/get", {"uri": 7}), -32602, "'uri' must be a string"
        )


@pytest.mark.parametrize(("mode", "version", "skills"), COMBOS)
async def test_resources(
    target: Target, shiv_root: Path, db: Path, mode: str, version: str, skills: bool
) -> None:
    files = catalog_files()
    loaded = {r.uri: r for r in catalog.load().resources()}
    async with sdk_client(target, shiv_root, db, mode=mode, skills=skills) as client:  # type: ignore[arg-type]
        listed = {r.uri: r for r in (await client.list_resources()).resources}
        assert set(files) <= set(listed)
        assert "skill://index.md" not in listed
        for uri in files:
            resource = listed[uri]
            assert resource.mime_type == "text/markdown"
            assert resource.name == loaded[uri].name and resource.name
            assert resource.description == loaded[uri].description
            if uri.endswith("/SKILL.md"):
                assert resource.name == uri.split("/")[-2]  # the frontmatter name
                assert resource.description  # from frontmatter
            assert resource.size == len(files[uri])
        for uri, raw in files.items():
            (content,) = (await client.read_resource(uri)).contents
            assert isinstance(content, types.TextResourceContents)
            assert content.uri == uri and content.mime_type == "text/markdown"
            assert content.text.encode("utf-8") == raw, uri
        for uri in ("skill://nope/SKILL.md", "skill://index.md", "skill://orders/", "file:///etc"):
            await expect_error(client.read_resource(uri), -32602, uri)
        assert (await client.list_resource_templates()).resource_templates == []


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_excluded_tools(target: Target, shiv_root: Path, db: Path, mode: str) -> None:
    env = {"EXCLUDED_TOOLS": " help , skillSave,"}
    async with sdk_client(target, shiv_root, db, mode=mode, env=env) as client:  # type: ignore[arg-type]
        await check_excluded(client)


async def check_excluded(client: Client) -> None:
    names = {t.name for t in (await client.list_tools()).tools}
    assert names == {"calc", "skills", "skillRead", "skillUnpublish", "skillPublish"}
    for name in ("help", "skillSave"):
        await expect_error(client.call_tool(name, {}), -32602, name)
    # never the resources or the extension
    assert client.server_capabilities.extensions == {SKILLS_EXTENSION: {"directoryRead": True}}
    assert client.server_capabilities.resources is not None
    listing = await custom_request(client, "skills/list", {})
    assert [s["uri"] for s in listing["skills"]] == skill_uris()
    got = await custom_request(client, "skills/get", {"uri": "skill://orders/SKILL.md"})
    assert got["skill"]["uri"] == "skill://orders/SKILL.md"
    (content,) = (await client.read_resource("skill://orders/reconcile.md")).contents
    assert isinstance(content, types.TextResourceContents)
    assert content.text.encode() == catalog_files()["skill://orders/reconcile.md"]
    assert any(
        r.uri == "skill://orders/SKILL.md" for r in (await client.list_resources()).resources
    )
    # the remaining tools still work
    assert not (await client.call_tool("skills", {})).is_error
