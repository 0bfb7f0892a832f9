"""Issue 39 §4: a person rejects an agent's new draft with a reason ("request changes"), and
the agent's next skillSave of that name is told it, once (in-process server, real store)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client, types

from kite_skills import catalog
from kite_skills.server.app import build_server
from kite_skills.server.user_skills import UserSkills
from kite_skills.store import AgentView, Store, human

pytestmark = pytest.mark.anyio

SAVE = {"name": "compare-funds", "description": "When comparing funds", "body": "# v1\n"}


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_the_next_save_of_a_rejected_draft_is_told_the_reason_once(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db") as store:
        server = build_server(catalog.load(), UserSkills(AgentView(store)))
        async with Client(server, mode="legacy") as client:
            first = await client.call_tool("skillSave", SAVE)
            assert "rejected" not in _text(first)
            human.reject_revision(
                store, "compare-funds", via="dashboard", who="pat", reason="Say which \u202e fund"
            )
            again = await client.call_tool("skillSave", {**SAVE, "body": "# v2\n"})
            text = _text(again)
            assert not again.is_error, text
            assert text.startswith("Note: a person rejected your draft of 'compare-funds' at ")
            assert "with this reason: 'Say which \\u202e fund'" in text  # quoted data, escaped
            assert "\u202e" not in text
            assert again.structured_content is not None
            told = again.structured_content["previous_rejected"]
            assert told["what"] == "draft" and told["reason"] == "Say which \\u202e fund"
            assert again.structured_content["outcome"] == "updated_draft"
            third = await client.call_tool("skillSave", {**SAVE, "body": "# v3\n"})
            assert "rejected" not in _text(third)  # told once
            assert third.structured_content is not None
            assert "previous_rejected" not in third.structured_content
            # still a draft: agents cannot read it until a person publishes it
            read = await client.call_tool("skillRead", {"name": "compare-funds"})
            assert read.is_error
