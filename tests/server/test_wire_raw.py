"""What the SDK client cannot send, as raw JSON lines to the server's stdio wire (in process):
`experimental` declarations, other extension ids, non-object values, settings-bearing objects,
per-request capability flips on one 2026-07-28 pipe, malformed lines, unknown methods."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kite_skills.server.changes import MAX_LISTEN_STREAMS

from .harness import MODERN, SKILLS_EXTENSION, TOOLS, RawPeer, Target

ADVERTISED = {"extensions": {SKILLS_EXTENSION: {}}}
WITH_SETTINGS = {"extensions": {SKILLS_EXTENSION: {"maxSkills": 10, "mode": ["a"]}}}
EXPERIMENTAL = {"experimental": {SKILLS_EXTENSION: {}}}
OTHER_ID = {"extensions": {"io.modelcontextprotocol/skills-v2": {}, "example.com/skills": {}}}
NON_OBJECT = {"extensions": {SKILLS_EXTENSION: True}}


def tool_names(reply: dict[str, Any]) -> list[str]:
    assert "result" in reply, reply
    return [t["name"] for t in reply["result"]["tools"]]


def call_help(peer: RawPeer, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"name": "help", "arguments": {"key": "/orders"}}
    if capabilities is None:
        reply = peer.request("tools/call", params)
    else:
        reply = peer.modern("tools/call", params, capabilities)
    assert "result" in reply, reply
    return reply["result"]


def closed_quietly(peer: RawPeer) -> None:
    code, stderr = peer.close()
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr


@pytest.mark.parametrize(
    ("capabilities", "keeps_help"),
    [
        pytest.param({}, True, id="none"),
        pytest.param(EXPERIMENTAL, True, id="experimental"),
        pytest.param(OTHER_ID, True, id="other-id"),
        pytest.param(ADVERTISED, False, id="advertised"),
        pytest.param(WITH_SETTINGS, False, id="settings"),
    ],
)
def test_legacy_decision_per_session(
    raw: RawPeer, capabilities: dict[str, Any], keeps_help: bool
) -> None:
    reply = raw.initialize(capabilities)
    result = reply["result"]
    assert result["protocolVersion"] == "2025-11-25"
    assert result["capabilities"]["extensions"] == {SKILLS_EXTENSION: {"directoryRead": True}}
    assert "resources" in result["capabilities"]
    assert "_meta" not in result
    # decided once from initialize: the same on every later request
    for _ in range(2):
        assert ("help" in tool_names(raw.request("tools/list"))) is keeps_help
    result = call_help(raw)
    if keeps_help:
        assert not result.get("isError"), result
        assert result["structuredContent"]["key"] == "/orders"
    else:
        assert result["isError"] is True
        assert "skills/list" in result["content"][0]["text"]
    # skills/* answer every client, advertised or not
    listing = raw.request("skills/list", {})["result"]
    assert listing["ttlMs"] == 300000 and listing["skills"]
    closed_quietly(raw)


def test_legacy_non_object_extension_value(raw: RawPeer) -> None:
    """The SDK's initialize validation refuses it (sdk-notes §3): never "advertised"."""
    reply = raw.request(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": NON_OBJECT,
            "clientInfo": {"name": "raw-peer", "version": "1.0"},
        },
    )
    assert reply["error"]["code"] == -32602, reply
    closed_quietly(raw)


def test_legacy_sessions_are_independent(target: Target, shiv_root: Path, tmp_path: Path) -> None:
    """One client never affects another: two processes, one advertised, side by side."""
    plain = RawPeer(target, shiv_root, tmp_path / "a.db")
    skilled = RawPeer(target, shiv_root, tmp_path / "b.db")
    try:
        skilled.initialize(ADVERTISED)
        plain.initialize({})
        assert "help" in tool_names(plain.request("tools/list"))
        assert "help" not in tool_names(skilled.request("tools/list"))
        assert "help" in tool_names(plain.request("tools/list"))
    finally:
        closed_quietly(plain)
        closed_quietly(skilled)


