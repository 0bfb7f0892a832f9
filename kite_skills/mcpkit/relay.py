"""A relay for requests the SDK need not build: a proxy's ``tools/call`` passed to a stdio
upstream as JSON-RPC bytes, and the upstream's reply passed back with the client's id.

Why: a proxy built of the SDK's server and client (``mcp`` 2.3.0) parses each request into
pydantic models, sends it again through ``Client.call_tool`` (``mcp/client/session.py:540``
``send_request``: dump, stamp, dispatch, then ``validate_server_result`` and a second
``validate_python`` of the reply), hands the ``CallToolResult`` back to its server, which
serialises it again (``mcp/server/runner.py:341`` ``_serialize``). Measured in bench section 8
(2026-12-05), that costs about 1.5 ms a call, 2.6× the same read made directly. And the
re-serialised reply is not the upstream's: on a 2026-07-28 upstream a handshake-era client
got the upstream's ``_meta.serverInfo`` stamp, which the upstream itself never sends that era.

:class:`UpstreamPipes` runs a stdio upstream (what the SDK's ``stdio_client`` does: its own
process group, stdin closed then the group ended at exit) and serves the SDK's ``Client`` as a
transport, while letting :class:`Relay` take the replies to the requests it sent. The relay
asks its owner which requests to take (``upstream_params``: the params to send upstream, or
None for the SDK's way) and what to answer when the upstream is silent (``timed_out``). A
relayed request is remapped to an id of its own (``kite-relay-N``); its reply is the
upstream's line with only the id's member replaced (an error reply is clipped like every
error, :func:`kite_skills.mcpkit.stdio.bounded`). A ``notifications/cancelled`` for a relayed
request goes upstream with the relayed id, and a late reply is dropped. POSIX only: on
Windows the SDK's transport (Job Objects) serves the upstream and nothing is relayed.

Where the time goes is what shapes it: a relayed read is handled in the two threads that read
the pipes (the client's stdin, the upstream's stdout), each writing its line itself, with no
event-loop turn; the CPU a read costs there (about 150 µs live, mostly the interpreter) is
what a second process adds, and under load every wake waits for a core, so it is kept small
(docs/benchmarks.md, 2026-12-05 11:48).
"""

from __future__ import annotations

import json
import json.encoder
import logging
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from itertools import count
from typing import Any, Final

import anyio
import anyio.abc
import anyio.from_thread
import anyio.lowlevel
from mcp.client._transport import TransportStreams
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage
from mcp_types import (
    INTERNAL_ERROR,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    jsonrpc_message_adapter,
)
from mcp_types.methods import serialize_server_result
from pydantic import ValidationError

from . import stdio
from .session import is_modern

log = logging.getLogger("kite_skills.server")

PREFIX: Final = "kite-relay-"
VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"  # a 2026-07-28 request's era
SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
_PREFIX: Final = PREFIX.encode()
_MARK: Final = b'"' + _PREFIX
_REQUEST: Final = frozenset({"jsonrpc", "id", "method", "params"})


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


_DECODER: Final = json.JSONDecoder(parse_constant=_not_json)
_ENCODE: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
# The json module's C encoder (CPython's ``_json``), made once: ``JSONEncoder.encode`` builds
# one at every call, which the relay would pay for each request (compact, not ASCII-only).
_C_ENCODER: Final[Callable[[Any, int], Iterable[str]]] = json.encoder.c_make_encoder(  # type: ignore[attr-defined]
    None, None, json.encoder.encode_basestring, None, ":", ",", False, False, True
)
_ID_MEMBER: Final = re.compile(rb'("id"\s*:\s*"(' + re.escape(PREFIX.encode()) + rb'\d+)")')
EXIT_GRACE_SECONDS: Final = 2.0  # as the SDK's stdio_client: stdin closed, then SIGTERM
KILL_GRACE_SECONDS: Final = 2.0  # then SIGKILL

PARAMS: Final = frozenset({"name", "arguments", "_meta"})  # a read's params, as relayed
PROGRESS: Final = "progressToken"
TICK_SECONDS: Final = 0.05  # how often relayed requests are checked for their deadline
_CALL: Final = b'"tools/call"'
_SESSION: Final = (b'"initialize"', b'"notifications/initialized"', b'"notifications/cancelled"')
MODERN_META: Final = (VERSION_KEY, "io.modelcontextprotocol/clientInfo",
                      "io.modelcontextprotocol/clientCapabilities")  # fmt: skip


