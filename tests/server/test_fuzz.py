"""Fuzzing the server over its stdio wire (in process), both protocol eras (hypothesis): help
keys, every tool's arguments, ``resources/read`` URIs, and the JSON-RPC stream itself (random
bytes, truncated JSON, wrong shapes, odd ids, batches, huge lines). Every string field may hold
lone-surrogate escapes (``\\ud800``), and every id-like field (``id``, ``requestId`` of
``notifications/cancelled``, ``_meta.progressToken``) takes every JSON type (issue 24: one such
line used to end the server).

One server per test and era takes every example in turn. Properties, checked on
every example: stdout carries nothing but JSON-RPC, no answer is ever -32603, every request
with a valid id is answered (once), and the next valid request is answered. When the server
stops, stderr holds no traceback and at most one line.

Runs are derandomized: the seed is ``KITE_SKILLS_FUZZ_SEED`` (default 20260907) and the number
of examples per test ``KITE_SKILLS_FUZZ_EXAMPLES`` (default 100). A long run, random unless a
seed is given: ``KITE_SKILLS_FUZZ_EXAMPLES=5000 ./build.sh test tests/server/test_fuzz.py``.
"""

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

from .harness import LEGACY, MODERN, TOOLS, RawPeer, Target

EXAMPLES = int(os.environ.get("KITE_SKILLS_FUZZ_EXAMPLES", "100"))
SEED = os.environ.get(
    "KITE_SKILLS_FUZZ_SEED", "" if "KITE_SKILLS_FUZZ_EXAMPLES" in os.environ else "20260907"
)
WAIT_SECONDS = 30.0
COUNTS: dict[str, int] = {}


def fuzz(test: Callable[..., None]) -> Callable[..., None]:
    """The suite's hypothesis settings: bounded, no example database, a fixed seed."""
    configured = settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )(test)
    return seed(int(SEED))(configured) if SEED else configured


class FuzzPeer(RawPeer):
    """A long-lived server on pipes; reads give up after a bound instead of hanging."""

    def __init__(self, target: Target, shiv_root: Path, db: Path, era: str) -> None:
        super().__init__(target, shiv_root, db)
        self.era = era
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.ids = itertools.count(1)
        threading.Thread(target=self._pump, daemon=True).start()
        if era == "legacy":
            self.send(self.wrap(1_000_000, "initialize", _init_params()))
            assert "result" in self.next_message()
            self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        else:  # the first request decides the era: pin it before any fuzz arrives
            self.send(self.wrap(1_000_000, "tools/list"))
            assert "result" in self.next_message()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in iter(self.process.stdout.readline, b""):
            self.lines.put(line)
        self.lines.put(b"")

    def next_message(self) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=WAIT_SECONDS)
        except queue.Empty:
            raise AssertionError(f"no answer within {WAIT_SECONDS}s") from None
        assert line, "the server closed stdout"
        message = json.loads(line)  # raises on anything but JSON
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

    def exchange(self, lines: list[bytes], expected: set[Any], label: str) -> list[dict[str, Any]]:
        """Write ``lines`` and a probe; wait for answers to every id in ``expected`` and the
        probe. Returns those answers."""
        probe = f"probe-{next(self.ids)}"
        assert self.process.stdin is not None
        for line in lines:
            self.process.stdin.write(line + b"\n")
        self.process.stdin.write(json.dumps(self.wrap(probe, "tools/list")).encode() + b"\n")
        self.process.stdin.flush()
        waiting = {_key(i) for i in expected} | {_key(probe)}
        answers = []
        while waiting:
            message = self.next_message()
            if "method" in message:
                continue  # a notification
            assert message.get("error", {}).get("code") != -32603, message
            if "id" in message and message["id"] is not None:
                key = _key(message["id"])
                assert key in waiting, ("an answer nobody waited for, or a second one", message)
                waiting.discard(key)
                answers.append(message)
        COUNTS[label] = COUNTS.get(label, 0) + len(lines)
        return answers

    def finish(self) -> None:
        assert self.process.stdin is not None and self.process.stderr is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=WAIT_SECONDS)
        stderr = self.process.stderr.read().decode(errors="replace")
        assert code == 0, stderr
        assert "Traceback" not in stderr and len(stderr.splitlines()) <= 1, stderr


