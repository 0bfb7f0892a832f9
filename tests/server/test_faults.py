"""Faults over the server's stdio wire, in process (issue 9, §2 and §3; Ctrl-C, a slow
start and ``--db`` against the built zipapp): a bad row under the change watcher, a
store that cannot be opened, stdin closing with requests in flight, Ctrl-C, invalid request
ids, a second ``initialize``, requests before ``initialize``, resource URIs without the
scheme or of absurd length, repeated subscriptions and NUL in a search.

Each test injects one fault and checks what the client and the person see: an answer to
every request with a valid id, nothing but JSON-RPC on stdout, at most one line on stderr
and never a traceback."""

from __future__ import annotations

import json
import queue
import signal
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kite_skills.store import Store, agent, human

from .harness import (
    LEGACY,
    SKILLS_EXTENSION,
    RawPeer,
    Target,
    run_server,
    server_command,
    server_env,
)

WAIT_SECONDS = 20.0  # a bound for "eventually", never a measured speed


class Peer(RawPeer):
    """A raw peer whose reads give up after a bound instead of hanging the suite."""

    def __init__(self, target: Target, shiv_root: Path, db: Path, **env: str) -> None:
        super().__init__(target, shiv_root, db, **env)
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def wait_for(self, method: str) -> dict[str, Any]:
        """The first notification ``method`` not yet taken, waiting (bounded) for it."""
        while True:
            for i, message in enumerate(self.seen):
                if message.get("method") == method:
                    return self.seen.pop(i)
            self.seen.append(self.receive())

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in iter(self.process.stdout.readline, b""):
            self.lines.put(line)
        self.lines.put(b"")

    def receive(self, timeout: float = WAIT_SECONDS) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message from the server within {timeout}s") from None
        if not line:
            raise AssertionError("the server closed stdout (see its stderr)")
        return json.loads(line)


@pytest.fixture
def raw(target: Target, shiv_root: Path, db: Path) -> Iterator[Peer]:
    peer = Peer(target, shiv_root, db)
    yield peer
    if peer.process.poll() is None:
        peer.process.kill()
        peer.process.wait()


def _live(db: Path, *names: str) -> None:
    with Store.open(db) as store:
        human.import_skills(
            store, [(n, f"About {n}", f"# {n}\n\n1. Do {n}.\n") for n in names], via="cli", who="t"
        )


def _corrupt_text(db: Path, name: str, column: str) -> None:
    """Put bytes that are not UTF-8 into one row, as another tool (or a bad disk) could."""
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TRIGGER IF EXISTS skills_au")  # keep the FTS index out of it
        conn.execute(
            f"UPDATE skills SET {column} = CAST(X'66ff6f0a' AS TEXT) WHERE name = ?",
            (name,),
        )


STORE_LINE = "kite-skills: user skills in "  # the one line every start prints: which store


def _text(reply: dict[str, Any]) -> str:
    assert "result" in reply, reply
    return " ".join(c.get("text", "") for c in reply["result"]["content"])


def _ended_quietly(peer: Peer, *, lines: int = 0) -> str:
    """Closed with exit 0, no traceback, and at most ``lines`` lines on stderr besides the
    start-up line naming the store."""
    code, stderr = peer.close(timeout=WAIT_SECONDS)
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr
    logged = [line for line in stderr.splitlines() if not line.startswith(STORE_LINE)]
    assert len(logged) <= lines, stderr
    return stderr


def _init_line(request_id: int = 1, **client: Any) -> str:
    params = {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "fault", "version": "1", **client},
    }
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}
    )


def _call_line(request_id: int, name: str, arguments: dict[str, Any]) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
    )


INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})


def _run(target: Target, shiv_root: Path, db: Path, lines: list[str]) -> tuple[list[Any], str]:
    """Write every line then close stdin at once, as `printf … | kite-skills` does."""
    payload = "".join(line + "\n" for line in lines)
    code, out, err = run_server(target, shiv_root, db, payload.encode())
    stderr = err.decode(errors="replace")
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr
    return [json.loads(line) for line in out.splitlines()], stderr


# ---- item 4: the change watcher meets a bad row ----------------------------------------------


