"""The server's own log lines as ``notifications/message`` (issue 39 §5), over the stdio wire
(in process): ``logging/setLevel`` on the handshake, the request's ``_meta`` log level on
2026-07-28, nothing below the level or without one, and never a skill's body.

The handshake checks are those of the official conformance suite's ``logging-set-level``,
``logging-capability-advertisement`` and ``logging-invalid-level`` scenarios, and of
``per-request-loglevel``'s invalid level (src/scenarios/server/{utilities,logging,
per-request-loglevel}.ts in modelcontextprotocol/conformance); the suite itself does not run
here."""

from __future__ import annotations

import json
import logging
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, types
from mcp_types import LOG_LEVEL_META_KEY, LoggingLevel

from kite_skills import invocation
from kite_skills.store import Store, human

from .harness import LEGACY, RawPeer, Target, custom_request, sdk_client

pytestmark = pytest.mark.anyio

ERAS = ["legacy", "auto"]  # the SDK client's "auto" speaks 2026-07-28 to this server
BODY_MARK = "body-only-words-7f3a"  # written in skill bodies, never in a name or description


def _import(db: Path, *names: str, body: str = "Steps.") -> None:
    with Store.open(db) as store:
        human.import_skills(
            store, [(n, f"About {n}", f"# {n}\n\n{body}\n") for n in names], via="cli", who="pat"
        )


def _spoil(db: Path, name: str) -> None:
    """Another tool writes the skill's description as bytes that are not UTF-8: the store
    leaves it out of the next listing with one warning (once per skill and server)."""
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "UPDATE skills SET description = CAST(? AS TEXT) WHERE name = ?", (b"\xff", name)
        )


class Received:
    """The client's logging callback: each notifications/message it was sent."""

    def __init__(self) -> None:
        self.messages: list[types.LoggingMessageNotificationParams] = []
        self.arrived = anyio.Event()

    async def __call__(self, params: types.LoggingMessageNotificationParams) -> None:
        self.messages.append(params)
        self.arrived.set()

    def take(self) -> list[tuple[str, str]]:
        taken = [(m.level, str(m.data)) for m in self.messages]
        self.messages.clear()
        self.arrived = anyio.Event()
        return taken


async def _list_skills(client: Client, era: str, level: LoggingLevel | None) -> None:
    """The ``skills`` tool, asking for the server's lines at ``level``: a request's own
    ``_meta`` on 2026-07-28, ``logging/setLevel`` before it on the handshake."""
    if era == "legacy":
        if level is not None:
            assert await custom_request(client, "logging/setLevel", {"level": level}) == {}
        result = await client.call_tool("skills", {})
    else:
        meta: Any = {LOG_LEVEL_META_KEY: level} if level is not None else None
        result = await client.call_tool("skills", {}, meta=meta)
    assert not result.is_error, result


@pytest.mark.parametrize("era", ERAS)
async def test_lines_at_or_above_the_level_reach_the_client_before_the_reply(
    target: Target, shiv_root: Path, db: Path, era: str
) -> None:
    _import(db, "good", "never-asked", "above", "at")
    received = Received()
    async with sdk_client(target, shiv_root, db, mode=era, logging_callback=received) as client:  # type: ignore[arg-type]
        assert client.session.protocol_version == (LEGACY if era == "legacy" else "2026-07-28")
        # no level asked for: the warning stays on stderr
        _spoil(db, "never-asked")
        await _list_skills(client, era, None)
        assert received.take() == []
        # a warning one step below the level asked for: nothing
        _spoil(db, "above")
        await _list_skills(client, era, "error")
        assert received.take() == []
        # exactly at the level: the line, on the wire before the reply
        _spoil(db, "at")
        await _list_skills(client, era, "warning")
        assert received.take() == [
            (
                "warning",
                "skill 'at' has text that is not valid UTF-8 (in its description) — it was "
                "written by another tool, not kite-skills; a person can delete it with "
                f"'{invocation.current().command} skills delete at' or rewrite it with sqlite3; "
                "it is left out of listings and search",  # the command as started (issue 40)
            )
        ]