def _report() -> None:
    """How many inputs the targets took so far in this run (``pytest -s`` shows it)."""
    print("fuzzed inputs:", json.dumps(COUNTS, sort_keys=True), "seed:", SEED or "random")


def _key(rid: Any) -> tuple[str, Any]:
    return (type(rid).__name__, rid)


def not_unicode(message: Any) -> bool:
    """Whether a message holds a lone surrogate (written as a ``\\ud800`` escape)."""
    try:
        json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def refused_as_not_unicode(answer: dict[str, Any]) -> None:
    """The answer to a request with a lone surrogate in its params: -32602 naming it."""
    error = answer.get("error", {})
    assert error.get("code") == -32602 and "lone surrogate" in error["message"], answer


def _init_params() -> dict[str, Any]:
    return {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "fuzz", "version": "1"},
    }


@pytest.fixture(params=["legacy", "modern"])
def peer(
    request: pytest.FixtureRequest, target: Target, shiv_root: Path, tmp_path: Path
) -> Iterator[FuzzPeer]:
    started = FuzzPeer(target, shiv_root, tmp_path / "skills.db", request.param)
    yield started
    if started.process.poll() is None:
        started.process.kill()
        started.process.wait()


# ---- strategies ---------------------------------------------------------------------------

unicode_text = st.text(st.characters(codec="utf-8"), max_size=80)
# JSON's \\ud800 escapes decode to lone surrogates: text no UTF-8 writer can carry.
surrogate_text = st.builds(
    lambda head, lone, tail: head + lone + tail,
    st.text(st.characters(codec="utf-8"), max_size=10),
    st.characters(categories=["Cs"]),  # (a union with utf-8 characters would lose these)
    st.text(st.characters(codec="utf-8"), max_size=10),
)
text = st.integers(0, 3).flatmap(lambda i: surrogate_text if i == 0 else unicode_text)  # 1 in 4
json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=12,
)
keys = st.one_of(
    text,
    st.sampled_from(["/", "", "/orders", "/orders/", "/orders/reconcile", "//", "/../etc"]),
    st.builds(lambda a, b: a + b, st.sampled_from(["/orders/", "/", "/holdings/"]), text),
    st.text(max_size=2000).map(lambda t: "/" + t),
)
names = st.one_of(
    st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,2}", fullmatch=True),
    text,
    st.sampled_from(["", "../x", "A", "a--b", "x" * 65, "a\x00b"]),
)
uris = st.one_of(
    text,
    st.builds(
        lambda s, rest: s + rest,
        st.sampled_from(
            [
                "user-skill://",
                "skill://",
                "skill://orders/",
                "USER-SKILL://",
                "file:///",
                "user-skill:",
            ]
        ),
        text,
    ),
    st.sampled_from(["seed", "skill://orders/SKILL.md", "user-skill://", "user-skill://a/../b"]),
)


def arguments_for(tool: str) -> st.SearchStrategy[dict[str, Any]]:
    known = {
        "help": {"key": keys},
        "skills": {
            "q": text | st.sampled_from(["a\x00", "((", '"x', "*"]),
            "limit": st.integers(-5, 200),
        },
        "skillRead": {"name": names},
        "skillSave": {"name": names, "description": text, "body": st.text(max_size=300)},
        "skillUnpublish": {"name": names},
        "skillPublish": {"name": names},
        "calc": {
            "mode": st.sampled_from(["tick", "lots", "greeks", "payoff", "charges", "exit_plan"]),
            "price": st.floats(allow_nan=False),
            "tick_size": st.floats(allow_nan=False),
            "quantity": st.integers(-10, 10**9),
            "legs": st.lists(st.dictionaries(text, json_values, max_size=4), max_size=3),
        },
    }[tool]
    typed = st.fixed_dictionaries({}, optional={k: v | json_values for k, v in known.items()})
    return typed | st.dictionaries(text, json_values, max_size=3)


