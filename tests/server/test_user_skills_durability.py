"""kill -9 in the middle of a burst of skillSave calls: the file opens, passes the integrity
check, and every call that was answered with success is there as a draft. Then the same with
two servers saving and the CLI publishing at once, all three killed together, twice."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kite_skills.store import Store

from .harness import ROOT, RawPeer

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


# ---- kill -9 of two servers and the CLI at once (issue 9 §5) ---------------------------------

# The CLI's publish after the person typed the name at the terminal (that question is
# tests/test_cli_confirm.py's): the same store call, in a process of its own.
CLI_LOOP = """
import sys
from kite_skills.errors import KiteError
from kite_skills.store import Store, human
db = sys.argv[1]
for line in sys.stdin:
    name = line.strip()
    try:
        with Store.open(db) as store:  # the revision a person reviewed: the one on file now
            rev = store.get(name).revision
            human.publish(store, name, rev=rev, via="cli", who="pat")
        verdict = "ACK"
    except KiteError:
        verdict = "FAIL"
    print(verdict, name, flush=True)
"""
ROUNDS = 2
PER_SERVER = 150


class _Round:
    """Two zipapp servers saving drafts and a CLI publishing what they acknowledged, until
    enough has been acknowledged; then all three get SIGKILL together."""

    def __init__(self, pyz: Path, shiv_root: Path, db: Path, number: int) -> None:
        self.servers = [RawPeer(pyz, shiv_root, db) for _ in range(2)]
        env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        self.cli = subprocess.Popen(
            [sys.executable, "-c", CLI_LOOP, str(db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.number = number
        self.saved: list[str] = []
        self.published: list[str] = []
        self.refused: list[str] = []
        self.lock = threading.Lock()
        self.progress = threading.Condition(self.lock)

    def _fire(self, k: int) -> None:
        server = self.servers[k]
        try:
            for i in range(PER_SERVER):
                server.send(_save(2 + i, f"r{self.number}-s{k}-{i:03d}"))
        except (BrokenPipeError, OSError):
            pass  # killed before the burst was all written

    def _read(self, k: int) -> None:
        server = self.servers[k]
        assert server.process.stdout is not None and self.cli.stdin is not None
        for line in server.process.stdout:
            reply = json.loads(line)
            if reply.get("id", 0) < 2:
                continue  # initialize, or a notification
            assert "error" not in reply, reply
            result = reply["result"]
            assert not result.get("isError"), result
            name = result["structuredContent"]["name"]
            with self.progress:
                self.saved.append(name)
                self.progress.notify_all()
            try:
                self.cli.stdin.write(f"{name}\n".encode())
                self.cli.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                pass  # the CLI was killed

    def _read_cli(self) -> None:
        assert self.cli.stdout is not None
        for line in self.cli.stdout:
            verdict, name = line.decode().split()
            with self.progress:
                (self.published if verdict == "ACK" else self.refused).append(name)
                self.progress.notify_all()

    def run(self) -> None:
        for server in self.servers:
            server.initialize({})
        threads = [
            *(threading.Thread(target=self._fire, args=(k,), daemon=True) for k in (0, 1)),
            *(threading.Thread(target=self._read, args=(k,), daemon=True) for k in (0, 1)),
            threading.Thread(target=self._read_cli, daemon=True),
        ]
        for thread in threads:
            thread.start()
        with self.progress:  # kill mid-flight: enough acknowledged, more still coming
            enough = self.progress.wait_for(
                lambda: len(self.saved) >= 80 and len(self.published) >= 15, timeout=120
            )
        victims = [s.process for s in self.servers] + [self.cli]
        for process in victims:
            process.send_signal(signal.SIGKILL)
        for process in victims:
            assert process.wait(timeout=10) == -signal.SIGKILL
        for thread in threads:
            thread.join(timeout=10)
        assert enough, f"too little was acknowledged: {len(self.saved)}, {len(self.published)}"
        assert self.refused == [], self.refused


def _save(request_id: int, name: str) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {
            "name": "skillSave",
            "arguments": {
                "name": name,
                "description": f"Skill {name}",
                "body": f"# {name}\n\n" + "Step.\n" * 100,
            },
        },
    }


@pytest.mark.zipapp
def test_kill_9_of_two_servers_and_the_cli_at_once_loses_no_acknowledged_write(
    pyz: Path, shiv_root: Path, db: Path
) -> None:
    saved: list[str] = []
    published: list[str] = []
    for number in range(ROUNDS):  # the second round starts on the file the first one left
        kill = _Round(pyz, shiv_root, db, number)
        kill.run()
        saved += kill.saved
        published += kill.published

        with sqlite3.connect(db) as conn:  # an independent reader first (it recovers the WAL)
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            rows = dict(conn.execute("SELECT name, status FROM skills").fetchall())
            audit = conn.execute("SELECT skill, action FROM audit_log").fetchall()
        with Store.open(db) as store:
            assert store.integrity_check() == []  # includes the FTS index check
            live_names = {s.name for s in store.live_skills()}

        assert [n for n in saved if n not in rows] == [], "acknowledged saves lost"
        assert [n for n in published if rows[n] != "live"] == [], "acknowledged publishes lost"
        assert live_names == {n for n, status in rows.items() if status == "live"}
        per_skill: dict[str, list[str]] = {}
        for skill, action in audit:
            per_skill.setdefault(skill, []).append(action)
        for name, status in rows.items():  # exactly one audit row per write that happened
            expected = ["create", "publish"] if status == "live" else ["create"]
            assert per_skill.pop(name) == expected, (name, status)
        assert per_skill == {}, f"audit rows without a write: {per_skill}"
    print(
        f"{ROUNDS * 3} processes killed; {len(saved)} acknowledged saves and "
        f"{len(published)} acknowledged publishes all on file"
    )
