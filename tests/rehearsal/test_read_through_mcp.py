"""The scripted agent reads its recipe the way a person's agent does: through a real MCP client
(the SDK's, over the server's stdio wire, in process) — the `help` tool in one rehearsal, the Skills
extension (`skills/get`, then the resource) in another, a prompt in a third — and then follows
that text, not the catalog files, against the sandbox."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import types

from ..server.harness import Target, custom_request, sdk_client
from .agent import in_process, recipe
from .scripts import exit_remainder, positions, reconcile
from .test_exit import SCENARIO as EXIT_GAP
from .test_reconcile import ATTEMPT, SCENARIO, TRUTH

pytestmark = pytest.mark.anyio


async def test_reconcile_read_with_help(target: Target, tmp_path: Path) -> None:
    async with sdk_client(target, tmp_path, tmp_path / "s.db", mode="auto") as client:
        page = await client.call_tool("help", {"key": "/orders/reconcile"})
    assert page.structured_content is not None
    text = page.structured_content["text"]
    agent = in_process(SCENARIO)
    (found,) = await anyio.to_thread.run_sync(
        lambda: reconcile(agent, recipe("orders/reconcile.md", text), ATTEMPT, "11:30:00")
    )
    assert found.lines == TRUTH and not agent.writes()


async def test_exit_read_through_the_skills_extension(target: Target, tmp_path: Path) -> None:
    async with sdk_client(target, tmp_path, tmp_path / "s.db", mode="auto", skills=True) as client:
        entry = await custom_request(client, "skills/get", {"uri": "skill://orders/SKILL.md"})
        uris = {r["uri"] for r in entry["skill"]["resources"]}
        assert {"skill://orders/exit.md", "skill://orders/modify-cancel.md"} <= uris
        texts = {}
        for name in ("exit", "modify-cancel"):
            (content,) = (await client.read_resource(f"skill://orders/{name}.md")).contents
            assert isinstance(content, types.TextResourceContents)
            texts[name] = content.text
    agent = in_process(EXIT_GAP)
    agent.wait(minutes=10)
    done = exit_remainder(
        agent, recipe("orders/exit.md", texts["exit"]),
        recipe("orders/modify-cancel.md", texts["modify-cancel"]), "NSE:INFY", 0.05,
    )  # fmt: skip
    assert done.modified.final["filled_quantity"] == 100 and done.net_after == -100
    assert [m.mode for m in agent.writes()] == ["modify"]


async def test_positions_read_as_a_prompt(target: Target, tmp_path: Path) -> None:
    async with sdk_client(target, tmp_path, tmp_path / "s.db", mode="legacy") as client:
        prompt = await client.get_prompt("holdings-positions", {})
    first = prompt.messages[0].content
    assert isinstance(first, types.EmbeddedResource)
    assert isinstance(first.resource, types.TextResourceContents)
    text = first.resource.text
    agent = in_process("positions-closed")
    books = positions(agent, recipe("holdings/positions.md", text), "11:20:00")
    assert books.total == 21526.5 and len(books.day) == 2 and len(books.net) == 3
