"""What the server tests share: where the server runs (:data:`IN_PROCESS`, or the built
zipapp for tests marked ``zipapp``), the SDK client over its stdio wire, and a raw JSON-lines
peer for what the SDK client cannot send.

In process, the real server (``app.serve_wire``: the catalog, the store, ``EXCLUDED_TOOLS``,
the stdio wire of kite_skills/mcpkit/stdio.py) runs on a thread of the test process, on OS
pipes, and a :class:`ServerThread` stands in for the subprocess: the same JSON lines go both
ways, and what the server logs is its stderr. What only a process can show (exit codes, signals,
the shiv start, the ``--db`` flag, a tty) stays in the zipapp tests."""

from __future__ import annotations

import contextvars
import functools
import io
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import traceback
import zipfile
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final, Literal

import anyio
import pytest
from mcp import Client, StdioServerParameters, types
from mcp.client import advertise
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage
from mcp_types import jsonrpc_message_adapter
from pydantic import ConfigDict, TypeAdapter

from kite_skills import catalog
from kite_skills.launcher import build_info
from kite_skills.server import app
from kite_skills.server.handlers import all_tools
from kite_skills.server.user_skills import UserSkills

from .. import zipapp_guard

ROOT = Path(__file__).resolve().parents[2]
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
TOOLS: Final = frozenset(all_tools(catalog.load(), UserSkills.without_store("not opened")).names())
"""Every tool the server registers (its one registry): the tests iterate it, so a new tool is
covered the moment it is registered."""


class InProcess:
    """Where a server runs when it is not the built zipapp: a thread of this process."""

    def __repr__(self) -> str:
        return "IN_PROCESS"


IN_PROCESS: Final = InProcess()
Target = Path | InProcess  # the built zipapp, or IN_PROCESS


def zipapp() -> Path:
    """The built zipapp; build.sh passes its path. A missing one fails, never skips, and so
    does one built from other sources than this tree (see :func:`stale_sources`), and so does
    a test that asks for it without ``@pytest.mark.zipapp`` (tests/zipapp_guard.py)."""
    zipapp_guard.require_mark("the built zipapp")
    return checked_zipapp()


def sigint_at_default() -> None:
    """``preexec_fn`` for a child that a test interrupts with SIGINT: the child starts with
    SIGINT at its default, whatever this process inherited. A job that a non-interactive shell
    puts in the background (``pytest ... &``) starts with SIGINT ignored, and so would every
    child; Python then never raises KeyboardInterrupt, and the test would see the caller's
    shell, not the server."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def target_for(test: pytest.Item) -> Target:
    """Where ``test``'s server runs: the built zipapp if it is marked ``zipapp``, else in
    this process (the ``target`` fixtures)."""
    return zipapp() if test.get_closest_marker("zipapp") else IN_PROCESS


def checked_zipapp() -> Path:
    """The zipapp build.sh names, refused when missing or built from other sources."""
    path = Path(os.environ.get("KITE_SKILLS_PYZ", ROOT / "dist" / "kite-skills.pyz"))
    if not path.is_file():
        pytest.fail(f"{path} is missing — run ./build.sh first (./build.sh test does)")
    stale = stale_sources(path)
    if stale:
        shown = "; ".join(stale[:5]) + (f"; and {len(stale) - 5} more" if len(stale) > 5 else "")
        pytest.fail(
            f"{path} was not built from the sources in this tree ({shown}) — run ./build.sh "
            "to rebuild it; the zipapp tests would otherwise test old code"
        )
    return path


PACKAGED = ("kite_skills", "skills_catalog")
_ZIP_ROOT = "site-packages/"
# Made by the build inside the packed tree, never in the sources (tools/zipapps.py).
BUILT_HERE = {"skills_catalog/markdown-facts.json", build_info.MEMBER.removeprefix(_ZIP_ROOT)}


@functools.cache
def stale_sources(pyz: Path) -> list[str]:
    """How the package files inside ``pyz`` differ from ``kite_skills/`` and
    ``skills_catalog/`` in this tree, byte for byte (``[]`` when it was built from them).

    Compares content, not times, so a fresh clone (where every file is new) and a touched but
    unchanged file both pass, and an edit without a rebuild always fails."""
    problems: list[str] = []
    with zipfile.ZipFile(pyz) as archive:
        inside = {
            name.removeprefix(_ZIP_ROOT): name
            for name in archive.namelist()
            if name.startswith(tuple(f"{_ZIP_ROOT}{top}/" for top in PACKAGED))
            and not name.endswith("/")
            and "__pycache__" not in name
            and name.removeprefix(_ZIP_ROOT) not in BUILT_HERE
        }
        if not inside:
            return [f"it holds no {' or '.join(PACKAGED)} package"]
        kinds = {Path(rel).suffix for rel in inside} | {".py"}
        for top in PACKAGED:
            for file in sorted((ROOT / top).rglob("*")):
                if not file.is_file() or "__pycache__" in file.parts:
                    continue
                rel = file.relative_to(ROOT).as_posix()
                if rel in inside:
                    if archive.read(inside[rel]) != file.read_bytes():
                        problems.append(f"{rel} changed")
                elif file.suffix in kinds:
                    problems.append(f"{rel} is new")
        problems += [f"{rel} was removed" for rel in sorted(inside) if not (ROOT / rel).is_file()]
    return problems


def server_command(pyz: Path) -> list[str]:
    return [sys.executable, str(pyz)]


def person_command() -> tuple[list[str], dict[str, str]]:
    """``kite-skills`` as a person runs it, in another process: the built zipapp in a test
    marked ``zipapp``, else this tree's sources (``python -m kite_skills``), so that the
    build-free tests still have the person's side as a real other process. Returns the
    command and the environment entries it needs besides the caller's."""
    if zipapp_guard.marked():
        return [sys.executable, str(zipapp())], {}
    return [sys.executable, "-m", "kite_skills"], {"PYTHONPATH": str(ROOT)}


