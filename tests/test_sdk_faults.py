"""Minimal reproductions of the SDK faults the MCP kit works around (``mcp`` as pinned in
requirements/): each test runs the bare SDK piece (a lowlevel ``Server`` on the SDK's own
``stdio_server``, fed lines in process) and asserts the fault is still there. When an upgrade of
the SDK fixes one, its test fails: delete the workaround it names (and this test), as issue 40
asks. Upstream issues, where there is one, are named in each test and at each workaround."""

from __future__ import annotations

import json
import logging
import os
import warnings
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any, get_type_hints

import anyio
import pytest
from mcp import types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import INTERNAL_ERROR

pytestmark = pytest.mark.anyio

INIT: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
PING = {"jsonrpc": "2.0", "id": 99, "method": "ping"}
SKILLS = "io.modelcontextprotocol/skills"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool(name="t", input_schema={"type": "object"})])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "boom":
        raise RuntimeError("boom")
    if params.name == "unwritable":  # text JSON cannot carry a lone surrogate
        return types.CallToolResult(content=[types.TextContent(type="text", text="\ud800")])
    if params.name == "slow":
        await anyio.sleep(1)  # still at work when stdin ends right after the request
    return types.CallToolResult(content=[types.TextContent(type="text", text="done")])


async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=[], ttl_ms=300_000, cache_scope="public")


def bare_server() -> Server[Any]:
    server: Server[Any] = Server(
        "bare", on_list_tools=list_tools, on_call_tool=call_tool, on_list_prompts=list_prompts
    )
    server.extensions[SKILLS] = {}
    return server


async def exchange(
    *lines: dict[str, Any] | list[Any] | bytes, answers: int
) -> list[dict[str, Any]]:
    """What the bare SDK server answers to ``lines`` on its own stdio transport. stdin ends
    once ``answers`` replies are out (an earlier end would cancel the requests in flight), and
    the replies are read until the server stops."""
    text = "".join(
        (line.decode() if isinstance(line, bytes) else json.dumps(line)) + "\n" for line in lines
    )
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    replies: list[dict[str, Any]] = []
    ended = False

    def end_stdin() -> None:
        nonlocal ended
        if not ended:
            ended = True
            os.close(in_w)

    async def read_replies() -> None:
        async with anyio.wrap_file(os.fdopen(out_r, encoding="utf-8")) as out:
            async for line in out:
                replies.append(json.loads(line))
                if len(replies) == answers:
                    end_stdin()

    server = bare_server()
    options = server.create_initialization_options(NotificationOptions())
    stdin = anyio.wrap_file(os.fdopen(in_r, encoding="utf-8", errors="replace"))
    stdout = anyio.wrap_file(os.fdopen(out_w, "w", encoding="utf-8"))
    try:
        with anyio.fail_after(30):  # a bound on a hang, not a measure of speed
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(read_replies)
                os.write(in_w, text.encode())
                try:
                    async with stdio_server(stdin, stdout) as (r, w):
                        try:
                            await server.run(r, w, options)
                        finally:
                            end_stdin()  # else its reader, a thread, waits on the pipe
                finally:
                    await stdout.aclose()
    finally:
        end_stdin()
        await stdin.aclose()
    return replies


def by_id(replies: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    return {reply.get("id"): reply for reply in replies}


# ----- the stdio wire (kite_skills/mcpkit/stdio.py) -------------------------------------------


async def test_a_line_that_is_not_json_gets_no_answer() -> None:
    """python-sdk#2751: no -32700, so a client waits for an answer that never comes."""
    replies = await exchange(INIT, INITIALIZED, b"not json", PING, answers=2)
    assert [r.get("id") for r in replies] == [0, 99]


async def test_a_request_whose_id_is_not_a_string_or_an_integer_gets_no_answer() -> None:
    """python-sdk#2057: taken for a notification, never answered."""
    bad = [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in (None, 1.5, True, [1])]
    replies = await exchange(INIT, INITIALIZED, *bad, PING, answers=2)
    assert [r.get("id") for r in replies] == [0, 99]


async def test_a_batch_gets_no_answer() -> None:
    """MCP dropped JSON-RPC batches; the SDK drops the line without a word."""
    replies = await exchange(INIT, INITIALIZED, [dict(PING, id=5)], PING, answers=2)
    assert [r.get("id") for r in replies] == [0, 99]


async def test_a_request_holding_a_lone_surrogate_gets_no_answer() -> None:
    call = (
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call",'
        b'"params":{"name":"t","arguments":{"k":"\\ud800"}}}'
    )
    replies = await exchange(INIT, INITIALIZED, call, PING, answers=2)
    assert [r.get("id") for r in replies] == [0, 99]


async def test_an_error_echoes_the_input_whole() -> None:
    replies = by_id(
        await exchange(
            INIT, INITIALIZED, {"jsonrpc": "2.0", "id": 5, "method": "x" * 5000}, answers=2
        )
    )
    assert replies[5]["error"]["data"] == "x" * 5000


async def test_stdin_eof_cancels_the_requests_in_flight() -> None:
    """python-sdk#2678: work done (a save committed) goes unsaid; the client reads an error."""
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "slow"}}
    replies = by_id(await exchange(INIT, INITIALIZED, call, answers=1))
    assert replies[5]["error"]["message"] == "Connection closed"