# ---- the targets --------------------------------------------------------------------------


def test_fuzz_help_keys(peer: FuzzPeer) -> None:
    @fuzz
    @given(st.lists(keys, min_size=1, max_size=5))
    def one(batch: list[str]) -> None:
        rids = [next(peer.ids) for _ in batch]
        lines = [
            json.dumps(
                peer.wrap(r, "tools/call", {"name": "help", "arguments": {"key": k}})
            ).encode()
            for r, k in zip(rids, batch, strict=True)
        ]
        keys_by_id = dict(zip(rids, batch, strict=True))
        for answer in peer.exchange(lines, set(rids), "help keys"):
            if answer["id"] in rids:
                if not_unicode(keys_by_id[answer["id"]]):
                    refused_as_not_unicode(answer)
                else:  # a page or a tool error, never a protocol error
                    assert "result" in answer, answer

    one()
    peer.finish()
    _report()


def test_fuzz_tool_arguments(peer: FuzzPeer) -> None:
    @fuzz
    @given(
        st.lists(
            st.sampled_from(sorted(TOOLS)).flatmap(
                lambda t: st.tuples(st.just(t), arguments_for(t))
            ),
            min_size=1,
            max_size=4,
        )
    )
    def one(calls: list[tuple[str, dict[str, Any]]]) -> None:
        rids = [next(peer.ids) for _ in calls]
        lines = [
            json.dumps(peer.wrap(r, "tools/call", {"name": t, "arguments": a})).encode()
            for r, (t, a) in zip(rids, calls, strict=True)
        ]
        calls_by_id = dict(zip(rids, calls, strict=True))
        for answer in peer.exchange(lines, set(rids), "tool arguments"):
            if answer["id"] in rids:
                if not_unicode(calls_by_id[answer["id"]]):
                    refused_as_not_unicode(answer)
                else:
                    assert "result" in answer, answer

    one()
    peer.finish()
    _report()


def test_fuzz_resource_uris(peer: FuzzPeer) -> None:
    @fuzz
    @given(st.lists(uris, min_size=1, max_size=5))
    def one(batch: list[str]) -> None:
        rids = [next(peer.ids) for _ in batch]
        lines = [
            json.dumps(peer.wrap(r, "resources/read", {"uri": u})).encode()
            for r, u in zip(rids, batch, strict=True)
        ]
        uris_by_id = dict(zip(rids, batch, strict=True))
        for answer in peer.exchange(lines, set(rids), "resource URIs"):
            if answer["id"] in rids and not_unicode(uris_by_id[answer["id"]]):
                refused_as_not_unicode(answer)
            if "error" in answer:
                assert answer["error"]["code"] == -32602, answer
                assert len(json.dumps(answer)) < 2_000

    one()
    peer.finish()
    _report()


ODD_IDS = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(text, st.integers(), max_size=2),
    st.lists(json_values, max_size=3),
    st.dictionaries(text, json_values, max_size=3),
    surrogate_text,  # a string no reply can carry back: answered with id null
)
# Every JSON type where a request id is named (requestId, progressToken); strings and integers
# from ranges no request here uses, so a cancel never hides an answer the test waits for.
ANY_ID_LIKE = ODD_IDS | text.map(lambda t: "c-" + t) | st.integers(min_value=10**30)
METHODS = st.sampled_from(
    [
        "tools/list",
        "ping",
        "resources/list",
        "skills/list",
        "resources/templates/list",
        "prompts/list",
        "initialize",
        "no/such",
        "",
        "tools/call",
        "resources/read",
        "skills/get",
    ]
)