def test_modern_per_request_flips_on_one_pipe(raw: RawPeer) -> None:
    discover = raw.modern("server/discover", {}, {})["result"]
    assert MODERN in discover["supportedVersions"]
    assert discover["capabilities"]["extensions"] == {SKILLS_EXTENSION: {"directoryRead": True}}
    assert "resources" in discover["capabilities"]
    assert "skills/list" in discover["instructions"]

    sequence = [
        ({}, True),
        (ADVERTISED, False),
        ({}, True),
        (EXPERIMENTAL, True),
        (WITH_SETTINGS, False),
        (OTHER_ID, True),
        (ADVERTISED, False),
        ({"extensions": {}}, True),
    ]
    for capabilities, keeps_help in sequence:
        listed = tool_names(raw.modern("tools/list", {}, capabilities))
        assert ("help" in listed) is keeps_help, capabilities
        result = call_help(raw, capabilities)
        assert bool(result.get("isError")) is (not keeps_help), (capabilities, result)
        if not keeps_help:
            assert "skills/get" in result["content"][0]["text"]
        assert result["resultType"] == "complete"
        listing = raw.modern("skills/list", {}, capabilities)["result"]
        assert (listing["resultType"], listing["ttlMs"], listing["cacheScope"]) == (
            "complete",
            300000,
            "public",
        )

    # A non-object value is never "advertised". The SDK refuses spec methods whose
    # envelope carries it (-32602); custom methods still run without capabilities.
    reply = raw.modern("tools/list", {}, NON_OBJECT)
    assert reply.get("error", {}).get("code") == -32602 or "help" in tool_names(reply), reply
    assert raw.modern("skills/list", {}, NON_OBJECT)["result"]["skills"]
    # and the pipe still serves the next client request normally
    assert "help" in tool_names(raw.modern("tools/list", {}, {}))
    closed_quietly(raw)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_bad_lines_get_errors_and_the_server_keeps_serving(raw: RawPeer, era: str) -> None:
    def ask(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return raw.request(method, params) if era == "legacy" else raw.modern(method, params)

    if era == "legacy":
        raw.initialize({})
    for line, code in [
        (b"{not json", -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": ', -32700),
        (b"\xff\xfe garbage", -32700),
        (b'{"hello": "world"}', -32600),
        (b"[1, 2, 3]", -32600),
        (b'"just a string"', -32600),
    ]:
        raw.send_line(line)
        reply = raw.receive()
        assert reply["jsonrpc"] == "2.0"
        assert reply["id"] is None, (line, reply)
        assert reply["error"]["code"] == code, (line, reply)
        # still serving
        assert "help" in tool_names(ask("tools/list", {}))
    reply = ask("no/such/method", {})
    assert reply["error"]["code"] == -32601, reply
    reply = ask("tools/call", {"name": "nope", "arguments": {}})
    assert reply["error"]["code"] == -32602 and "nope" in reply["error"]["message"]
    assert ask("skills/list", {})["result"]["skills"]
    closed_quietly(raw)


def test_excluded_tools_unknown_name_warns_once(target: Target, shiv_root: Path, db: Path) -> None:
    peer = RawPeer(target, shiv_root, db, EXCLUDED_TOOLS=" help ,\tskillSave, noSuchTool ,")
    reply = peer.modern("tools/list", {}, {})
    assert set(tool_names(reply)) == TOOLS - {"help", "skillSave"}
    for name in ("help", "skillSave"):
        reply = peer.modern("tools/call", {"name": name, "arguments": {}}, {})
        assert reply["error"]["code"] == -32602, reply
    assert peer.modern("skills/list", {}, ADVERTISED)["result"]["skills"]
    read = peer.modern("resources/read", {"uri": "skill://orders/SKILL.md"}, {})
    assert read["result"]["contents"][0]["text"].startswith("---")
    code, stderr = peer.close()
    assert code == 0, stderr
    lines = [line for line in stderr.splitlines() if "user skills in" not in line]
    assert len(lines) == 1, stderr
    assert "noSuchTool" in lines[0] and "EXCLUDED_TOOLS" in lines[0]
    assert "skillSave" not in lines[0].split("(known")[0]


def test_listen_streams_past_the_limit_get_a_request_error_naming_it(raw: RawPeer) -> None:
    """Exactly MAX_LISTEN_STREAMS streams stay open; the next is a -32602 that names the
    limit (the SDK said -32603 internal error, issue 38); once one ends, a new one opens."""

    def listen(request_id: int) -> None:
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw-peer", "version": "1.0"},
        }
        params = {"notifications": {"resourcesListChanged": True}, "_meta": meta}
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "subscriptions/listen",
                **{"params": params},
            }
        )

    def acknowledged(count: int) -> set[int]:
        ids: set[int] = set()
        while len(ids) < count:
            message = raw.receive()
            assert message.get("method") == "notifications/subscriptions/acknowledged", message
            ids.add(message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"])
        return ids

    for request_id in range(1, MAX_LISTEN_STREAMS + 1):
        listen(request_id)
    assert acknowledged(MAX_LISTEN_STREAMS) == set(range(1, MAX_LISTEN_STREAMS + 1))
    listen(MAX_LISTEN_STREAMS + 1)
    reply = raw.receive()
    assert reply["id"] == MAX_LISTEN_STREAMS + 1, reply
    assert reply["error"]["code"] == -32602, reply
    assert reply["error"]["message"] == (
        "too many open subscriptions/listen streams: the limit is 1024 per connection; end "
        "one (cancel its request) before opening another"
    )
    assert reply["error"]["data"] == {"limit": MAX_LISTEN_STREAMS}
    raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    listen(MAX_LISTEN_STREAMS + 2)  # one ended: there is room for one more, and only one
    while (message := raw.receive()).get("id") == 1:
        pass  # the cancelled stream's end, if it sends one
    assert message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == (
        MAX_LISTEN_STREAMS + 2
    ), message
    listen(MAX_LISTEN_STREAMS + 3)
    assert raw.receive()["error"]["code"] == -32602
    # At EOF the server ends 1,024 streams, more than a pipe holds: read them as a client would,
    # else its writer waits on the full pipe and never ends.
    assert raw.process.stdin is not None and raw.process.stdout is not None
    raw.process.stdin.close()
    while raw.process.stdout.readline():
        pass
    closed_quietly(raw)
