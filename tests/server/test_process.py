"""The server as a process (issue 3, behaviour 8): a clean stdout, quiet ends on stdin EOF,
a closed stdout and SIGTERM, a broken catalog refused at start-up, a person on a TTY."""

from __future__ import annotations

import json
import os
import pty
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .harness import ROOT, SKILLS_EXTENSION, RawPeer, server_command, server_env


@pytest.mark.zipapp
def test_stdout_carries_only_json_rpc(pyz: Path, shiv_root: Path, db: Path) -> None:
    """Every line on stdout is a JSON-RPC message, even while the server logs warnings,
    refuses bad input and writes to the store, and sends its log lines to the client at the
    most verbose level (which stderr does not follow: it keeps to warnings)."""
    peer = RawPeer(pyz, shiv_root, db, EXCLUDED_TOOLS="noSuchTool")
    lines: list[bytes] = []
    assert peer.process.stdout is not None
    peer.initialize({"extensions": {SKILLS_EXTENSION: {}}})
    assert peer.request("logging/setLevel", {"level": "debug"})["result"] == {}
    for method, params in [
        ("tools/list", {}),
        ("tools/call", {"name": "help", "arguments": {}}),
        ("tools/call", {"name": "skillSave", "arguments": {"name": "x y"}}),
        (
            "tools/call",
            {
                "name": "skillSave",
                "arguments": {"name": "my-notes", "description": "Mine", "body": "# Mine\n"},
            },
        ),
        ("tools/call", {"name": "skills", "arguments": {"q": '"unbalanced ( NEAR'}}),
        ("tools/call", {"name": "nope", "arguments": {}}),
        ("skills/get", {"uri": "skill://nope/SKILL.md"}),
        ("resources/read", {"uri": "skill://orders/SKILL.md"}),
        ("resources/list", {}),
        ("no/such/method", {}),
    ]:
        peer._next_id += 1
        peer.send({"jsonrpc": "2.0", "id": peer._next_id, "method": method, "params": params})
        while True:
            line = peer.process.stdout.readline()
            assert line, "the server closed stdout"
            lines.append(line)
            if json.loads(line).get("id") == peer._next_id:
                break
    peer.send_line(b"{broken")
    lines.append(peer.process.stdout.readline())
    code, stderr = peer.close()
    lines += peer.process.stdout.read().splitlines(keepends=True)
    assert code == 0, stderr
    assert "noSuchTool" in stderr  # the warning went to stderr, not stdout
    assert "create my-notes via mcp" not in stderr  # a debug line: the client's only
    logged = []
    for line in lines:
        assert line.endswith(b"\n")
        message = json.loads(line)
        assert isinstance(message, dict) and message["jsonrpc"] == "2.0", line
        assert ("result" in message) != ("error" in message) or "method" in message, line
        if message.get("method") == "notifications/message":
            logged.append(message["params"]["data"])
    assert any(text.startswith("create my-notes via mcp by ") for text in logged), logged


@pytest.mark.zipapp
def test_stdin_eof_ends_quietly(raw: RawPeer, db: Path) -> None:
    raw.initialize({})
    assert raw.request("tools/list")["result"]["tools"]
    code, stderr = raw.close()
    assert code == 0, stderr
    assert stderr == f"kite-skills: user skills in {db}\n"  # the one start-up line


@pytest.mark.zipapp
def test_stdin_eof_before_anything(raw: RawPeer, db: Path) -> None:
    code, stderr = raw.close()
    assert code == 0, stderr
    assert stderr == f"kite-skills: user skills in {db}\n"


@pytest.mark.parametrize("where", ["in-process", pytest.param("zipapp", marks=pytest.mark.zipapp)])
def test_closed_stdout_ends_quietly(raw: RawPeer, where: str) -> None:
    raw.initialize({})
    assert raw.process.stdout is not None
    raw.process.stdout.close()  # the client went away without closing our stdin
    for i in range(20):
        try:
            raw.send({"jsonrpc": "2.0", "id": 100 + i, "method": "resources/list"})
        except BrokenPipeError:
            break  # the server is gone already
        time.sleep(0.02)
    assert raw.process.stdin is not None and raw.process.stderr is not None
    try:
        raw.process.stdin.close()
    except BrokenPipeError:
        pass
    code = raw.process.wait(timeout=10)
    stderr = raw.process.stderr.read().decode(errors="replace")
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr


@pytest.mark.zipapp
def test_sigterm_exits_promptly(raw: RawPeer) -> None:
    raw.initialize({})
    assert raw.request("tools/list")["result"]["tools"]
    started = time.monotonic()
    raw.process.send_signal(signal.SIGTERM)
    raw.process.wait(timeout=5)
    assert time.monotonic() - started < 5
    assert raw.process.stderr is not None
    assert "Traceback" not in raw.process.stderr.read().decode(errors="replace")


def test_broken_catalog_fails_at_start_up(tmp_path: Path) -> None:
    """`python -m kite_skills` from this tree, with a broken copy of the embedded catalog
    shadowing the real one: start-up fails with every problem on stderr, before reading a
    request. The code under test is this tree's, not whatever kite_skills is installed."""
    shadow = tmp_path / "shadow"
    catalog_copy = shadow / "skills_catalog"
    shutil.copytree(ROOT / "skills_catalog", catalog_copy, ignore=shutil.ignore_patterns("*.pyc"))
    skill = catalog_copy / "orders" / "SKILL.md"
    skill.write_text(skill.read_text().replace("name: orders", "name: Not A Name", 1))
    page = catalog_copy / "holdings" / "positions.md"
    page.write_text(page.read_text() + "\nSee [gone](missing-page.md).\n")
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    env = {
        **server_env(tmp_path / "shiv", tmp_path / "s.db"),
        "PYTHONPATH": os.pathsep.join([str(shadow), str(ROOT)]),
    }
    where = subprocess.run(
        [
            sys.executable,
            "-c",
            "import kite_skills as k, skills_catalog as c; print(k.__file__); print(c.__file__)",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=30,
        check=True,
    ).stdout.split()
    assert where == [
        str(ROOT / "kite_skills" / "__init__.py"),
        str(catalog_copy / "__init__.py"),
    ]
    run = subprocess.run(
        [sys.executable, "-m", "kite_skills"],
        input=json.dumps(request).encode() + b"\n",
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=30,
    )
    stderr = run.stderr.decode()
    assert run.returncode != 0, stderr
    assert run.stdout == b"", run.stdout  # nothing was answered: no request was read
    assert "cannot start" in stderr
    assert "orders/SKILL.md" in stderr and "holdings/positions.md" in stderr, stderr
    assert "Traceback" not in stderr, stderr


@pytest.mark.zipapp
def test_a_person_on_a_tty_gets_one_line(pyz: Path, shiv_root: Path, db: Path) -> None:
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        server_command(pyz),
        stdin=secondary,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(shiv_root, db),
    )
    os.close(secondary)
    try:
        assert process.stderr is not None
        ready, _, _ = select.select([process.stderr], [], [], 20)
        assert ready, "no line on stderr"
        line = process.stderr.readline().decode()
        assert "serving MCP on stdio" in line
        # The command that works here: a downloaded file has no 'kite-skills' command.
        assert f"run '{shlex.join([*server_command(pyz), '--help'])}' for the commands" in line
        os.write(primary, b"\x04")  # Ctrl-D: end of input, as a person would type
        code = process.wait(timeout=10)
        rest = process.stderr.read().decode()
        assert process.stdout is not None
        assert process.stdout.read() == b""
        assert code == 0, rest
        assert rest == "", rest
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(primary)
