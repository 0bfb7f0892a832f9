"""Property, through the real handler: in any valid catalog, walking every directory from each
skill root with ``resources/directory/read`` reaches exactly the files of that skill's
``skills/list`` manifest (in-memory client, both eras; the zipapp walk is in
test_directory_read.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from mcp import Client

from kite_skills import catalog
from kite_skills.server.app import build_server
from kite_skills.server.user_skills import UserSkills
from kite_skills.store import AgentView, Store

from ..catalog.test_directory_walk import CATALOGS, write
from .harness import custom_request


async def walk(client: Client) -> None:
    listing = await custom_request(client, "skills/list", {})
    for skill in listing["skills"]:
        files, queue = [], [skill["uri"].removesuffix("/SKILL.md")]
        while queue:
            page = await custom_request(client, "resources/directory/read", {"uri": queue.pop()})
            for child in page["resources"]:
                if child["mimeType"] == "inode/directory":
                    queue.append(child["uri"])
                else:
                    files.append(child["uri"])
        assert sorted(files) == [r["uri"] for r in skill["resources"]]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(topics=CATALOGS)
def test_walk_through_the_server_equals_each_manifest(
    mode: str, topics: dict[str, dict[str, Any]]
) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary) / "catalog"
        root.mkdir()
        (root / "index.md").write_bytes(b"# Catalog\n")
        for name, node in topics.items():
            write(root / name, node)
        store = Store.open(Path(temporary) / "s.db")
        try:

            async def run() -> None:
                server = build_server(catalog.load(root), UserSkills(AgentView(store)))
                async with Client(server, mode=mode) as client:
                    await walk(client)

            anyio.run(run)
        finally:
            store.close()