class UpstreamPipes:
    """A stdio upstream whose lines the SDK's client and a :class:`Relay` share."""

    def __init__(self, argv: list[str], env: dict[str, str] | None) -> None:
        self.argv = argv
        self.env = get_default_environment() | (env or {})
        self.relay: Relay | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._input: stdio._Output | None = None

    def send(self, data: bytes) -> None:
        """Write one line to the upstream's stdin from any thread, without waiting for a
        full pipe: in this thread when the pipe takes the whole line at once (the relay's
        request skips a thread hop), else queued for the writer's thread."""
        out = self._input
        if out is None:
            return  # the upstream is stopping: nothing more goes to it
        if out.lock.acquire(blocking=False):
            try:
                try:
                    written = os.write(out.fd, data)
                except BlockingIOError:
                    written = 0
                except OSError:
                    return  # the upstream closed its stdin: the deadline answers the client
                if written:
                    stdio._write_all(out.fd, data[written:])  # the rest of a line begun
                    return
            finally:
                out.lock.release()
        out.put(data, _ignore)

    def start(self) -> None:
        """Start the upstream (in its own process group, as the SDK's ``stdio_client`` does),
        so that a command that cannot run is said at once; :meth:`transport` connects it,
        and stops it when done."""
        self._process = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=self.env,
            start_new_session=True,
        )

    async def stop_unused(self) -> None:
        """Stop an upstream started and never connected (the client went first)."""
        if self._process is not None and self._input is None:
            await _stop(self._process, None)

    @asynccontextmanager
    async def transport(self) -> AsyncIterator[TransportStreams]:
        """The SDK ``Client``'s transport: the upstream's other messages, for its session."""
        if self._process is None:
            self.start()
        process = self._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        os.set_blocking(process.stdin.fileno(), False)
        self._input = writer = stdio._Output(process.stdin.fileno())
        token = anyio.lowlevel.current_token()
        to_session, from_upstream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        to_upstream, from_session = anyio.create_memory_object_stream[SessionMessage](0)

        def deliver(item: object) -> None:
            """In the reader thread: a relayed reply is answered here; the rest go to the SDK."""
            if not isinstance(item, bytes):
                if item is stdio._EOF:
                    anyio.from_thread.run_sync(to_session.close, token=token)
                return
            try:
                if self.relay is not None and self.relay.replied(item):
                    return
            except Exception:  # a fault of the fast path must not stop the upstream's replies
                log.exception("the relay could not read a reply; it goes to the SDK's client")
            try:
                message: SessionMessage | Exception = SessionMessage(
                    jsonrpc_message_adapter.validate_json(item, by_name=False)
                )
            except ValidationError as exc:
                log.error("the upstream sent a line that is not JSON-RPC: %s", exc)
                message = exc
            anyio.from_thread.run(to_session.send, message, token=token)

        async def write_in() -> None:
            async with from_session:
                async for message in from_session:
                    dumped = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    try:
                        await writer.write(dumped.encode() + b"\n")
                    except OSError:
                        await to_session.aclose()
                        return

        reader = threading.Thread(
            target=stdio._read_lines,
            args=(process.stdout.fileno(), deliver),
            name="kite-skills upstream stdout",
            daemon=True,
        )
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(write_in)
                reader.start()
                try:
                    yield from_upstream, to_upstream
                finally:
                    tasks.cancel_scope.cancel()
        finally:
            self._input = None
            self._process = None
            with anyio.CancelScope(shield=True):
                await _stop(process, writer)


def _ignore(error: OSError | None) -> None:
    """A line for the upstream was written, or not (a dead upstream answers nothing)."""


async def _stop(process: subprocess.Popen[bytes], writer: stdio._Output | None) -> None:
    """The MCP spec's shutdown, as the SDK's stdio_client does it: close stdin, wait, then end
    the process group (SIGTERM, then SIGKILL)."""
    assert process.stdin is not None and process.stdout is not None
    if writer is not None:
        writer.close()
        writer.lock.acquire()  # no line is being written when stdin closes
    try:
        process.stdin.close()
    except OSError:
        pass
    finally:
        if writer is not None:
            writer.lock.release()
    for sig, grace in ((None, EXIT_GRACE_SECONDS), (signal.SIGTERM, KILL_GRACE_SECONDS)):
        if sig is not None:
            try:
                os.killpg(process.pid, sig)
            except OSError:
                break
        with anyio.move_on_after(grace):
            while process.poll() is None:
                await anyio.sleep(0.01)
        if process.returncode is not None:
            break
    else:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
    process.stdout.close()