async def test_the_handshake_declares_logging_and_set_level_answers_an_empty_object(
    target: Target, shiv_root: Path, db: Path
) -> None:
    """conformance: logging-capability-advertisement, logging-set-level."""
    async with sdk_client(target, shiv_root, db, mode="legacy") as client:
        assert client.server_capabilities.logging == types.LoggingCapability()
        for level in ("debug", "info", "notice", "warning", "error", "critical", "alert"):
            assert await custom_request(client, "logging/setLevel", {"level": level}) == {}
        assert await custom_request(client, "logging/setLevel", {"level": "emergency"}) == {}


def test_set_level_on_the_raw_wire(raw: RawPeer) -> None:
    """What the SDK client would refuse to send (conformance: logging-invalid-level), and the
    result as bytes: an empty object, nothing else."""
    assert raw.initialize({})["result"]["capabilities"]["logging"] == {}
    assert raw.request("logging/setLevel", {"level": "info"}) == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {},
    }
    for level in ("banana", "INFO", None, 3):
        reply = raw.request("logging/setLevel", {"level": level})
        assert reply["error"]["code"] == -32602, reply
        assert "params.level" in reply["error"]["message"], reply
    assert raw.request("logging/setLevel", {})["error"]["code"] == -32602
    code, stderr = raw.close()
    assert code == 0 and "Traceback" not in stderr, stderr


def test_2026_has_no_set_level_and_refuses_an_unknown_level(raw: RawPeer) -> None:
    """conformance: the removed method is -32601; per-request-loglevel: an unknown level is
    -32602, on a spec method and on the Skills extension's alike."""
    discovered = raw.modern("server/discover")["result"]
    assert discovered["capabilities"]["logging"] == {}
    reply = raw.modern("logging/setLevel", {"level": "info"})
    assert reply["error"]["code"] == -32601, reply
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    for method, params in [("tools/call", {"name": "help", "arguments": {}}), ("skills/list", {})]:
        for level in ("banana", "Warning", 4, None, ["debug"]):
            reply = raw.request(
                method, {**params, "_meta": {**envelope, LOG_LEVEL_META_KEY: level}}
            )
            assert reply["error"]["code"] == -32602, (method, level, reply)
            assert "params._meta.io.modelcontextprotocol/logLevel" in reply["error"]["message"]
        reply = raw.request(method, {**params, "_meta": {**envelope, LOG_LEVEL_META_KEY: "debug"}})
        assert "result" in reply, reply
    assert not raw.seen  # nothing logged by those: no notification either
    code, stderr = raw.close()
    assert code == 0 and "Traceback" not in stderr, stderr


async def test_the_change_poller_logs_to_a_handshake_session(
    target: Target, shiv_root: Path, db: Path
) -> None:
    """A line no request logged (the poller finds the store deleted) reaches the session
    that set a level."""
    _import(db, "first")
    received = Received()
    async with sdk_client(
        target, shiv_root, db, mode="legacy", logging_callback=received
    ) as client:
        assert await custom_request(client, "logging/setLevel", {"level": "warning"}) == {}
        for leftover in db.parent.glob(db.name + "*"):
            leftover.unlink()
        with anyio.fail_after(60):  # a guard against a hang, not a measure
            await received.arrived.wait()
    (level, text), *_ = received.take()
    assert level == "warning"
    assert f"the skill store {db} was deleted or moved away while kite-skills had it open" in text


