"""kill -9 in the middle of a burst of skillSave calls: the file opens, passes the integrity
check, and every call that was answered with success is there as a draft."""

from __future__ import annotations

import json
import signal
import sqlite3
import threading
from pathlib import Path

import pytest

from kite_skills.store import Store

from .harness import RawPeer

BURST = 200


@pytest.mark.zipapp
@pytest.mark.parametrize("kill_after", [10, 100])
def test_kill_9_during_a_burst_of_saves_loses_nothing_that_was_acknowledged(
    raw: RawPeer, db: Path, kill_after: int
) -> None:
    raw.initialize({})
    first_id = raw._next_id + 1
    lines = [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": first_id + i,
                "method": "tools/call",
                "params": {
                    "name": "skillSave",
                    "arguments": {
                        "name": f"burst-{i:03d}",
                        "description": f"Burst skill number {i}",
                        "body": f"# Burst {i}\n\n" + "Step.\n" * 200,
                    },
                },
            }
        ).encode()
        for i in range(BURST)
    ]

    def fire() -> None:  # in a thread: the server's replies must be read while we write
        try:
            for line in lines:
                raw.send_line(line)
        except (BrokenPipeError, OSError):
            pass  # killed before the burst was all written

    writer = threading.Thread(target=fire, daemon=True)
    writer.start()

    acknowledged: list[str] = []
    answered = 0
    while answered < kill_after:
        reply = raw.receive()
        if "id" not in reply:
            continue  # a notification
        answered += 1
        index = reply["id"] - first_id
        assert "error" not in reply, reply
        if not reply["result"].get("isError"):
            assert reply["result"]["structuredContent"]["status"] == "draft"
            acknowledged.append(f"burst-{index:03d}")

    assert raw.process.poll() is None, "the server ended before it was killed"
    raw.process.send_signal(signal.SIGKILL)
    assert raw.process.wait(timeout=10) == -signal.SIGKILL
    writer.join(timeout=10)
    assert len(acknowledged) == kill_after  # every answered save succeeded

    # An independent SQLite connection first (it also recovers the WAL), then the store.
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        statuses = dict(conn.execute("SELECT name, status FROM skills").fetchall())
        published = conn.execute(
            "SELECT COUNT(*) FROM skills WHERE published_at IS NOT NULL"
        ).fetchone()[0]
        audited = conn.execute("SELECT skill, COUNT(*) FROM audit_log GROUP BY skill").fetchall()
    with Store.open(db) as store:
        assert store.integrity_check() == []
        assert store.list_live() == []
        assert store.search("burst") == []

    missing = [name for name in acknowledged if name not in statuses]
    assert missing == [], f"acknowledged but lost: {missing}"
    assert {statuses[name] for name in acknowledged} == {"draft"}
    assert set(statuses.values()) == {"draft"} and published == 0
    assert len(statuses) <= BURST
    print(f"killed after {kill_after} replies; {len(statuses)} saves on file")
    # Each save that reached the file wrote exactly one audit row with it, never half of it.
    assert dict(audited) == dict.fromkeys(statuses, 1)
