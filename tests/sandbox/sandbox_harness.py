"""What the sandbox's end-to-end tests share: `kite-skills sandbox` from this tree in a real
subprocess (``python -m kite_skills sandbox``), the SDK client over its stdio or HTTP, and a
raw JSON-lines peer for what the SDK client cannot send."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from mcp import Client, StdioServerParameters, types

ROOT = Path(__file__).resolve().parents[2]
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
START = "2026-12-02 11:30"  # the default scenario's clock, given with --at as a person would


def env(home: Path) -> dict[str, str]:
    return {
        "PYTHONPATH": str(ROOT),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
    }


def command(journal: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "kite_skills", "sandbox",
        "--journal", str(journal), "--at", START, "--speed", "0.0001", *extra,
    ]  # fmt: skip


def stdio_client(
    home: Path, journal: Path, *, mode: Literal["legacy", "auto"], extra: tuple[str, ...] = ()
) -> Client:
    argv = command(journal, *extra)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env(home))
    return Client(params, mode=mode)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def json_of(result: types.CallToolResult) -> Any:
    assert not result.is_error, text_of(result)
    return json.loads(text_of(result))


class RawPeer:
    """JSON lines on the sandbox's stdin/stdout (stdin stays open until told)."""

    def __init__(
        self, home: Path, journal: Path, *extra: str, environ: dict[str, str] | None = None
    ) -> None:
        self.process = subprocess.Popen(
            command(journal, *extra),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**env(home), **(environ or {})},
        )
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the sandbox closed stdout"
        value = json.loads(line)
        assert isinstance(value, dict)
        return value

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            reply = self.receive()
            if reply.get("id") == self.next_id:
                return reply

    def initialize(self) -> dict[str, Any]:
        reply = self.request(
            "initialize",
            {"protocolVersion": LEGACY, "capabilities": {},
             "clientInfo": {"name": "raw", "version": "1"}},
        )  # fmt: skip
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def close(self, timeout: float = 20) -> tuple[int, str]:
        assert self.process.stdin is not None and self.process.stderr is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=timeout)
        return code, self.process.stderr.read().decode(errors="replace")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@contextmanager
def http_sandbox(
    home: Path, journal: Path, *extra: str, pyz: Path | None = None
) -> Iterator[tuple[int, str, list[str]]]:
    """`kite-skills sandbox --http --port 0` (from this tree, or the built ``pyz``): yields
    (port, token, stderr lines so far)."""
    with _serving(home, journal, *extra, pyz=pyz) as (port, token, lines):
        assert token, f"no bearer token on the sandbox's stderr: {lines}"
        yield port, token, lines


@contextmanager
def oauth_sandbox(
    home: Path, journal: Path, *extra: str, pyz: Path | None = None
) -> Iterator[tuple[int, list[str]]]:
    """`kite-skills sandbox --http --oauth --port 0` (from this tree, or the built ``pyz``):
    yields (port, stderr lines so far)."""
    with _serving(home, journal, "--oauth", *extra, pyz=pyz) as (port, token, lines):
        assert not token, lines
        yield port, lines


@contextmanager
def _serving(
    home: Path, journal: Path, *extra: str, pyz: Path | None = None
) -> Iterator[tuple[int, str, list[str]]]:
    argv = command(journal, "--http", "--port", "0", *extra)
    environment = env(home)
    if pyz is not None:
        argv[1:3] = [str(pyz)]  # python PYZ sandbox …, unpacked under this test's home
        environment["SHIV_ROOT"] = str(home / "shiv")
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment,
    )
    lines: list[str] = []
    found = threading.Event()
    where: dict[str, Any] = {}

    def read() -> None:
        assert process.stderr is not None
        for raw in iter(process.stderr.readline, b""):
            line = raw.decode(errors="replace").rstrip("\n")
            lines.append(line)
            match = re.search(r"serving MCP at http://127\.0\.0\.1:(\d+)/mcp", line)
            if match:
                token = re.search(r"Bearer (\S+?)'", line)
                where.update(port=int(match.group(1)), token=token.group(1) if token else "")
                found.set()
        found.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert found.wait(60) and where, f"the sandbox did not start: {lines}"
        yield where["port"], where["token"], lines
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(20)  # every line it wrote is in ``lines`` once the block ends
