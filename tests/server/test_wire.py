"""mcpkit/wire.py, the one kept-wire-form mechanism: ``wire()`` makes what the SDK sends for a
model, ``Kept`` keeps answers up to its limit, and the ``help`` tool keeps each key's answer
once (the one cache of help pages) while every call still counts as a read."""

from __future__ import annotations

import pytest
from mcp import Client, types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.runner import _dump_result

from kite_skills.catalog import Catalog
from kite_skills.mcpkit import text_result
from kite_skills.mcpkit.wire import Kept, ToolReply, WireJSON, serve, wire
from kite_skills.server.tools import UNKNOWN_KEYS_KEPT, HelpTool, help_tool

pytestmark = pytest.mark.anyio


def test_wire_is_what_the_sdk_makes_of_the_model(loaded: Catalog) -> None:
    page = loaded.help("/orders")
    models = [
        text_result(page.to_markdown(), page.to_dict()),
        types.CallToolResult(content=[types.TextContent(text="no")], is_error=True),
        types.ListPromptsResult(prompts=[], ttl_ms=60_000, cache_scope="private"),
        types.Resource.model_validate(loaded.resources()[0].to_dict()),
    ]
    for model in models:
        assert wire(model) == _dump_result(model)


def test_kept_keeps_up_to_its_limit() -> None:
    kept: Kept[str, WireJSON] = Kept(limit=2)
    answers = [kept.keep(key, wire(types.EmptyResult())) for key in ("a", "b", "c")]
    assert answers == [{}, {}, {}]  # the third is answered, not kept
    assert len(kept) == 2 and kept.get("a") == {} and kept.get("c") is None
    unbounded: Kept[int, str] = Kept()
    for n in range(1000):
        unbounded.keep(n, str(n))
    assert len(unbounded) == 1000


def test_help_answers_are_kept_once_per_key(loaded: Catalog) -> None:
    tool = HelpTool(loaded)
    first = tool.answer("/orders/prepare")
    assert tool.answer("/orders/prepare") is first  # worked out once
    assert first.recipe == "/orders/prepare"
    assert first.reply["structuredContent"] == loaded.help("/orders/prepare").to_dict()
    assert tool.answer("/orders/").reply == tool.answer("/orders").reply
    assert tool.answer("/orders").recipe is None  # a category: no read receipt
    for n in range(UNKNOWN_KEYS_KEPT):
        assert tool.answer(f"/nope-{n}").reply["isError"] is True
    assert tool.answer("/nope-0") is tool.answer("/nope-0")
    past = tool.answer("/order")  # the table of unknown keys is full: worked out each time
    assert "Did you mean /orders (Orders)?" in past.reply["content"][0]["text"]
    assert tool.answer("/order") is not past and tool.answer("/order") == past
    assert tool.answer("/holdings") is tool.answer("/holdings")  # pages are still kept
    too_long = tool.answer("/" + "x" * 2000)
    assert too_long.reply["isError"] is True and "1024" in too_long.reply["content"][0]["text"]


async def test_a_kept_recipe_page_still_counts_each_read(loaded: Catalog) -> None:
    """Over the SDK: the second and third calls are answered from the kept table, and each
    still tells ``on_recipe`` (the read receipts)."""
    told: list[str] = []
    spec = help_tool(loaded, lambda ctx, key: told.append(key))

    async def list_tools(ctx: ServerRequestContext, params: object) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[spec.tool])

    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> ToolReply:
        return await spec.run(ctx, dict(params.arguments or {}))

    server: Server[object] = Server("help-only", on_list_tools=list_tools)
    serve(server, "tools/call", types.CallToolRequestParams, call_tool)
    async with Client(server) as client:
        await client.list_tools()  # the client checks structured results against the schema
        results = [await client.call_tool("help", {"key": "/orders/prepare"}) for _ in range(3)]
        await client.call_tool("help", {"key": "/orders"})
    assert told == ["/orders/prepare"] * 3
    assert [r.structured_content for r in results] == [loaded.help("/orders/prepare").to_dict()] * 3