async def test_a_reply_that_cannot_be_written_as_json_ends_the_transport() -> None:
    """The SDK's writer raises, and the whole server stops: the request and every later one
    go unanswered."""
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "unwritable"}}
    with pytest.raises(ExceptionGroup):
        await exchange(INIT, INITIALIZED, call, PING, answers=3)


# ----- the session rules and errors (kite_skills/mcpkit/session.py) ---------------------------


async def test_a_second_initialize_is_answered_and_negotiated_again() -> None:
    """python-sdk#2605."""
    again = dict(INIT, id=1, params={**INIT["params"], "protocolVersion": "2025-06-18"})
    replies = by_id(await exchange(INIT, INITIALIZED, again, answers=2))
    assert replies[1]["result"]["protocolVersion"] == "2025-06-18"


async def test_a_request_before_initialize_is_refused_naming_nothing() -> None:
    replies = by_id(await exchange({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, answers=1))
    assert replies[5]["error"] == {
        "code": -32602,
        "message": "Invalid request parameters",
        "data": "",
    }


async def test_params_that_do_not_fit_are_refused_naming_no_field() -> None:
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": 5}}
    replies = by_id(await exchange(INIT, INITIALIZED, call, answers=2))
    assert replies[5]["error"] == {
        "code": -32602,
        "message": "Invalid request parameters",
        "data": "",
    }


async def test_an_unexpected_exception_is_answered_with_code_0() -> None:
    """Not a JSON-RPC error code (the SDK's own TODO L58, mcp/shared/jsonrpc_dispatcher.py)."""
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "boom"}}
    replies = by_id(await exchange(INIT, INITIALIZED, call, answers=2))
    assert replies[5]["error"] == {"code": 0, "message": "boom"}


# ----- the main server's legacy fix-ups (kite_skills/server/) ---------------------------------


async def test_a_legacy_initialize_loses_the_extensions_capability() -> None:
    """modelcontextprotocol/modelcontextprotocol#3364 (its SDK audit reproduces the Python
    loss): the 2025-11-25 sieve drops ``capabilities.extensions``."""
    replies = by_id(await exchange(INIT, answers=1))
    assert "extensions" not in replies[0]["result"]["capabilities"]


async def test_a_legacy_prompts_list_loses_its_cache_fields() -> None:
    replies = by_id(
        await exchange(
            INIT, INITIALIZED, {"jsonrpc": "2.0", "id": 5, "method": "prompts/list"}, answers=2
        )
    )
    assert replies[5]["result"] == {"prompts": []}


def test_on_set_logging_level_warns_at_every_start() -> None:
    async def set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        return types.EmptyResult()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Server("bare", on_set_logging_level=set_level)
    assert [w.category for w in caught] == [MCPDeprecationWarning]


async def test_each_malformed_notification_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": {"an": "object"}, "progress": 1},
    }
    with caplog.at_level(logging.WARNING, logger="mcp.server.runner"):
        await exchange(INIT, INITIALIZED, progress, progress, progress, PING, answers=2)
    dropped = [r for r in caplog.records if str(r.msg).startswith("dropped ")]
    assert len(dropped) == 3


async def test_a_listen_stream_past_the_bound_is_an_internal_error() -> None:
    """kite_skills/server/changes.py BoundedListen answers -32602 naming the limit instead."""
    handler = ListenHandler(InMemorySubscriptionBus(), max_subscriptions=0)
    ctx = SimpleNamespace(request_id=1)  # all the handler reads before its bound
    with pytest.raises(MCPError) as refused:
        await handler(ctx, types.SubscriptionsListenRequestParams(notifications={}))  # type: ignore[arg-type]
    assert refused.value.error.code == INTERNAL_ERROR


def test_on_call_tool_is_typed_for_the_model_alone() -> None:
    """A kept wire form (a dict) is a valid handler result (``HandlerResult``), but the typed
    ``on_call_tool=`` does not take a handler that returns one (kite_skills/mcpkit/wire.py)."""
    hint = get_type_hints(Server.__init__)["on_call_tool"]
    handler: Callable[..., Awaitable[Any]] = next(a for a in hint.__args__ if a is not type(None))
    returned = handler.__args__[-1].__args__[0]  # type: ignore[attr-defined]
    assert dict not in getattr(returned, "__args__", (returned,))