def server_env(shiv_root: Path, db: Path, **extra: str) -> dict[str, str]:
    return {
        "SHIV_ROOT": str(shiv_root),
        "KITE_SKILLS_DB": str(db),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        **extra,
    }


def sdk_client(
    target: Target,
    shiv_root: Path,
    db: Path,
    *,
    mode: Literal["legacy", "auto"],
    skills: bool = False,
    env: dict[str, str] | None = None,
    **kwargs: Any,
) -> Client:
    """The SDK's own client over the server's stdio wire: a subprocess running the zipapp,
    or (``IN_PROCESS``) the server on a thread of this process, on OS pipes."""
    environ = server_env(shiv_root, db, **(env or {}))
    extensions = [advertise(SKILLS_EXTENSION)] if skills else []
    if isinstance(target, InProcess):
        return Client(pipe_transport(db, environ), mode=mode, extensions=extensions, **kwargs)
    params = StdioServerParameters(command=sys.executable, args=[str(target)], env=environ)
    return Client(params, mode=mode, extensions=extensions, **kwargs)


_SERVING: contextvars.ContextVar[ServerThread | None] = contextvars.ContextVar(
    "kite_skills_tests_serving", default=None
)


class _ItsLog(logging.Handler):
    """What one in-process server logs, formatted as serve_stdio's stderr does."""

    def __init__(self, owner: ServerThread) -> None:
        super().__init__(logging.WARNING)
        self.owner = owner
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("kite-skills: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if _SERVING.get() is not self.owner:
            return  # another server's, or the test's own
        if record.name == "mcp.server.runner" and not app._quiet_drops(record):
            return  # serve_stdio filters those out too
        self.lines.append(self.format(record))


class ServerThread:
    """A stand-in for ``subprocess.Popen`` of the server: ``app.serve_wire`` on a thread, with
    ``stdin``/``stdout`` pipes the peer writes and reads, and ``stderr`` holding what the
    server logged once it has ended. ``kill`` closes stdin (a thread cannot be killed):
    kills, signals and exit codes beyond 0 are the zipapp tests' business."""

    def __init__(self, db: Path, environ: Mapping[str, str]) -> None:
        in_read, in_write = os.pipe()
        out_read, out_write = os.pipe()
        self.stdin = os.fdopen(in_write, "wb")
        self.stdout = os.fdopen(out_read, "rb")
        self.stderr = io.BytesIO()
        self.returncode: int | None = None
        self._log = _ItsLog(self)
        logging.getLogger().addHandler(self._log)
        self._thread = threading.Thread(
            target=self._serve,
            args=(db, dict(environ), in_read, out_write),
            name=f"kite-skills server on {db.name}",
            daemon=True,
        )
        self._thread.start()

    def _serve(self, db: Path, environ: dict[str, str], in_read: int, out_write: int) -> None:
        _SERVING.set(self)
        code = 1
        try:
            # serve_wire closes the fd it writes; ours stays open until it has returned, so
            # the peer sees EOF exactly when the server is done (never a reused fd number).
            code = app.serve_wire(db, environ, stdin_fd=in_read, stdout_fd=os.dup(out_write))
        except BaseException:
            self._log.lines.append(traceback.format_exc())
        finally:
            os.close(out_write)
            os.close(in_read)
            self.returncode = code

    def poll(self) -> int | None:
        return None if self._thread.is_alive() else self.returncode

    def wait(self, timeout: float | None = None) -> int:
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise subprocess.TimeoutExpired(self._thread.name, timeout or 0)
        logging.getLogger().removeHandler(self._log)
        if not self.stderr.getvalue():
            self.stderr = io.BytesIO("".join(f"{line}\n" for line in self._log.lines).encode())
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        if not self.stdin.closed:
            self.stdin.close()

    def communicate(self, data: bytes, timeout: float | None = None) -> tuple[bytes, bytes]:
        """Write ``data``, close stdin, and return (stdout, stderr) once the server ends."""
        output: list[bytes] = []
        reader = threading.Thread(target=lambda: output.append(self.stdout.read()), daemon=True)
        reader.start()
        self.stdin.write(data)
        self.stdin.close()
        reader.join(timeout)
        self.wait(timeout)
        return b"".join(output), self.stderr.read()


@asynccontextmanager
async def pipe_transport(db: Path, environ: Mapping[str, str]) -> AsyncIterator[TransportStreams]:
    """A Transport for the SDK client: JSON lines to and from a :class:`ServerThread`."""
    server = ServerThread(db, environ)
    read_in, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_out = anyio.create_memory_object_stream[SessionMessage](0)

    async def from_server() -> None:
        async with read_in:
            while line := await anyio.to_thread.run_sync(server.stdout.readline):
                try:
                    message: SessionMessage | Exception = SessionMessage(
                        jsonrpc_message_adapter.validate_json(line)
                    )
                except ValueError as exc:
                    message = exc
                try:
                    await read_in.send(message)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return

    async def to_server() -> None:
        async with write_out:
            async for message in write_out:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await anyio.to_thread.run_sync(_send, server, data.encode() + b"\n")

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(from_server)
            tasks.start_soon(to_server)
            try:
                yield read_stream, write_stream
            finally:
                write_stream.close()
                read_stream.close()
                server.kill()  # stdin EOF: the server answers what it was asked, then ends
    finally:
        server.kill()
        await anyio.to_thread.run_sync(server.stdout.read)  # to EOF: nothing left blocked
        await anyio.to_thread.run_sync(server.wait, 60)
        server.stdout.close()


def _send(server: ServerThread, data: bytes) -> None:
    server.stdin.write(data)
    server.stdin.flush()


class _CustomParams(types.RequestParams):
    model_config = ConfigDict(extra="allow")


async def custom_request(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Send a non-spec request (skills/list, skills/get) through the SDK client."""

    class CustomRequest(types.Request[_CustomParams | None, str]):
        pass

    request = CustomRequest(method=method, params=_CustomParams(**params))
    return await client.session.send_request(request, TypeAdapter(dict[str, Any]))


def run_server(
    target: Target, shiv_root: Path, db: Path, payload: bytes, timeout: float = 120
) -> tuple[int, bytes, bytes]:
    """Write ``payload`` to a fresh server, close its stdin at once (as ``printf … |
    kite-skills`` does), and return its exit code, stdout and stderr."""
    if isinstance(target, InProcess):
        server = ServerThread(db, server_env(shiv_root, db))
        out, err = server.communicate(payload, timeout=timeout)
        assert server.returncode is not None
        return server.returncode, out, err
    done = subprocess.run(
        server_command(target),
        input=payload,
        capture_output=True,
        env=server_env(shiv_root, db),
        timeout=timeout,
    )
    return done.returncode, done.stdout, done.stderr


class RawPeer:
    """A JSON-lines peer on the server's stdin/stdout (the zipapp's, or a ServerThread's for
    ``IN_PROCESS``). Keeps stdin open until told."""

    def __init__(self, target: Target, shiv_root: Path, db: Path, **env: str) -> None:
        self.process: subprocess.Popen[bytes] | ServerThread
        if isinstance(target, InProcess):
            self.process = ServerThread(db, server_env(shiv_root, db, **env))
        else:
            self.process = subprocess.Popen(
                server_command(target),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=server_env(shiv_root, db, **env),
            )
        self._next_id = 0
        self.seen: list[dict[str, Any]] = []  # notifications met while waiting for replies

    def send_line(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_line(json.dumps(message).encode())

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError("the server closed stdout (see its stderr)")
        return json.loads(line)

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and return its response (notifications met on the way are kept)."""
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            reply = self.receive()
            if reply.get("id") == self._next_id:
                return reply
            self.seen.append(reply)

    def initialize(self, capabilities: dict[str, Any]) -> dict[str, Any]:
        reply = self.request(
            "initialize",
            {
                "protocolVersion": LEGACY,
                "capabilities": capabilities,
                "clientInfo": {"name": "raw-peer", "version": "1.0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def modern(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        capabilities: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A 2026-07-28 request carrying its own envelope in ``_meta``."""
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": capabilities or {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw-peer", "version": "1.0"},
        }
        return self.request(method, {**(params or {}), "_meta": meta})

    def close(self, timeout: float = 10) -> tuple[int, str]:
        """Close stdin and return (exit code, stderr)."""
        assert self.process.stdin is not None and self.process.stderr is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=timeout)
        return code, self.process.stderr.read().decode(errors="replace")
