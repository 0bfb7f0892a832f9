"""The guard's fast path for reads (kite_skills/mcpkit/relay.py): `kite-skills guard` and
`kite-skills sandbox` in real subprocesses on stdio. A read's reply is the sandbox's own
bytes, in both eras; errors, ids, the guard's timeout and a cancel behave as on the SDK's
way."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from ..sandbox.sandbox_harness import MODERN, env
from ..sandbox.sandbox_harness import command as sandbox_command
from .guard_harness import ORDER, client, guard_argv, journal, limits, over_sandbox, text_of

pytestmark = pytest.mark.anyio
LEGACY = "2025-11-25"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
READS: list[tuple[str, dict[str, Any]]] = [
    ("portfolio", {"mode": "profile"}),
    ("portfolio", {"mode": "holdings"}),
    ("portfolio", {"mode": "bogus"}),  # the sandbox's error result
    ("alerts", {"mode": "get"}),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Peer:
    """JSON lines to a server's stdin; its stdout's lines kept as the bytes it wrote."""

    def __init__(self, argv: list[str], home: Path, era: str) -> None:
        self.era = era
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env(home)
        )
        if era == "legacy":
            self.send(1, "initialize", {"protocolVersion": LEGACY, "capabilities": {},
                                        "clientInfo": {"name": "raw", "version": "1"}})  # fmt: skip
            self.line()
            self.write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def send(self, id: object, method: str, params: dict[str, Any]) -> None:
        if self.era == "modern":
            params = {**params, "_meta": META}
        self.write({"jsonrpc": "2.0", "id": id, "method": method, "params": params})

    def call(self, id: object, tool: str, arguments: dict[str, Any]) -> None:
        self.send(id, "tools/call", {"name": tool, "arguments": arguments})

    def line(self) -> bytes:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the server closed its stdout"
        return line

    def rest(self) -> list[bytes]:
        """Close stdin, then every line until the server exits."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        lines = self.process.stdout.read().splitlines(keepends=True)
        self.process.wait(timeout=30)
        return lines


def direct(home: Path, era: str) -> Peer:
    return Peer(sandbox_command(home / "direct.jsonl"), home, era)


def guarded(home: Path, era: str, *sandbox: str, timeout: float | None = None) -> Peer:
    argv = guard_argv(home, *over_sandbox(home, *sandbox), timeout=timeout)
    return Peer(argv, home, era)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_read_is_the_sandboxs_own_bytes_and_so_are_its_errors(tmp_path: Path, era: str) -> None:
    """The same requests, the same ids, to the sandbox directly and through the guard: every
    reply line is byte for byte the same (a result, an error result, an unknown tool's -32602,
    arguments or a name of the wrong type)."""
    replies = []
    for peer in (direct(tmp_path, era), guarded(tmp_path, era)):
        got = []
        for n, (tool, arguments) in enumerate(READS, start=10):
            peer.call(n, tool, arguments)
            got.append(peer.line())
        peer.call("no-such", "no_such_tool", {})
        got.append(peer.line())
        peer.send(99, "tools/call", {"name": "portfolio", "arguments": 7})
        got.append(peer.line())
        peer.send(98, "tools/call", {"name": ["portfolio"], "arguments": {}})
        got.append(peer.line())
        replies.append(got + peer.rest())
    ours, theirs = replies[1], replies[0]
    assert ours == theirs
    assert b'"isError":true' in ours[2] and b'"error":{"code":-32602' in ours[4]


def test_concurrent_reads_each_get_their_own_reply(tmp_path: Path) -> None:
    """Reads sent together, with ids of both kinds (one of them the relay's own spelling),
    answered in any order: each reply carries its own id and its own read's bytes, and all
    are answered before the guard stops at stdin's end."""
    ids: list[object] = [1, "kite-relay-1", "b", 2**53, -4, "kite-relay-2"]
    modes = ["profile", "holdings", "margins", "positions", "profile", "holdings"]
    replies = []
    for peer in (direct(tmp_path, "legacy"), guarded(tmp_path, "legacy")):
        for id, mode in zip(ids, modes, strict=True):
            peer.call(id, "portfolio", {"mode": mode})
        replies.append({json.loads(line)["id"]: line for line in peer.rest()})
    assert replies[1] == replies[0]
    assert set(replies[1]) == set(ids)


