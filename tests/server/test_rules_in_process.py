"""The server's session rules in process, over the real stdio wire code on OS pipes (no
zipapp, no subprocess): per-session and per-request negotiation, the audit's ``who``, one
``initialize`` per session, requests before it, invalid ids, drafts never served, and every
request answered at stdin EOF. The zipapp tests check the same rules end to end."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.lowlevel import NotificationOptions

from kite_skills import catalog
from kite_skills.mcpkit import stdio
from kite_skills.server.app import build_server
from kite_skills.server.user_skills import UserSkills
from kite_skills.store import AgentView, Store, agent, human

from .harness import LEGACY, MODERN, SKILLS_EXTENSION

pytestmark = pytest.mark.anyio

ADVERTISED = {"extensions": {SKILLS_EXTENSION: {}}}
LOADED = catalog.load()


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    try:
        stdio._write_all(fd, data)
    finally:
        os.close(fd)


async def session(store: Store | None, lines: list[Any]) -> dict[Any, dict[str, Any]]:
    """Write ``lines`` to a server on pipes, close its stdin, and return every message it
    wrote, keyed by id (notifications under ``("note", n)``)."""
    user_skills = (
        UserSkills(AgentView(store)) if store is not None else UserSkills.without_store("gone")
    )
    server = build_server(LOADED, user_skills)
    options = server.create_initialization_options(NotificationOptions(resources_changed=True))
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    payload = b"".join(
        (line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n" for line in lines
    )
    output: list[bytes] = []

    async def collect() -> None:
        output.append(await anyio.to_thread.run_sync(_read_all, out_read))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(collect)
            tasks.start_soon(anyio.to_thread.run_sync, _write_all, in_write, payload)
            interrupted = await stdio.serve(server, options, stdin_fd=in_read, stdout_fd=out_write)
    os.close(in_read)
    assert interrupted is False
    replies: dict[Any, dict[str, Any]] = {}
    for n, raw in enumerate(output[0].splitlines()):
        message = json.loads(raw)  # nothing but JSON on the wire
        key = message["id"] if "id" in message else ("note", n)
        assert key not in replies or key is None, f"two answers for id {key!r}"
        replies[key if key is not None else ("null", n)] = message
    return replies


def request(rid: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return message


def initialize(rid: Any, capabilities: dict[str, Any], name: str = "agent-a") -> dict[str, Any]:
    return request(
        rid,
        "initialize",
        {
            "protocolVersion": LEGACY,
            "capabilities": capabilities,
            "clientInfo": {"name": name, "version": "1.0"},
        },
    )


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def modern(rid: Any, method: str, params: dict[str, Any], caps: dict[str, Any], who: str) -> Any:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": who, "version": "2"},
    }
    return request(rid, method, {**params, "_meta": meta})


def save(rid: Any, name: str) -> dict[str, Any]:
    arguments = {"name": name, "description": f"About {name}", "body": f"# {name}\n"}
    return request(rid, "tools/call", {"name": "skillSave", "arguments": arguments})


def tools(reply: dict[str, Any]) -> set[str]:
    return {t["name"] for t in reply["result"]["tools"]}


@pytest.fixture
def store(tmp_path: Path) -> Any:
    opened = Store.open(tmp_path / "skills.db")
    yield opened
    opened.close()


@pytest.mark.parametrize("advertised", [False, True])
async def test_legacy_negotiation_is_per_session_and_the_first_initialize_stands(
    store: Store, advertised: bool
) -> None:
    first = ADVERTISED if advertised else {}
    other = {} if advertised else ADVERTISED
    replies = await session(
        store,
        [
            initialize(1, first),
            INITIALIZED,
            request(2, "tools/list"),
            initialize(3, other, name="impostor"),
            request(4, "tools/list"),
            save(5, "who-saved"),
            request(6, "tools/call", {"name": "help", "arguments": {}}),
        ],
    )
    assert replies[1]["result"]["capabilities"]["extensions"] == {
        SKILLS_EXTENSION: {"directoryRead": True}
    }
    assert ("help" in tools(replies[2])) is (not advertised)
    assert replies[3]["error"]["code"] == -32600 and "already" in replies[3]["error"]["message"]
    assert tools(replies[4]) == tools(replies[2])
    assert replies[6]["result"].get("isError", False) is advertised
    assert store.audit(name="who-saved")[0].who == "agent-a 1.0"


async def test_modern_negotiation_is_per_request_and_who_comes_from_the_envelope(
    store: Store,
) -> None:
    replies = await session(
        store,
        [
            modern(1, "tools/list", {}, ADVERTISED, "m-agent"),
            modern(2, "tools/list", {}, {}, "m-agent"),
            modern(3, "tools/call", {"name": "help", "arguments": {}}, ADVERTISED, "m-agent"),
            modern(4, "tools/call", {"name": "help", "arguments": {}}, {}, "m-agent"),
            modern(5, "tools/call", save(0, "modern-save")["params"], {}, "m-agent"),
            initialize(6, {}),
        ],
    )
    assert "help" not in tools(replies[1]) and "help" in tools(replies[2])
    assert replies[3]["result"]["isError"] is True and not replies[4]["result"].get("isError")
    assert replies[6]["error"]["code"] == -32022  # no handshake on a 2026-07-28 pipe
    assert store.audit(name="modern-save")[0].who == "m-agent 2"


async def test_requests_before_initialize_are_told_what_to_do(store: Store) -> None:
    replies = await session(
        store,
        [
            request(1, "tools/list"),
            request(2, "resources/read", {"uri": "skill://orders/SKILL.md"}),
            request(3, "ping"),
            request(4, "no/such/method"),
            initialize(5, {}),
            request(6, "tools/list"),
        ],
    )
    for rid in (1, 2):
        message = replies[rid]["error"]["message"]
        assert "initialize" in message and "_meta" in message, message
    assert replies[3]["result"] == {}
    assert replies[4]["error"]["code"] == -32601
    assert "help" in tools(replies[6])


async def test_invalid_ids_and_bad_lines_get_id_null(store: Store) -> None:
    bad_ids = [None, 1.5, {}, [], True, {"a": [1]}]
    lines: list[Any] = [initialize(1, {}), INITIALIZED]
    lines += [request(rid, "tools/list") for rid in bad_ids]
    lines += [b"{not json", b"[]", b'[{"jsonrpc": "2.0", "id": 7, "method": "ping"}]', b"   "]
    lines += [request("last", "ping")]
    replies = await session(store, lines)
    nulls = [m for k, m in replies.items() if isinstance(k, tuple) and k[0] == "null"]
    assert len(nulls) == len(bad_ids) + 2, nulls  # the blank line is no message at all
    assert all(m["error"]["code"] in (-32600, -32700) for m in nulls)
    assert replies[7]["error"]["code"] == -32600  # a batch: each request in it answered
    assert replies["last"]["result"] == {}


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_drafts_are_never_served(store: Store, era: str) -> None:
    agent.save(store, "secret-draft", "A draft nobody published", "# Do the thing\n", who="t")
    human.import_skills(store, [("shown", "Live one", "# Shown\n")], via="cli", who="p")
    asks = [
        ("tools/call", {"name": "skills", "arguments": {}}),
        ("tools/call", {"name": "skills", "arguments": {"q": "draft nobody"}}),
        ("tools/call", {"name": "skillRead", "arguments": {"name": "secret-draft"}}),
        ("resources/list", {}),
        ("resources/read", {"uri": "user-skill://secret-draft"}),
    ]
    if era == "legacy":
        lines: list[Any] = [initialize(0, {}), INITIALIZED]
        lines += [request(i + 1, m, p) for i, (m, p) in enumerate(asks)]
    else:
        lines = [modern(i + 1, m, p, {}, "m") for i, (m, p) in enumerate(asks)]
    replies = await session(store, lines)
    assert [s["name"] for s in replies[1]["result"]["structuredContent"]["skills"]] == ["shown"]
    assert replies[2]["result"]["structuredContent"]["skills"] == []
    assert replies[3]["result"]["isError"] is True
    assert "Do the thing" not in json.dumps(replies[3])
    uris = {r["uri"] for r in replies[4]["result"]["resources"]}
    assert "user-skill://shown" in uris and "user-skill://secret-draft" not in uris
    assert replies[5]["error"]["code"] == -32602


async def test_every_request_read_before_eof_is_answered(store: Store) -> None:
    lines: list[Any] = [initialize(1, {}), INITIALIZED]
    lines += [save(100 + i, f"eof-{i:02d}") for i in range(30)]
    replies = await session(store, lines)
    assert {k for k in replies if isinstance(k, int)} == {1} | set(range(100, 130))
    assert len(store.list_all()) == 30


async def test_an_unavailable_store_leaves_the_catalog_served() -> None:
    replies = await session(
        None,
        [
            initialize(1, {}),
            INITIALIZED,
            request(2, "tools/call", {"name": "help", "arguments": {"key": "/orders"}}),
            request(3, "tools/call", {"name": "skills", "arguments": {}}),
            request(4, "resources/list"),
        ],
    )
    assert replies[2]["result"]["structuredContent"]["key"] == "/orders"
    assert replies[3]["result"]["isError"] is True
    assert "gone" in replies[3]["result"]["content"][0]["text"]
    assert all(r["uri"].startswith("skill://") for r in replies[4]["result"]["resources"])