@pytest.mark.parametrize("column", ["body", "description"])
def test_a_bad_row_never_stops_the_server(
    target: Target, shiv_root: Path, db: Path, column: str
) -> None:
    _live(db, "good-one", "bad-one")
    with Store.open(db) as store:
        agent.save(store, "bad-draft", "A draft", "# Draft\n", who="t")
    _corrupt_text(db, "bad-one", column)
    _corrupt_text(db, "bad-draft", column)
    peer = Peer(target, shiv_root, db)
    peer.initialize({})
    # Another process writes: the watcher reads the file again, past the bad rows, and
    # announces the change (before the fix it died here, and the server with it).
    _live(db, "another")
    peer.wait_for("notifications/resources/list_changed")
    for _ in range(2):  # still serving, the catalog and the good skills alike
        assert peer.request("tools/call", {"name": "help", "arguments": {}})["result"]
        read = peer.request("tools/call", {"name": "skillRead", "arguments": {"name": "good-one"}})
        assert read["result"].get("isError") is not True, read
        assert peer.request("resources/read", {"uri": "skill://orders/SKILL.md"})["result"]
        listed = peer.request("resources/list", {})["result"]["resources"]
        uris = {r["uri"] for r in listed}
        assert {"user-skill://good-one", "user-skill://another"} <= uris, uris
        assert "user-skill://bad-one" not in uris
    bad = peer.request("tools/call", {"name": "skillRead", "arguments": {"name": "bad-one"}})
    assert bad["result"]["isError"] is True, bad
    assert "bad-one" in _text(bad) and "internal error" not in _text(bad), bad
    direct = peer.request("resources/read", {"uri": "user-skill://bad-one"})
    assert "bad-one" in direct["error"]["message"], direct
    assert len(json.dumps(direct)) < 2_000, direct
    stderr = _ended_quietly(peer, lines=1)  # resources/list left the bad skill out, said once
    assert len([line for line in stderr.splitlines() if "bad-one" in line]) == 1, stderr


# ---- item 5: the store cannot be opened --------------------------------------------------


def _future_schema(db: Path) -> None:
    Store.open(db).close()
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO schema_version (version, applied_at) VALUES (999, 'x')")


def _not_a_database(db: Path) -> None:
    db.write_bytes(b"this is not an SQLite file, just some text somebody saved here\n" * 100)


def _a_directory(db: Path) -> None:
    db.mkdir()


@pytest.mark.parametrize("break_it", [_future_schema, _not_a_database, _a_directory])
@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_store_that_cannot_open_leaves_the_catalog_served(
    target: Target, shiv_root: Path, db: Path, break_it: Any, era: str
) -> None:
    break_it(db)
    peer = Peer(target, shiv_root, db)

    def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
        reply = peer.request(method, params) if era == "legacy" else peer.modern(method, params)
        assert "result" in reply, reply
        return reply["result"]

    if era == "legacy":
        peer.initialize({})
    names = {t["name"] for t in ask("tools/list", {})["tools"]}
    assert {"help", "skills", "skillRead", "skillSave", "skillUnpublish", "skillPublish"} <= names
    assert ask("tools/call", {"name": "help", "arguments": {"key": "/orders"}})["structuredContent"]
    assert ask("skills/list", {})["skills"]
    uris = {r["uri"] for r in ask("resources/list", {})["resources"]}
    assert "skill://orders/SKILL.md" in uris
    assert ask("resources/read", {"uri": "skill://orders/SKILL.md"})["contents"]
    for name, arguments in [
        ("skills", {}),
        ("skillRead", {"name": "x"}),
        ("skillSave", {"name": "x", "description": "d", "body": "b"}),
        ("skillUnpublish", {"name": "x"}),
        ("skillPublish", {"name": "x"}),
    ]:
        result = ask("tools/call", {"name": name, "arguments": arguments})
        assert result["isError"] is True, (name, result)
        text = result["content"][0]["text"]
        assert "store" in text and "internal error" not in text, text
        assert "--db" in text or "KITE_SKILLS_DB" in text or "upgrade" in text, text
    stderr = _ended_quietly(peer, lines=1)
    assert "skill store" in stderr and "catalog" in stderr, stderr


# ---- item 7: replies at stdin EOF --------------------------------------------------------


def test_a_save_then_eof_is_answered(target: Target, shiv_root: Path, db: Path) -> None:
    save = {"name": "eof-one", "description": "Saved at EOF", "body": "# One\n"}
    replies, _ = _run(
        target, shiv_root, db, [_init_line(), INITIALIZED, _call_line(2, "skillSave", save)]
    )
    answered = {r["id"]: r for r in replies if "id" in r}
    assert set(answered) == {1, 2}, replies
    assert answered[2]["result"]["structuredContent"]["status"] == "draft"


