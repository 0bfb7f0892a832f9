"""Fuzzing `kite-skills sandbox` over stdio in both protocol eras, as the main server's
inputs are fuzzed (tests/server/test_fuzz.py): unknown tools and modes, wrong types, missing
required parameters, enormous values, control characters, lone surrogates, non-UTF-8 and
non-JSON lines. Properties on every example: stdout carries nothing but JSON-RPC, no answer
is -32603, every request is answered once, a tool's own refusals are isError results, and at
the end stderr holds no traceback (one line: the simulation's).

Derandomized: seed ``KITE_SKILLS_FUZZ_SEED`` (default 20261201), examples per test
``KITE_SKILLS_FUZZ_EXAMPLES`` (default 60)."""

from __future__ import annotations

import itertools
import json
import os
import queue
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from kite_skills.sandbox import schemas

from .sandbox_harness import MODERN, RawPeer

EXAMPLES = int(os.environ.get("KITE_SKILLS_FUZZ_EXAMPLES", "60"))
SEED = int(os.environ.get("KITE_SKILLS_FUZZ_SEED", "20261201"))
WAIT = 30.0
GROUPED = {t["name"]: t for t in schemas.load("grouped")}


def fuzz(test: Callable[..., None]) -> Callable[..., None]:
    configured = settings(
        max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )(test)
    return seed(SEED)(configured)


class Peer(RawPeer):
    def __init__(self, home: Path, era: str) -> None:
        super().__init__(home, home / "journal.jsonl")
        self.era = era
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.ids = itertools.count(1)
        threading.Thread(target=self._pump, daemon=True).start()
        if era == "legacy":
            client = {"name": "f", "version": "1"}
            init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}
            self.write(self.wrap(0, "initialize", init))
            assert "result" in self.next_message()
            self.write({"jsonrpc": "2.0", "method": "notifications/initialized"})
        else:
            self.write(self.wrap(0, "tools/list"))
            assert "result" in self.next_message()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in iter(self.process.stdout.readline, b""):
            self.lines.put(line)
        self.lines.put(b"")

    def write(self, message: dict[str, Any]) -> None:
        self.raw(json.dumps(message).encode())

    def raw(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def next_message(self) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError(f"no answer within {WAIT}s") from None
        assert line, "the sandbox closed stdout"
        message = json.loads(line)
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", line[:300]
        return message

    def wrap(self, rid: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        params = dict(params or {})
        if self.era == "modern":
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
            }
        return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}

    def answer(self, rid: int) -> dict[str, Any]:
        while True:
            message = self.next_message()
            if "method" in message:
                continue
            assert message.get("error", {}).get("code") != -32603, message
            assert message.get("id") == rid, ("an answer nobody waited for", message)
            return message

    def finish(self) -> None:
        code, stderr = self.close()
        assert code == 0, stderr
        assert "Traceback" not in stderr and len(stderr.splitlines()) <= 1, stderr


@pytest.fixture(params=["legacy", "modern"])
def peer(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Peer]:
    started = Peer(tmp_path, request.param)
    yield started
    started.kill()


lone = st.characters(categories=["Cs"])
text = st.one_of(
    st.text(max_size=40),
    st.builds(lambda a, b, c: a + b + c, st.text(max_size=5), lone, st.text(max_size=5)),
    st.sampled_from(["", "\x00", "\x1b[31m", "NSE:INFY", "x" * 70_000, "ato", "two-leg"]),
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**30, max_value=10**400)
    | st.floats(allow_nan=False)
    | text
)
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=10,
)  # fmt: skip


def arguments_for(tool: str) -> st.SearchStrategy[Any]:
    spec = GROUPED.get(tool)
    if spec is None:
        return st.dictionaries(text, values, max_size=3)
    properties = spec["inputSchema"]["properties"]
    modes = st.sampled_from(properties["mode"]["enum"]) | text
    known = {name: values for name in properties if name != "mode"}
    return st.fixed_dictionaries({"mode": modes}, optional=known) | st.dictionaries(
        text, values, max_size=3
    )


tool_names = st.sampled_from(sorted(GROUPED)) | text


def test_fuzz_tool_calls(peer: Peer) -> None:
    @fuzz
    @given(tool_names.flatmap(lambda t: st.tuples(st.just(t), arguments_for(t))))
    def one(call: tuple[str, Any]) -> None:
        tool, arguments = call
        rid = next(peer.ids)
        peer.write(peer.wrap(rid, "tools/call", {"name": tool, "arguments": arguments}))
        answer = peer.answer(rid)
        if "error" in answer:  # an unknown tool or unusable params: -32602 (or -32600)
            assert answer["error"]["code"] in (-32602, -32600), answer
            assert tool not in GROUPED or _not_unicode(arguments) or _not_unicode(tool), answer
        else:
            content = answer["result"]["content"]
            assert len(content) == 1 and content[0]["type"] == "text"

    one()
    peer.finish()


def test_fuzz_lines(peer: Peer) -> None:
    @fuzz
    @given(st.binary(max_size=200) | st.sampled_from([b"\xff\xfe{", b"{", b"[]", b"null"]))
    def one(line: bytes) -> None:
        peer.raw(line.replace(b"\n", b" "))
        rid = next(peer.ids)
        peer.write(
            peer.wrap(rid, "tools/call", {"name": "session", "arguments": {"mode": "status"}})
        )
        while True:
            message = peer.next_message()
            assert message.get("error", {}).get("code") != -32603, message
            if message.get("id") == rid:
                assert message["result"]["isError"] is False
                return

    one()
    peer.finish()


def _not_unicode(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False