@st.composite
def stream_lines(draw: st.DrawFn, peer: FuzzPeer) -> tuple[list[bytes], set[Any]]:
    """A few lines of every kind, and the ids of the valid requests among them."""
    lines: list[bytes] = []
    expected: set[Any] = set()
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(
            st.sampled_from(
                [
                    "bytes",
                    "truncated",
                    "shape",
                    "odd-id",
                    "valid-id",
                    "batch",
                    "huge",
                    "notification",
                    "cancel",
                    "progress-token",
                ]
            )
        )
        if kind == "bytes":
            lines.append(draw(st.binary(max_size=200)).replace(b"\n", b" "))
        elif kind == "truncated":
            whole = json.dumps(
                peer.wrap(
                    0,  # a constant: the draws must not depend on state outside them
                    draw(METHODS),
                    draw(st.dictionaries(text, json_values, max_size=3)),
                )
            ).encode()
            lines.append(whole[: draw(st.integers(0, max(0, len(whole) - 1)))])
        elif kind == "shape":
            lines.append(json.dumps(draw(json_values)).encode())
        elif kind == "odd-id":
            message = peer.wrap(None, draw(METHODS), {})
            message["id"] = draw(ODD_IDS)
            lines.append(json.dumps(message).encode())
        elif kind == "valid-id":
            n = next(peer.ids)
            rid = draw(st.sampled_from([n, -n, n * 10**20, f"s{n}", f"é{n}\u202e", f"{n}"]))
            params = draw(st.dictionaries(text, json_values, max_size=3) | st.just({}))
            message = peer.wrap(rid, draw(METHODS | text), params)
            if draw(st.booleans()):
                message["params"] = draw(json_values)  # the wrong shape of params
            lines.append(json.dumps(message).encode())
            expected.add(rid)
        elif kind == "batch":
            rid = f"b{next(peer.ids)}"
            members = [peer.wrap(rid, "ping"), draw(json_values)]
            lines.append(json.dumps(members).encode())
            expected.add(rid)
        elif kind == "huge":
            size = draw(st.sampled_from([70_000, 1_000_000]))
            n = next(peer.ids)
            message = peer.wrap(n, "tools/call", {"name": "skills", "arguments": {"q": "x" * size}})
            lines.append(json.dumps(message).encode())
            expected.add(n)
        elif kind == "cancel":
            params = {"requestId": draw(ANY_ID_LIKE)}
            message = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
            lines.append(json.dumps(message).encode())
        elif kind == "progress-token":
            n = next(peer.ids)
            message = peer.wrap(n, draw(METHODS), {})
            message["params"].setdefault("_meta", {})["progressToken"] = draw(ANY_ID_LIKE)
            lines.append(json.dumps(message).encode())
            expected.add(n)
        else:
            method = draw(METHODS | text | st.just("notifications/progress"))
            params = draw(st.just({}) | st.fixed_dictionaries({"progressToken": ANY_ID_LIKE}))
            lines.append(
                json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode()
            )
    return lines, expected


def test_fuzz_the_stream(peer: FuzzPeer) -> None:
    @fuzz
    @given(st.data())
    def one(data: st.DataObject) -> None:
        lines, expected = data.draw(stream_lines(peer))
        peer.exchange(lines, expected, "stream lines")

    one()
    peer.finish()
    _report()


def test_a_line_over_the_limit_is_refused_and_the_next_answered(peer: FuzzPeer) -> None:
    huge = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "' + b"x" * (17 * 1024 * 1024)
    peer.process.stdin.write(huge + b'"}\n')  # type: ignore[union-attr]
    first = peer.next_message()
    assert first["id"] is None and first["error"]["code"] == -32600, first
    assert "over" in first["error"]["message"]
    peer.exchange([], set(), "huge lines")
    peer.finish()