@pytest.mark.parametrize("era", ERAS)
async def test_no_line_quotes_a_skill_body(
    target: Target, shiv_root: Path, db: Path, era: str
) -> None:
    """At the most verbose level, through every path a body takes (import, read, resource,
    prompt, search, a revision, a refused save, an unreadable row), the client gets lines but
    never a body's words."""
    _import(db, "marked", "spoiled", body=f"Hold on: {BODY_MARK}.")
    received = Received()
    level: Any = "debug" if era == "auto" else None
    async with sdk_client(
        target,
        shiv_root,
        db,
        mode=era,
        logging_callback=received,
        log_level=level,  # type: ignore[arg-type]
    ) as client:
        if era == "legacy":
            assert await custom_request(client, "logging/setLevel", {"level": "debug"}) == {}
        _spoil(db, "spoiled")
        body = f"# Marked\n\nNew steps: {BODY_MARK}.\n"
        calls: list[tuple[str, dict[str, Any]]] = [
            ("skills", {}),
            ("skills", {"q": "marked"}),
            ("skillRead", {"name": "marked"}),
            ("skillSave", {"name": "marked", "description": "About marked", "body": body}),
            ("skillSave", {"name": "Not A Name", "description": "d", "body": body}),
            ("skillSave", {"name": "fresh", "description": "d", "body": body}),
            ("skillRead", {"name": "spoiled"}),
        ]
        for name, arguments in calls:
            await client.call_tool(name, arguments)
        read = await client.read_resource("user-skill://marked")
        assert BODY_MARK in json.dumps(read.model_dump(mode="json"))  # the body went out there
        await client.get_prompt("my-marked")
        await client.list_resources()
        received_now = received.take()
    assert any(level == "warning" and "'spoiled'" in text for level, text in received_now)
    assert any(level == "debug" for level, _ in received_now), received_now
    assert not [line for line in received_now if BODY_MARK in line[1]], received_now


def test_stdout_carries_only_json_rpc_while_the_server_logs(raw: RawPeer, db: Path) -> None:
    """At the most verbose level, every line on stdout is one JSON-RPC message, and a
    request's log lines come before its reply."""
    _import(db, "spoiled")
    raw.initialize({})
    assert raw.request("logging/setLevel", {"level": "debug"})["result"] == {}
    _spoil(db, "spoiled")
    assert raw.process.stdout is not None
    lines: list[bytes] = []
    for request_id, (name, arguments) in enumerate(
        [
            ("skills", {}),
            ("skillSave", {"name": "mine", "description": "Mine", "body": "# Mine\n"}),
            ("skills", {"q": '"unbalanced ( NEAR'}),
        ],
        start=100,
    ):
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "tools/call",
                "params": {"name": name, "arguments": arguments},
            }
        )
        while not lines or json.loads(lines[-1]).get("id") != request_id:
            lines.append(raw.process.stdout.readline())
    messages = []
    for line in lines:
        assert line.endswith(b"\n"), line
        message = json.loads(line)
        assert isinstance(message, dict) and message["jsonrpc"] == "2.0", line
        messages.append(message)
    kinds = [m.get("method", m.get("id")) for m in messages]
    assert kinds == [
        "notifications/message",  # the spoiled skill, left out of the listing
        100,
        "notifications/message",  # the save, at debug
        101,
        102,
    ], messages
    assert [m["params"]["level"] for m in messages if "method" in m] == ["warning", "debug"]
    code, stderr = raw.close()
    assert code == 0 and "Traceback" not in stderr, stderr


def test_a_process_logs_no_more_once_its_servers_end(
    target: Target, shiv_root: Path, db: Path
) -> None:
    """While a server serves, kite-skills' loggers pass every level (a client may ask for
    debug); once the last one ends, they are as before: the tests' other servers and the
    store's own tests see no debug records of theirs."""
    logger = logging.getLogger("kite_skills")
    before = (logger.level, list(logger.handlers))
    first, second = RawPeer(target, shiv_root, db), RawPeer(target, shiv_root, db)
    for peer in (first, second):
        peer.initialize({})
    assert logger.getEffectiveLevel() == logging.DEBUG
    assert first.close()[0] == 0
    assert logger.getEffectiveLevel() == logging.DEBUG  # the second still serves
    assert second.close()[0] == 0
    assert (logger.level, list(logger.handlers)) == before