def test_twenty_calls_then_eof_get_twenty_answers(
    target: Target, shiv_root: Path, db: Path
) -> None:
    calls = [
        _call_line(
            10 + i, "skillSave", {"name": f"eof-{i:02d}", "description": "At EOF", "body": "# B\n"}
        )
        for i in range(20)
    ]
    reads = [_call_line(40 + i, "help", {"key": "/orders"}) for i in range(5)]
    replies, _ = _run(target, shiv_root, db, [_init_line(), INITIALIZED, *calls, *reads])
    answered = {r["id"] for r in replies if "id" in r}
    assert answered == {1} | set(range(10, 30)) | set(range(40, 45)), sorted(answered)
    assert all("error" not in r for r in replies), replies
    with Store.open(db) as store:
        assert len(store.list_all()) == 20


# ---- item 8: Ctrl-C ------------------------------------------------------------------------


@pytest.mark.zipapp  # a signal to a process
@pytest.mark.parametrize("when", ["idle", "after-initialize"])
def test_sigint_ends_the_server_with_stdin_still_open(raw: Peer, when: str) -> None:
    if when == "after-initialize":
        raw.initialize({})
        assert raw.request("tools/list")["result"]["tools"]
    else:
        raw.send_line(b"")  # the process is up and reading
        assert raw.request("ping") is not None
    raw.process.send_signal(signal.SIGINT)
    code = raw.process.wait(timeout=WAIT_SECONDS)  # stdin is still open
    assert code in (0, 130), code
    assert raw.process.stderr is not None
    stderr = raw.process.stderr.read().decode(errors="replace")
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr


# ---- item 9: invalid request ids -----------------------------------------------------------


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_invalid_ids_are_answered_with_id_null(raw: Peer, era: str) -> None:
    if era == "legacy":
        raw.initialize({})
    else:
        assert raw.modern("tools/list", {})["result"]["tools"]
    for bad in ("null", "1.5", "{}", '{"a": 1}', "[]", "[1]", "true", "false", "1e3"):
        raw.send_line(b'{"jsonrpc": "2.0", "id": ' + bad.encode() + b', "method": "tools/list"}')
        reply = raw.receive()
        assert reply["id"] is None, (bad, reply)
        assert reply["error"]["code"] == -32600, (bad, reply)
        assert "id" in reply["error"]["message"], reply
        # and the next request is served
        ok = raw.request("tools/list") if era == "legacy" else raw.modern("tools/list", {})
        assert ok["result"]["tools"], ok
    _ended_quietly(raw)


# ---- item 10: a second initialize ----------------------------------------------------------


def test_a_second_initialize_is_refused_and_the_first_negotiation_stands(
    raw: Peer, db: Path
) -> None:
    first = raw.initialize({})
    assert first["result"]["protocolVersion"] == LEGACY
    second = raw.request(
        "initialize",
        {
            "protocolVersion": LEGACY,
            "capabilities": {"extensions": {SKILLS_EXTENSION: {}}},
            "clientInfo": {"name": "impostor", "version": "6.6"},
        },
    )
    assert second["error"]["code"] == -32600, second
    assert "already" in second["error"]["message"], second
    tools = {t["name"] for t in raw.request("tools/list")["result"]["tools"]}
    assert "help" in tools  # still judged by the first initialize
    saved = raw.request(
        "tools/call",
        {"name": "skillSave", "arguments": {"name": "who-am-i", "description": "d", "body": "b"}},
    )
    assert saved["result"].get("isError") is not True, saved
    _ended_quietly(raw)
    with Store.open(db) as store:
        assert store.audit(name="who-am-i")[0].who == "raw-peer 1.0"


# ---- item 11: requests before initialize -------------------------------------------------


def test_requests_before_initialize_say_what_is_wrong(raw: Peer) -> None:
    for method in ("tools/list", "resources/list", "tools/call"):
        reply = raw.request(method, {"name": "help"} if method == "tools/call" else {})
        error = reply["error"]
        assert error["code"] in (-32600, -32602), reply
        assert "initialize" in error["message"] and "_meta" in error["message"], reply
    missing = raw.request("no/such/method", {})
    assert missing["error"]["code"] == -32601, missing
    assert raw.initialize({})["result"]["protocolVersion"] == LEGACY
    assert raw.request("tools/list")["result"]["tools"]
    _ended_quietly(raw)


