"""One line never ends the server (issue 24), in process over the real stdio wire code on OS
pipes: a lone-surrogate escape in a request's id, method or params, and
``notifications/cancelled`` with a requestId no request can have, in both protocol eras,
before or after ``initialize``. Each gets an error reply (``id: null`` where the id is
unusable) or is ignored, and the next request is answered. Errors name the actual problem."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kite_skills.store import Store

from .test_rules_in_process import INITIALIZED, initialize, modern, request, session

pytestmark = pytest.mark.anyio

ERAS = ["legacy-before-initialize", "legacy-after-initialize", "modern"]


def opening(era: str) -> list[Any]:
    if era == "legacy-after-initialize":
        return [initialize("init", {}), INITIALIZED]
    if era == "modern":
        return [modern("first", "tools/list", {}, {}, "agent-m")]
    return []


def probe(era: str) -> dict[str, Any]:
    """A request every era answers with a result."""
    if era == "modern":
        return modern("probe", "tools/list", {}, {}, "agent-m")
    return request("probe", "ping")


def line(text: str) -> bytes:
    """A raw line: ``text`` is JSON written by hand (``\\ud800`` stays an escape)."""
    return text.encode()


def _served(replies: dict[Any, dict[str, Any]]) -> None:
    assert "result" in replies["probe"], replies["probe"]  # the next request is answered


SURROGATE_ID = [
    line('{"jsonrpc": "2.0", "id": "x\\ud800", "method": "ping"}'),
    line('{"jsonrpc": "2.0", "id": "\\udfff", "method": "tools/list", "params": {}}'),
    line('{"jsonrpc": "2.0", "id": "ok\\ude00\\ud83d", "method": "no/such"}'),
]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("hostile", SURROGATE_ID, ids=["ping", "tools-list", "reversed-pair"])
async def test_a_lone_surrogate_in_the_id_is_answered_with_id_null(
    store: Store, era: str, hostile: bytes
) -> None:
    replies = await session(store, [*opening(era), hostile, probe(era)])
    _served(replies)
    nulls = [r for k, r in replies.items() if isinstance(k, tuple) and k[0] == "null"]
    assert len(nulls) == 1, replies
    error = nulls[0]["error"]
    assert error["code"] == -32600, error
    assert "lone surrogate" in error["message"] and "'id'" in error["message"], error
    assert "\\ud" in error["message"] or "\\ud" in json.dumps(error), error


@pytest.mark.parametrize("era", ERAS)
async def test_a_lone_surrogate_in_the_method_is_answered_by_id(store: Store, era: str) -> None:
    hostile = line('{"jsonrpc": "2.0", "id": "m1", "method": "tools/list\\ud800", "params": {}}')
    replies = await session(store, [*opening(era), hostile, probe(era)])
    _served(replies)
    error = replies["m1"]["error"]
    assert error["code"] == -32600, error
    assert "lone surrogate" in error["message"] and "'method'" in error["message"], error


@pytest.mark.parametrize("era", ERAS)
async def test_a_lone_surrogate_in_a_notification_method_ends_nothing(
    store: Store, era: str
) -> None:
    hostile = line('{"jsonrpc": "2.0", "method": "notifications/\\ud800"}')
    replies = await session(store, [*opening(era), hostile, probe(era)])
    _served(replies)


PARAMS = [
    (
        "tools/call",
        '{"name": "help", "arguments": {"key": "/orders\\ud800"}}',
        "params.arguments.key",
    ),
    ("tools/call", '{"name": "x\\udc00"}', "params.name"),
    ("resources/read", '{"uri": "user-skill://a\\ud800"}', "params.uri"),
    ("tools/list", '{"_meta": {"k": ["ok", "\\ud800"]}}', "params._meta.k[1]"),
    ("tools/list", '{"cursor\\ud800": "x"}', "a key in params"),
]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("method", "params", "where"), PARAMS, ids=[w for _, _, w in PARAMS])
async def test_a_lone_surrogate_in_params_is_named_not_taken_for_a_bad_jsonrpc(
    store: Store, era: str, method: str, params: str, where: str
) -> None:
    hostile = line(f'{{"jsonrpc": "2.0", "id": 5, "method": "{method}", "params": {params}}}')
    replies = await session(store, [*opening(era), hostile, probe(era)])
    _served(replies)
    error = replies[5]["error"]
    assert error["code"] == -32602, error
    assert "'jsonrpc'" not in error["message"], error
    assert "lone surrogate" in error["message"] and where in error["message"], error


CANCELLED_IDS = [{}, {"a": 1}, [], [1, 2], None, True, 1.5, "x\\ud800"]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("request_id", CANCELLED_IDS, ids=repr)
async def test_a_cancel_for_an_impossible_request_id_is_ignored(
    store: Store, era: str, request_id: Any
) -> None:
    value = json.dumps(request_id) if not isinstance(request_id, str) else f'"{request_id}"'
    hostile = line(
        '{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": '
        + value
        + "}}"
    )
    after = (
        modern("after", "tools/list", {}, {}, "agent-m")
        if era == "modern"
        else request("after", "ping")
    )
    replies = await session(store, [*opening(era), hostile, probe(era), after])
    _served(replies)
    assert "result" in replies["after"], replies["after"]


async def test_initialize_without_a_protocol_version_names_it(store: Store) -> None:
    hostile = request(
        "i", "initialize", {"capabilities": {}, "clientInfo": {"name": "a", "version": "1"}}
    )
    replies = await session(store, [hostile, request("probe", "ping")])
    _served(replies)
    error = replies["i"]["error"]
    assert error["code"] == -32602, error
    assert "protocolVersion" in error["message"], error
    assert error["data"], error  # not the SDK's empty data
    assert "protocolVersion" in json.dumps(error["data"]), error


@pytest.mark.parametrize(
    "params",
    [{"notifications": 5}, {"notifications": {"resourceSubscriptions": "user-skill://a"}}, {}],
    ids=["number", "uris-not-a-list", "missing"],
)
async def test_bad_subscriptions_listen_params_name_the_field(
    store: Store, params: dict[str, Any]
) -> None:
    replies = await session(
        store,
        [modern("listen", "subscriptions/listen", params, {}, "agent-m"), probe("modern")],
    )
    _served(replies)
    error = replies["listen"]["error"]
    assert error["code"] == -32602, error
    assert error["data"], error
    assert "notifications" in error["message"], error


@pytest.mark.parametrize("era", ["legacy-after-initialize", "modern"])
async def test_a_bad_tool_call_names_the_field(store: Store, era: str) -> None:
    params = {"name": ["help"]}
    bad = (
        modern(7, "tools/call", params, {}, "agent-m")
        if era == "modern"
        else request(7, "tools/call", params)
    )
    replies = await session(store, [*opening(era), bad, probe(era)])
    _served(replies)
    error = replies[7]["error"]
    assert error["code"] == -32602 and "name" in error["message"] and error["data"], error


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"jsonrpc": "1.0", "id": 3, "method": "ping"}', "'jsonrpc' must be \"2.0\""),
        ('{"id": 3, "method": "ping"}', "'jsonrpc' must be \"2.0\""),
        (
            '{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": [1]}',
            "'params' must be an object",
        ),
        ('{"jsonrpc": "2.0", "id": 3, "method": 12}', "'method' must be a string"),
    ],
    ids=["version", "no-version", "params-array", "method-number"],
)
async def test_an_invalid_message_is_told_what_is_wrong(
    store: Store, text: str, problem: str
) -> None:
    replies = await session(store, [line(text), request("probe", "ping")])
    _served(replies)
    error = replies[3]["error"]
    assert error["code"] == -32600 and problem in error["message"], error
