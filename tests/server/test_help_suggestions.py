"""The ``help`` tool hands an agent the catalog's "did you mean" and "pages that mention"
guidance (issue 22 §4), over the SDK's in-memory client: no zipapp needed."""

from __future__ import annotations

import pytest
from mcp import Client, types

from kite_skills import catalog
from kite_skills.server.app import build_server
from kite_skills.server.user_skills import UserSkills

pytestmark = pytest.mark.anyio


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_unknown_keys_get_suggestions() -> None:
    server = build_server(catalog.load(), UserSkills.without_store("no store in this test"))
    async with Client(server) as client:
        result = await client.call_tool("help", {"key": "/order"})
        assert result.is_error
        assert "Did you mean /orders (Orders)?" in text_of(result)
        result = await client.call_tool("help", {"key": "/funds"})
        assert result.is_error
        assert "Pages that mention 'funds':\n- /orders/funds-check" in text_of(result)