# ---- item 12: resource URIs ---------------------------------------------------------------


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_user_skill_uris_need_their_scheme_and_errors_stay_short(
    raw: Peer, db: Path, era: str
) -> None:
    _live(db, "seed")

    def read(uri: str) -> dict[str, Any]:
        params = {"uri": uri}
        return (
            raw.request("resources/read", params)
            if era == "legacy"
            else raw.modern("resources/read", params)
        )

    if era == "legacy":
        raw.initialize({})
    assert read("user-skill://seed")["result"]["contents"][0]["text"].startswith("---")
    for uri in (
        "seed",
        "/seed",
        "skill://seed",
        "user-skill:seed",
        "USER-SKILL://seed",
        "x://seed",
    ):
        reply = read(uri)
        assert reply.get("error", {}).get("code") == -32602, (uri, reply)
    huge = "user-skill://" + "s" * 100_000
    for uri in (huge, "x" * 100_000):
        reply = read(uri)
        assert reply["error"]["code"] == -32602, str(reply)[:300]
        assert len(json.dumps(reply)) < 2_000, len(json.dumps(reply))
    reply = (
        raw.request("tools/call", {"name": "n" * 100_000, "arguments": {}})
        if era == "legacy"
        else raw.modern("tools/call", {"name": "n" * 100_000, "arguments": {}})
    )
    assert reply["error"]["code"] == -32602 and len(json.dumps(reply)) < 2_000, str(reply)[:300]
    _ended_quietly(raw)


# ---- item 13: one notification per change per session ---------------------------------------


def test_repeated_subscribes_give_one_notification_per_change(raw: Peer, db: Path) -> None:
    _live(db, "watched", "other")
    uri = "user-skill://watched"
    raw.initialize({})
    for _ in range(3):
        assert "result" in raw.request("resources/subscribe", {"uri": uri})
    # The server's own write: every notification for it is sent before the tool's reply.
    out = raw.request("tools/call", {"name": "skillUnpublish", "arguments": {"name": "watched"}})
    assert out["result"].get("isError") is not True, out
    methods = [(m["method"], m.get("params", {}).get("uri")) for m in raw.seen]
    assert methods.count(("notifications/resources/list_changed", None)) == 1, methods
    assert methods.count(("notifications/resources/updated", uri)) == 1, methods
    raw.seen.clear()
    raw.request("tools/call", {"name": "skillUnpublish", "arguments": {"name": "other"}})
    methods = [(m["method"], m.get("params", {}).get("uri")) for m in raw.seen]
    assert methods == [  # the live set changed (resources and prompts); not subscribed: no update
        ("notifications/resources/list_changed", None),
        ("notifications/prompts/list_changed", None),
    ], methods
    _ended_quietly(raw)


# ---- item 14: NUL in a search --------------------------------------------------------------


@pytest.mark.parametrize("q", ["a\x00b", "\x00funds", "compare funds\x00"])
def test_nul_in_a_search_is_refused_with_its_own_message(raw: Peer, db: Path, q: str) -> None:
    _live(db, "compare-funds")
    raw.initialize({})
    reply = raw.request("tools/call", {"name": "skills", "arguments": {"q": q}})
    text = _text(reply)
    assert reply["result"]["isError"] is True, reply
    assert "NUL" in text, text
    assert "busy" not in text and "unterminated" not in text, text
    _ended_quietly(raw)


@pytest.mark.zipapp  # a process's start: the zipapp unpacks and imports while stdin closes
def test_stdin_eof_after_a_slow_start_still_answers(pyz: Path, shiv_root: Path, db: Path) -> None:
    """A request written, stdin closed at once: the answer still comes before the exit."""
    process = subprocess.Popen(
        server_command(pyz),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(shiv_root, db),
    )
    out, err = process.communicate(_init_line().encode() + b"\n", timeout=60)
    assert process.returncode == 0, err
    (reply,) = [json.loads(line) for line in out.splitlines()]
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "kite-skills"


@pytest.mark.zipapp  # the command line of the shipped file
def test_the_db_flag_chooses_the_store(pyz: Path, shiv_root: Path, tmp_path: Path) -> None:
    """`kite-skills --db PATH` serves that file, over KITE_SKILLS_DB."""
    chosen = tmp_path / "chosen" / "mine.db"
    from_env = tmp_path / "from-env.db"
    save = {"name": "flagged", "description": "Saved via --db", "body": "# Flag\n"}
    payload = "".join(
        f"{line}\n" for line in [_init_line(), INITIALIZED, _call_line(2, "skillSave", save)]
    )
    done = subprocess.run(
        [*server_command(pyz), "--db", str(chosen)],
        input=payload.encode(),
        capture_output=True,
        env=server_env(shiv_root, from_env),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert replies[-1]["result"]["structuredContent"]["status"] == "draft", replies
    assert not from_env.exists()
    with Store.open(chosen) as store:
        assert store.get("flagged").status == "draft"
