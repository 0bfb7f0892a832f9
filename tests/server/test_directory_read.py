"""``resources/directory/read`` (SEP-2640, ``directoryRead: true``) over the server's stdio wire
(in process), driven by the SDK's own client in both eras, with and without advertising the
extension."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from kite_skills import catalog

from .harness import MODERN, SKILLS_EXTENSION, Target, custom_request, sdk_client

pytestmark = pytest.mark.anyio

METHOD = "resources/directory/read"
CACHE = {"resultType": "complete", "ttlMs": 300000, "cacheScope": "public"}
COMBOS = [
    pytest.param(mode, skills, id=f"{mode}-{'skills' if skills else 'plain'}")
    for mode in ("legacy", "auto")
    for skills in (False, True)
]


async def read_dir(client: Client, uri: Any, cursor: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {} if uri is None else {"uri": uri}
    if cursor is not None:
        params["cursor"] = cursor
    return await custom_request(client, METHOD, params)


async def walk(client: Client, root: str) -> tuple[list[str], dict[str, list[str]]]:
    """Every file reached from ``root``, and each directory's children as listed."""
    files: list[str] = []
    listings: dict[str, list[str]] = {}
    queue = [root]
    while queue:
        uri = queue.pop(0)
        page = await read_dir(client, uri)
        assert "nextCursor" not in page  # the shipped directories fit on one page
        listings[uri] = [child["uri"] for child in page["resources"]]
        for child in page["resources"]:
            if child["mimeType"] == "inode/directory":
                queue.append(child["uri"])
            else:
                files.append(child["uri"])
    return sorted(files), listings


@pytest.mark.parametrize(("mode", "skills"), COMBOS)
async def test_walk_of_the_shipped_catalog_equals_every_manifest(
    target: Target, shiv_root: Path, db: Path, mode: str, skills: bool
) -> None:
    loaded = catalog.load()
    async with sdk_client(target, shiv_root, db, mode=mode, skills=skills) as client:  # type: ignore[arg-type]
        assert client.server_capabilities.extensions == {SKILLS_EXTENSION: {"directoryRead": True}}
        modern = client.protocol_version == MODERN
        listed = await custom_request(client, "skills/list", {})
        shown: list[str] = []
        reached: set[str] = set()
        for skill in listed["skills"]:
            root = skill["uri"].removesuffix("/SKILL.md")
            files, listings = await walk(client, root)
            assert files == sorted(r["uri"] for r in skill["resources"]), root
            reached.update(listings)
            for uri, children in listings.items():
                shown.append(uri)
                shown += [f"  {child}" for child in children]
        assert reached == set(loaded.directories)
        # each page is exactly the library's page, with the list-result envelope
        for uri in loaded.directories:
            page = await read_dir(client, uri)
            assert {k: page[k] for k in CACHE} == CACHE
            if modern:
                assert page["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "kite-skills"
            body = {k: v for k, v in page.items() if k not in CACHE and k != "_meta"}
            assert body == json.loads(json.dumps(loaded.directory(uri).to_dict()))
        print(f"\ndirectory walk ({client.protocol_version}):\n" + "\n".join(shown))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_directory_children_carry_resource_metadata(
    target: Target, shiv_root: Path, db: Path, mode: str
) -> None:
    async with sdk_client(target, shiv_root, db, mode=mode) as client:  # type: ignore[arg-type]
        listed = {r.uri: r for r in (await client.list_resources()).resources}
        page = await read_dir(client, "skill://daily-review/")  # one trailing slash is fine
        for child in page["resources"]:
            assert not child["uri"].endswith("/")
            if child["mimeType"] == "inode/directory":
                assert set(child) == {"uri", "name", "mimeType"}
                assert child["uri"] not in listed  # directories are not in resources/list
                continue
            resource = listed[child["uri"]]
            assert child["name"] == resource.name
            assert child["size"] == resource.size
            assert child.get("description") == resource.description
            assert child["mimeType"] == resource.mime_type == "text/markdown"


REFUSALS: list[tuple[dict[str, Any], Any, str]] = [
    ({}, None, "needs 'uri'"),
    ({"uri": 7}, 7, "'uri' must be a string"),
    ({"uri": "skill://orders/SKILL.md"}, "skill://orders/SKILL.md", "is a file, not a directory"),
    ({"uri": "skill://nope"}, "skill://nope", "no directory at skill://nope"),
    ({"uri": "skill://"}, "skill://", "outside every skill"),
    ({"uri": "skill://index.md"}, "skill://index.md", "outside every skill"),
    ({"uri": "skill://orders/../holdings"}, "skill://orders/../holdings", "'..'"),
    ({"uri": "skill://orders/./x"}, "skill://orders/./x", "'.'"),
    ({"uri": "skill://daily-review%2Ftemplates"}, "skill://daily-review%2Ftemplates", "%2F"),
    ({"uri": "user-skill://x"}, "user-skill://x", "not a skill:// URI"),
]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_refusals_are_invalid_params_with_the_uri(
    target: Target, shiv_root: Path, db: Path, mode: str
) -> None:
    async with sdk_client(target, shiv_root, db, mode=mode) as client:  # type: ignore[arg-type]
        for params, uri, words in REFUSALS:
            with pytest.raises(MCPError) as info:
                await custom_request(client, METHOD, params)
            assert info.value.code == -32602, params
            assert words in info.value.error.message, (params, info.value.error.message)
            assert info.value.error.data == {"uri": uri}, params
        for cursor in ("not-issued", 3):
            with pytest.raises(MCPError) as info:
                await read_dir(client, "skill://orders", cursor)
            assert info.value.code == -32602
            assert info.value.error.data == {"uri": "skill://orders", "cursor": cursor}
        # an empty cursor is the first page, as for skills/list
        first = await read_dir(client, "skill://orders")
        assert await read_dir(client, "skill://orders", "") == first
        # directories are not readable resources
        for uri in ("skill://orders", "skill://daily-review/templates"):
            with pytest.raises(MCPError) as info:
                await client.read_resource(uri)
            assert info.value.code == -32602
            assert info.value.error.data == {"uri": uri}
