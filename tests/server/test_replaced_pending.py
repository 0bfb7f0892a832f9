"""skillSave tells the agent when it replaced a revision no person has reviewed yet (in-memory
server, real store file)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, types

from kite_skills import catalog
from kite_skills.server.app import build_server
from kite_skills.server.user_skills import UserSkills
from kite_skills.store import AgentView, Store, agent, human

pytestmark = pytest.mark.anyio


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "s.db") as s:
        agent.save(s, "funds", "Funds", "# v1\n", who="bot")
        human.publish(s, "funds", rev=s.get("funds").revision, via="cli", who="pat")
        yield s


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_replaced_pending_and_the_replaced_text(store: Store) -> None:
    async with Client(
        build_server(catalog.load(), UserSkills(AgentView(store))), mode="legacy"
    ) as client:
        save = {"name": "funds", "description": "Funds v2", "body": "# v2\n"}
        first = await client.call_tool("skillSave", save)
        assert first.structured_content is not None
        assert first.structured_content["replaced_pending"] is False
        assert "replaced" not in first.structured_content
        assert "ask the person to open their kite-skills dashboard" in _text(first)
        proposed_at = store.get("funds").proposed.proposed_at  # type: ignore[union-attr]
        second = await client.call_tool("skillSave", {**save, "body": "# v3\n"})
        assert second.structured_content is not None
        assert second.structured_content["replaced_pending"] is True
        replaced = second.structured_content["replaced"]
        assert replaced["description"] == "Funds v2" and replaced["body"] == "# v2\n"
        assert replaced["proposed_at"] == proposed_at and replaced["proposed_by"]
        text = _text(second)
        assert "which no person had reviewed yet" in text and "# v2" in text
