"""A crash loses no acknowledged call: after the reply to a tool call has been read, the
sandbox is killed with SIGKILL and the journal still holds the call and its result."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest

from .sandbox_harness import RawPeer


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_the_journal_survives_kill_9_after_an_acknowledged_call(tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    peer = RawPeer(tmp_path, journal)
    try:
        peer.initialize()
        replies = [
            peer.request("tools/call", {"name": "portfolio", "arguments": {"mode": m}})
            for m in ("profile", "margins", "holdings", "positions")
        ]
        assert all(r["result"]["isError"] is False for r in replies)
        peer.process.send_signal(signal.SIGKILL)
        assert peer.process.wait(timeout=20) == -signal.SIGKILL
    finally:
        peer.kill()
    calls = [json.loads(x) for x in journal.read_bytes().splitlines()][1:]
    assert [c["arguments"]["mode"] for c in calls] == [
        "profile",
        "margins",
        "holdings",
        "positions",
    ]
    for call, reply in zip(calls, replies, strict=True):
        assert call["result"] == reply["result"]["content"][0]["text"]