class Relay:
    """Requests relayed to an :class:`UpstreamPipes`, and their replies.

    Only a request in the upstream connection's own era (``version``) is relayed: a reply's
    shape is its era's (a 2026-07-28 result carries ``resultType`` and the ``serverInfo``
    stamp), so the upstream's bytes are the client's answer only when both speak the same.
    ``upstream_params(params)`` is the owner's choice for a client's ``tools/call`` params:
    the params to send upstream, or None to leave the request to the SDK. ``timed_out(name)``
    is the result answered when the upstream has not replied within ``timeout`` seconds (the
    relayed request is then cancelled upstream), in the era's shape with the proxy's own
    ``server_info`` stamp, as the SDK's server would send it.

    A line is taken only when the SDK's way would have served it: a well-formed request (the
    kit's checks in :func:`kite_skills.mcpkit.stdio.judge`), after the handshake on the
    handshake era, with the three required ``_meta`` entries on the 2026-07-28 era. Anything
    else goes the SDK's way and gets the answer it gets today."""

    def __init__(
        self,
        pipes: UpstreamPipes,
        version: str,
        *,
        upstream_params: Callable[[dict[str, Any]], dict[str, Any] | None],
        timed_out: Callable[[str], CallToolResult],
        timeout: float,
        server_info: dict[str, Any],
    ) -> None:
        self.pipes = pipes
        self.version = version
        self.upstream_params = upstream_params
        self.timed_out = timed_out
        self.timeout = timeout
        self.server_info = server_info
        self._asked: str | None = None  # the version the client's initialize asked for
        self._opened = False  # the client said notifications/initialized
        self._ids = count(1)
        # relayed id → the client's id (and as JSON), the tool, when it was sent (monotonic)
        self._pending: dict[str, tuple[str | int, bytes, str, float]] = {}
        self._lock = threading.Lock()
        self._output: stdio._Output | None = None
        self._tasks: anyio.abc.TaskGroup | None = None
        self._token: anyio.lowlevel.EventLoopToken | None = None
        pipes.relay = self

    def serve(self, output: stdio._Output, tasks: anyio.abc.TaskGroup) -> None:
        """Called by :func:`kite_skills.mcpkit.stdio.serve`, in its event loop: where replies
        go, and the task group that stops when the client's stdout breaks."""
        self._output = output
        self._tasks = tasks
        self._token = anyio.lowlevel.current_token()
        tasks.start_soon(self._expire)

    def offer(self, line: bytes) -> bool:
        """In the stdin thread: relay ``line`` (True), or leave it to the SDK (False)."""
        if self._output is None or (_CALL not in line and not any(m in line for m in _SESSION)):
            return False
        plain = line.isascii() and b"\\u" not in line  # then no lone surrogate can be in it
        try:
            text = line.decode("ascii") if plain else line.decode("utf-8", "surrogatepass")
            value = _DECODER.decode(text)
        except (ValueError, RecursionError):  # NaN and Infinity too: not JSON, not relayed
            return False
        if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
            return False
        method, params = value.get("method"), value.get("params")
        if method == "notifications/initialized":
            self._opened = True
            return False
        if not isinstance(params, dict):
            return False
        if method == "initialize" and self._asked is None:
            asked = params.get("protocolVersion")
            self._asked = asked if isinstance(asked, str) else None
        elif method == "notifications/cancelled" and "id" not in value:
            return self._cancel(params.get("requestId"))
        if method != "tools/call" or value.keys() != _REQUEST:
            return False
        client_id = value["id"]
        if not stdio.valid_id(client_id) or (not plain and stdio.lone_surrogate(value)):
            return False
        legacy = self._opened and "_meta" not in params and params.keys() <= PARAMS
        if not legacy and self._era(params) != self.version:
            return False
        if legacy and self._asked != self.version:
            return False
        sent = self.upstream_params(params)
        if sent is None:
            return False
        number = next(self._ids)
        own = b"%d" % client_id if isinstance(client_id, int) else _ENCODE(client_id).encode()
        with self._lock:
            self._pending[f"{PREFIX}{number}"] = (client_id, own, params["name"], time.monotonic())
        params_json = "".join(_C_ENCODER(sent, 0)).encode()
        self.pipes.send(b'{"jsonrpc":"2.0","id":"%s%d","method":"tools/call","params":%s}\n'
                        % (_PREFIX, number, params_json))  # fmt: skip
        return True

    def _era(self, params: dict[str, Any]) -> str | None:
        """The era of a ``tools/call``'s params, when the SDK's server would take them as they
        are (no other members; a ``_meta`` it reads without refusing); else None."""
        if not params.keys() <= PARAMS:
            return None
        meta = params.get("_meta", {})
        if not isinstance(meta, dict) or not stdio.valid_id(meta.get(PROGRESS, 0)):
            return None
        if VERSION_KEY not in meta:
            return self._asked if self._opened else None
        version, info, caps = (meta.get(key) for key in MODERN_META)
        if not isinstance(info, dict) or not isinstance(caps, dict):
            return None
        named = isinstance(info.get("name"), str) and isinstance(info.get("version"), str)
        return version if named and isinstance(version, str) else None

    def _cancel(self, client_id: object) -> bool:
        with self._lock:
            relayed = [k for k, (c, _, _, _) in self._pending.items() if c == client_id]
            for key in relayed:
                del self._pending[key]
        for key in relayed:
            self.pipes.send(_cancelled(key, "cancelled by the client"))
        return bool(relayed)

    async def settled(self) -> None:
        """Returns once every relayed request is answered (stdin's end waits for it)."""
        while self._pending:
            await anyio.sleep(TICK_SECONDS / 5)

    async def _expire(self) -> None:
        """Answers each relayed request the upstream left unanswered for ``timeout`` s."""
        assert self._output is not None and self._tasks is not None
        while True:
            await anyio.sleep(TICK_SECONDS)
            now = time.monotonic()
            with self._lock:
                late = [(k, v) for k, v in self._pending.items() if now - v[3] >= self.timeout]
                for key, _ in late:
                    del self._pending[key]
            for key, (client_id, _, name, _) in late:
                self.pipes.send(_cancelled(key, "timed out"))
                result = self._result(self.timed_out(name))
                try:
                    await self._output.write(
                        _dumps({"jsonrpc": "2.0", "id": client_id, "result": result})
                    )
                except OSError:
                    self._tasks.cancel_scope.cancel()
                    return

    def _result(self, result: CallToolResult) -> dict[str, Any]:
        """``result`` as the SDK's server shapes it for this era (``mcp/server/runner.py``
        ``_serialize``: the version's surface, then ``resultType`` and the stamp)."""
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        shaped = serialize_server_result("tools/call", self.version, dumped)
        if is_modern(self.version):
            shaped.setdefault("resultType", "complete")
            shaped["_meta"] = {SERVER_INFO_KEY: self.server_info}
        return shaped

    def replied(self, line: bytes) -> bool:
        """In the upstream's reader thread: answer the client when ``line`` is the reply to a
        relayed request (True); a late one (cancelled, timed out) is dropped (True)."""
        if _MARK not in line:
            return False
        found = _ID_MEMBER.findall(line)
        if len(found) == 1 and b'"method"' not in line and b'"error"' not in line:
            # a reply with no error is a result: sent on as it came, with the client's id
            member, relayed = found[0]
            entry = self._settle(relayed)
            if entry is not None:
                self._answer(line.replace(member, b'"id":' + entry[1], 1) + b"\n")
            return True
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError):
            return False
        if not isinstance(reply, dict) or "method" in reply:
            return False
        relayed = reply.get("id")
        if not isinstance(relayed, str) or not relayed.startswith(PREFIX):
            return False
        entry = self._settle(relayed.encode())
        if entry is None:
            return True
        if "result" in reply:
            self._answer(_dumps({**reply, "id": entry[0]}))
        else:
            self._answer(_error_line(reply, entry[0]))
        return True

    def _settle(self, relayed: bytes) -> tuple[str | int, bytes, str, float] | None:
        with self._lock:
            return self._pending.pop(relayed.decode(), None)

    def _answer(self, data: bytes) -> None:
        assert self._output is not None and self._tasks is not None
        try:
            self._output.write_now(data)
        except OSError:  # the client closed our stdout: stop serving, as the SDK's way does
            try:
                anyio.from_thread.run_sync(self._tasks.cancel_scope.cancel, token=self._token)
            except (anyio.RunFinishedError, RuntimeError):
                pass


def _cancelled(relayed: str, reason: str) -> bytes:
    params = {"requestId": relayed, "reason": reason}
    return _dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})


def _error_line(reply: dict[str, Any], client_id: str | int) -> bytes:
    """An upstream's error reply, with the client's id, clipped as the kit clips every error."""
    try:
        error = ErrorData.model_validate(reply.get("error"))
    except ValidationError:
        error = ErrorData(code=INTERNAL_ERROR, message="the upstream sent a malformed error")
    message: JSONRPCError = stdio.bounded(JSONRPCError(jsonrpc="2.0", id=client_id, error=error))
    return message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


def _dumps(value: dict[str, Any]) -> bytes:
    return _ENCODE(value).encode() + b"\n"