async def test_a_read_the_sandbox_does_not_answer_gets_the_guards_message(
    tmp_path: Path,
) -> None:
    """The sandbox is stopped (SIGSTOP): the read is answered after --timeout with the guard's
    words, and the late reply, once the sandbox runs again, reaches nobody; the next read is
    answered as usual."""
    pid_file = tmp_path / "upstream.pid"
    words = " ".join(f"'{w}'" for w in sandbox_command(tmp_path / "s.jsonl"))
    shell = ["--", "/bin/sh", "-c", f"echo $$ > '{pid_file}'; exec {words}"]
    async with client(guard_argv(tmp_path, *shell, timeout=1.0), tmp_path) as c:
        pid = int(pid_file.read_text())
        os.kill(pid, signal.SIGSTOP)
        try:
            late = await c.call_tool("portfolio", {"mode": "profile"})
        finally:
            os.kill(pid, signal.SIGCONT)
        with anyio.fail_after(30):
            after = await c.call_tool("portfolio", {"mode": "holdings"})
    assert late.is_error
    assert text_of(late) == (
        "kite-skills guard: the Kite MCP server did not answer portfolio within 1 s. If it was "
        "a write it may still have gone through: read the order book before any retry."
    )
    assert not after.is_error and "tradingsymbol" in text_of(after)


def test_a_cancelled_read_is_never_answered(tmp_path: Path) -> None:
    """A read cancelled while the sandbox is stopped: the cancel goes upstream, the sandbox's
    late reply is dropped, and only the next read is answered.

    The guard answers a ping itself, and reads its stdin in order: its answer to the ping
    sent after the cancel says the cancel was taken before the sandbox runs again (without
    it, a loaded machine could let the sandbox answer first, and a reply that comes before
    the cancel is taken is rightly sent on)."""
    pid_file = tmp_path / "upstream.pid"
    words = " ".join(f"'{w}'" for w in sandbox_command(tmp_path / "s.jsonl"))
    shell = ["--", "/bin/sh", "-c", f"echo $$ > '{pid_file}'; exec {words}"]
    peer = Peer(guard_argv(tmp_path, *shell), tmp_path, "legacy")
    pid = int(pid_file.read_text())
    os.kill(pid, signal.SIGSTOP)
    try:
        peer.call(5, "portfolio", {"mode": "profile"})
        peer.write({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": 5, "reason": "the person moved on"}})  # fmt: skip
        peer.send(7, "ping", {})
        assert json.loads(peer.line())["id"] == 7
    finally:
        os.kill(pid, signal.SIGCONT)
    peer.call(6, "portfolio", {"mode": "profile"})
    assert [json.loads(line)["id"] for line in peer.rest()] == [6]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_write_never_takes_the_relay(tmp_path: Path, era: str) -> None:
    """With the kill switch on, every write sent as a relayable line is judged and refused
    (and journalled), while a read next to it is relayed: the fast path is for reads only."""
    from kite_skills.guard.limits import KillSwitch

    limits(tmp_path, kill_switch=KillSwitch(reason="stepping out", by="asha", at="2026-12-02"))
    peer = guarded(tmp_path, era)
    peer.call(1, "orders", {"mode": "place", **ORDER, "quantity": 1, "price": 1500})
    peer.call(2, "orders", {"mode": "cancel", "variety": "regular", "order_id": "1"})
    peer.call(3, "portfolio", {"mode": "profile"})
    replies = {json.loads(line)["id"]: json.loads(line)["result"] for line in peer.rest()}
    for id in (1, 2):
        assert replies[id]["isError"] and "kill switch is on (stepping out" in str(replies[id])
    assert not replies[3]["isError"]
    assert [e["decision"] for e in journal(tmp_path)] == ["refuse", "refuse"]
