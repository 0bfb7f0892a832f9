"""Ctrl-C ends the server at once with exit code 130 and no traceback (issue 24): at any point
of a start, and when the client stopped reading, so that every write waits on a full stdout
pipe. Real subprocesses running the sources (no zipapp), real SIGINT."""

from __future__ import annotations

import array
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .harness import MODERN, ROOT, sigint_at_default

WAIT_SECONDS = 60  # a bound for a broken server to be seen hanging, never a measured time

# Sends SIGINT to itself as soon as the module named by argv[1] starts being imported, then
# runs the server as an MCP client launches it (no arguments).
INTERRUPTED_START = """
import os, signal, sys
WHEN = sys.argv[1]
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == WHEN:
            sys.meta_path.remove(self)
            sys.stderr.write("interrupting at " + name + "\\n")
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, Interrupt())
sys.argv = ["kite-skills"]
from kite_skills.cli import main
sys.exit(main())
"""

SERVER = (
    "import sys; sys.argv = ['kite-skills']; from kite_skills.cli import main; sys.exit(main())"
)


def _env(db: Path) -> dict[str, str]:
    return {
        "PYTHONPATH": str(ROOT),
        "KITE_SKILLS_DB": str(db),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    }


def _ended(process: subprocess.Popen[bytes]) -> tuple[int, str]:
    """Exit code and stderr; a process still running after the bound is killed (a failure)."""
    try:
        code = process.wait(timeout=WAIT_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        assert process.stderr is not None
        stderr = process.stderr.read().decode(errors="replace")
        raise AssertionError(
            f"still running {WAIT_SECONDS}s after Ctrl-C; stderr: {stderr}"
        ) from None
    assert process.stderr is not None
    return code, process.stderr.read().decode(errors="replace")


@pytest.mark.parametrize(
    "module",
    [
        "kite_skills.launcher.bytecode",  # the first thing the server start does
        "mcp",  # loading the MCP stack: most of a start
        "markdown_it",  # loading the catalog
        "anyio._backends._asyncio",  # the event loop starting
        "anyio._core._signals",  # serving begins: the Ctrl-C handler is being set up
    ],
)
def test_ctrl_c_during_a_start_exits_130_without_a_traceback(tmp_path: Path, module: str) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED_START, module],
        stdin=subprocess.PIPE,  # kept open: only Ctrl-C can end it
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(tmp_path / "skills.db"),
        preexec_fn=sigint_at_default,  # as a terminal starts it, even from a background job
    )
    try:
        code, stderr = _ended(process)
    finally:
        assert process.stdin is not None
        process.stdin.close()
    assert f"interrupting at {module}" in stderr, stderr  # the signal came where meant
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert code == 130, (code, stderr)
    assert process.stdout is not None and process.stdout.read() == b""


def _list_tools(n: int) -> bytes:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "never-reads", "version": "1"},
    }
    message: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": n,
        "method": "tools/list",
        "params": {"_meta": meta},
    }
    return json.dumps(message).encode() + b"\n"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are Linux's")
def test_ctrl_c_ends_a_server_whose_client_stopped_reading(tmp_path: Path) -> None:
    import fcntl
    import termios

    process = subprocess.Popen(
        [sys.executable, "-c", SERVER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,  # never read
        stderr=subprocess.PIPE,
        env=_env(tmp_path / "skills.db"),
        preexec_fn=sigint_at_default,  # as a terminal starts it, even from a background job
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        out = process.stdout.fileno()
        capacity = fcntl.fcntl(out, fcntl.F_SETPIPE_SZ, 4096)  # the smallest a pipe can be
        process.stdin.write(b"".join(_list_tools(n) for n in range(1, 51)))  # ~15 KB in,
        process.stdin.flush()  # ~250 KB of replies out
        waiting = array.array("i", [0])
        for _ in range(WAIT_SECONDS * 20):  # until the server's writes fill the pipe
            fcntl.ioctl(out, termios.FIONREAD, waiting)
            if waiting[0] >= capacity:
                break
            time.sleep(0.05)
        else:
            raise AssertionError(f"stdout never filled ({waiting[0]} of {capacity} bytes)")
        process.send_signal(signal.SIGINT)
        code, stderr = _ended(process)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdin is not None:
            try:
                process.stdin.close()
            except BrokenPipeError:
                pass
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert code == 130, (code, stderr)
