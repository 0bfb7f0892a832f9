"""The stdio wire: one JSON-RPC message per line on stdin and stdout.

The SDK's stdio transport (``mcp`` 2.3.0, ``mcp/server/stdio.py:184-197``: ``async for line in
stdin`` holds each line whole, however long, and passes a line that does not parse to the
session as an exception, not as an answer) is replaced because of what it leaves to chance
(each point below is reproduced against the bare SDK by ``tests/test_sdk_faults.py``, with the
upstream issue where there is one, and its fix here tested by ``tests/server/test_wire_raw.py``
and ``tests/server/test_faults.py``):

- **Every line is judged before the SDK sees it.** Not JSON → -32700; not a message, a batch,
  or a request whose id is not a string or an integer (``null``, ``1.5``, an object, an array,
  ``true``) → -32600 with ``id: null``. The SDK answers none of these (python-sdk#2751); it
  takes a request with an invalid id for a notification and never answers it
  (python-sdk#2057), so the client would wait forever.
- **A line longer than MAX_LINE_BYTES** is refused without being held in memory (the SDK's
  ``async for line in stdin``, ``mcp/server/stdio.py:187``, holds any line whole).
- **At stdin EOF every request already read is answered** (a client that writes its requests
  and closes the pipe gets every reply), within EOF_GRACE_SECONDS, and then the server stops.
  The SDK cancels whatever is in flight at EOF, so work done (a save committed) went unsaid
  (python-sdk#2678).
- **Ctrl-C ends the process.** stdin is read and stdout written by daemon threads with
  ``os.read``/``os.write``, so nothing waits for a read blocked on a pipe that is still open,
  or for a write blocked on a pipe the client stopped reading; SIGINT stops serving and
  :func:`serve` reports it (the caller exits 130). The SDK's worker thread blocked on stdin
  ignores the first Ctrl-C presses (python-sdk#3551).
- **Echoed input is cut short** in every error message, whichever layer wrote it (the SDK's
  "Method not found" carries the method whole in ``data``).
- **A reply that cannot be written** (text JSON cannot carry a lone surrogate) is answered
  -32603; the SDK's writer raises and stops the whole server.
- **stdout belongs to the protocol.** While serving, file descriptor 1 points at stderr, so a
  stray write from any library can never corrupt the wire (the SDK transport does the same).
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
import os
import queue
import re
import select
import signal
import sys
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any, Final, Protocol

import anyio
import anyio.abc
import anyio.from_thread
import anyio.lowlevel
from mcp.server.lowlevel import Server
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from ..display import clipped

log = logging.getLogger("kite_skills.server")

MAX_LINE_BYTES: Final = 16 * 1024 * 1024  # far above any real request (a body is ≤ 64 KiB)
EOF_GRACE_SECONDS: Final = 10.0  # covers the store's 5 s busy timeout with room to spare
MAX_MESSAGE_CHARS: Final = 500  # an error message, echoed input included
MAX_DATA_CHARS: Final = 1000  # an error's ``data``, as JSON
STREAMS: Final = frozenset({"subscriptions/listen"})  # requests that stay open by design


class FastPath(Protocol):
    """Lines served without the SDK (:class:`kite_skills.mcpkit.relay.Relay`)."""

    def serve(self, output: _Output, tasks: anyio.abc.TaskGroup) -> None:
        """In the event loop, before stdin is read: where replies go, what stops serving."""

    def offer(self, line: bytes) -> bool:
        """In the stdin thread: True when the line was taken (the SDK never sees it)."""

    async def settled(self) -> None:
        """Returns once every line taken is answered."""


_EOF: Final = object()
_TOO_LONG: Final = object()


_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def valid_id(value: object) -> bool:
    """MCP request ids are strings or integers; JSON-RPC's ``null`` and fractions are not,
    nor a string holding a lone surrogate (no reply could carry it back)."""
    if isinstance(value, str):
        return value.isascii() or not _LONE_SURROGATE.search(value)
    return isinstance(value, int) and not isinstance(value, bool)


def lone_surrogate(value: object) -> tuple[str, str] | None:
    """Where the first lone surrogate in a parsed JSON value is (``params.arguments.key``,
    or ``a key in params``) and its escape; None when there is none. Iterative: the value may
    be nested as deep as the JSON parser allows."""
    stack: list[tuple[str, object]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            found = None if item.isascii() else _LONE_SURROGATE.search(item)
            if found:
                return path, f"\\u{ord(found.group()):04x}"
        elif isinstance(item, dict):
            children: list[tuple[str, object]] = []
            for key, child in item.items():
                found = None if key.isascii() else _LONE_SURROGATE.search(key)
                if found:
                    where = f"a key in {path}" if path else "a key of the message"
                    return where, f"\\u{ord(found.group()):04x}"
                children.append((f"{path}.{key}" if path else key, child))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", child) for i, child in reversed(list(enumerate(item))))
    return None


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float):
        return "a number with a fraction or exponent"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int):
        return "an integer"
    return type(value).__name__


def _error(code: int, message: str, request_id: object = None) -> JSONRPCError:
    return JSONRPCError(
        jsonrpc="2.0",
        id=request_id if valid_id(request_id) else None,  # type: ignore[arg-type]
        error=ErrorData(code=code, message=message),
    )


NOT_JSON: Final = "parse error: the line is not valid JSON (send one JSON-RPC message per line)"
NOT_A_MESSAGE: Final = "invalid request: not a JSON-RPC 2.0 message"
TOO_LONG: Final = (
    f"invalid request: the line is over {MAX_LINE_BYTES} bytes; no request here is that large"
)
BATCH: Final = (
    "invalid request: batches are not supported by MCP — send one JSON-RPC message per line"
)


def judge(line: bytes) -> list[SessionMessage | JSONRPCError]:
    """What one line of input becomes: a message for the server, or errors to answer."""
    text = line.strip()
    if not text:
        return []  # an empty line carries nothing
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # python-sdk#2751: the SDK answers nothing
        return [_error(PARSE_ERROR, NOT_JSON)]
    if isinstance(value, list):
        # MCP dropped JSON-RPC batches; the SDK drops the line unanswered
        # (tests/test_sdk_faults.py::test_a_batch_gets_no_answer). Answer each request in it (a
        # client waits for those ids), or the whole line when nothing in it can be answered by id.
        ids = [
            m["id"]
            for m in value
            if isinstance(m, dict) and "method" in m and valid_id(m.get("id"))
        ]
        return [_error(INVALID_REQUEST, BATCH, i) for i in ids] or [_error(INVALID_REQUEST, BATCH)]
    if not isinstance(value, dict):
        return [_error(INVALID_REQUEST, f"{NOT_A_MESSAGE} (got {_kind(value)})")]
    request_id = value.get("id") if "method" in value else None  # what a reply can carry
    if "method" in value and "id" in value and not isinstance(request_id, str):
        # python-sdk#2057: the SDK takes it for a notification and never answers it.
        if not valid_id(request_id):  # a string's only fault, a lone surrogate, is named below
            return [
                _error(
                    INVALID_REQUEST,
                    f"invalid request: the id must be a string or an integer, not "
                    f"{_kind(request_id)}; a notification carries no id at all",
                )
            ]
    try:
        message = jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError:
        # What is wrong, named: the SDK's parser refuses every lone surrogate, and any other
        # refusal is the shape of the message. The SDK answers neither
        # (test_a_request_holding_a_lone_surrogate_gets_no_answer).
        found = lone_surrogate(value)
        if found is not None:
            return [_not_unicode(*found, request_id)]
        return [_error(INVALID_REQUEST, NOT_A_MESSAGE + _what_is_wrong(value), request_id)]
    return [SessionMessage(message)]


def _not_unicode(where: str, escape: str, request_id: object) -> JSONRPCError:
    """The error for a lone surrogate: in the id (unusable: answered with ``id: null``), the
    method or another field of the message (-32600), or the params (-32602)."""
    fix = (
        "JSON text must be Unicode: a character outside the Basic Multilingual Plane is "
        "written as a surrogate pair (\\ud83d\\ude00), never half of one"
    )
    top = where.removeprefix("a key in ").split(".")[0].split("[")[0]
    if top == "params":
        return _error(
            INVALID_PARAMS,
            f"invalid params: {clipped(where, 120)} holds a lone surrogate escape ({escape}); "
            + fix,
            request_id,
        )
    field = f"the '{where}'" if where in ("id", "method", "jsonrpc") else clipped(where, 60)
    return _error(
        INVALID_REQUEST,
        f"invalid request: {field} holds a lone surrogate escape ({escape}); " + fix,
        request_id,
    )


def _what_is_wrong(value: dict[str, Any]) -> str:
    """Why an object is not a JSON-RPC 2.0 message, as the end of :data:`NOT_A_MESSAGE`."""
    version = value.get("jsonrpc")
    if version != "2.0":
        got = "it is missing" if "jsonrpc" not in value else f"got {clipped(json.dumps(version))}"
        return f": 'jsonrpc' must be \"2.0\" ({got})"
    if "method" in value:
        method = value["method"]
        if not isinstance(method, str):
            return f": 'method' must be a string (got {_kind(method)})"
        params = value.get("params")
        if "params" in value and not isinstance(params, dict):
            return f" for {clipped(method, 60)}: 'params' must be an object (got {_kind(params)})"
        return (
            f" for {clipped(method, 60)}: it is not a request or a notification this server reads"
        )
    return ": it needs a 'method' (or, as a response, an 'id' and a 'result' or an 'error')"


def bounded(message: Any) -> Any:
    """Cut an error's message and data to a sane length (they may echo input: the SDK's
    "Method not found" carries the method whole, test_an_error_echoes_the_input_whole)."""
    if not isinstance(message, JSONRPCError):
        return message
    error = message.error
    text = clipped(error.message, MAX_MESSAGE_CHARS)
    data = error.data
    if data is not None and len(json.dumps(data, default=str)) > MAX_DATA_CHARS:
        data = clipped(json.dumps(data, default=str), MAX_DATA_CHARS)
    if text == error.message and data is error.data:
        return message
    fields: dict[str, Any] = {"code": error.code, "message": text}
    if data is not None:
        fields["data"] = data
    return JSONRPCError(jsonrpc="2.0", id=message.id, error=ErrorData(**fields))


def _unwritable(message: Any) -> JSONRPCError | None:
    """What to send instead of a message that cannot be written: its request still gets one
    answer; anything else is dropped (it was logged). The SDK's writer raises instead and the
    server stops (test_a_reply_that_cannot_be_written_as_json_ends_the_transport)."""
    request_id = getattr(message, "id", None)
    if not isinstance(message, JSONRPCResponse | JSONRPCError) or not valid_id(request_id):
        return None
    return _error(INTERNAL_ERROR, "internal error: the reply could not be written", request_id)


class _Outstanding:
    """Requests read and not yet answered (by id; a client may reuse one)."""

    def __init__(self) -> None:
        self._ids: Counter[object] = Counter()
        self._empty = anyio.Event()
        self._empty.set()

    def add(self, request_id: object) -> None:
        self._ids[_key(request_id)] += 1
        if self._empty.is_set():
            self._empty = anyio.Event()

    def done(self, request_id: object) -> None:
        key = _key(request_id)
        if self._ids[key] > 0:
            self._ids[key] -= 1
            if self._ids[key] == 0:
                del self._ids[key]
        if not self._ids:
            self._empty.set()

    async def wait_empty(self) -> None:
        await self._empty.wait()


def _key(request_id: object) -> object:
    return (type(request_id).__name__, request_id)


def _read_lines(fd: int, deliver: Callable[[object], None], prelude: bytes = b"") -> None:
    """In a daemon thread: split stdin into lines with ``os.read`` (no Python-level lock is
    held while blocked, so the interpreter can always exit). ``prelude``: what was read from
    ``fd`` before (see :func:`first_line`)."""
    pending = bytearray()
    skipping = False  # inside a line already refused as too long
    try:
        while True:
            if prelude:
                chunk, prelude = prelude, b""
            else:
                try:
                    chunk = os.read(fd, 1 << 16)
                except OSError:
                    chunk = b""
            if not chunk:
                break
            start = 0
            while True:
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                if not skipping:
                    pending += piece
                    if len(pending) > MAX_LINE_BYTES:
                        pending.clear()
                        skipping = True
                        deliver(_TOO_LONG)
                if end < 0:
                    break
                if not skipping:
                    deliver(bytes(pending))
                pending.clear()
                skipping = False
                start = end + 1
        if pending and not skipping:
            deliver(bytes(pending))
        deliver(_EOF)
    except (
        anyio.RunFinishedError,
        anyio.ClosedResourceError,
        anyio.BrokenResourceError,
        concurrent.futures.CancelledError,  # the send was cancelled by the server stopping
    ):
        return  # the server has stopped; nobody is listening


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:  # a non-blocking pipe that is full (the relay's upstream)
            select.select([], [fd], [])
            continue
        view = view[written:]


class _Output:
    """Writes to the wire in a daemon thread, one message at a time. A write blocked on a
    full pipe (the client stopped reading) can be given up: the thread holds nobody up when
    the process exits, which an event loop's worker thread would."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = threading.Lock()  # held for each whole message, by whichever thread writes
        self._jobs: queue.SimpleQueue[tuple[bytes, Callable[[OSError | None], None]] | None]
        self._jobs = queue.SimpleQueue()
        threading.Thread(target=self._run, name="kite-skills stdout", daemon=True).start()

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            data, done = job
            try:
                with self.lock:
                    _write_all(self.fd, data)
            except OSError as exc:
                done(exc)
            else:
                done(None)

    async def write(self, data: bytes) -> None:
        """Write ``data``; cancelling gives the write up (the thread finishes it, or not)."""
        token = anyio.lowlevel.current_token()
        written = anyio.Event()
        failed: list[OSError] = []

        def done(error: OSError | None) -> None:
            if error is not None:
                failed.append(error)
            try:
                anyio.from_thread.run_sync(written.set, token=token)
            except (anyio.RunFinishedError, RuntimeError):
                pass  # the event loop is gone: nobody is waiting any more

        self.put(data, done)
        await written.wait()
        if failed:
            raise failed[0]

    def put(self, data: bytes, done: Callable[[OSError | None], None]) -> None:
        """Queue ``data`` from any thread; ``done`` is called in the writer's thread."""
        self._jobs.put((data, done))

    def write_now(self, data: bytes) -> None:
        """Write ``data`` in the calling thread (not the event loop's), in turn with the
        queued messages: a relayed reply skips two thread hops (mcpkit/relay.py)."""
        with self.lock:
            written = os.write(self.fd, data)
            if written < len(data):
                _write_all(self.fd, data[written:])

    def close(self) -> None:
        self._jobs.put(None)


class _Wire:
    """File descriptors for the wire; fd 1 points at stderr while serving."""

    def __init__(self, stdin_fd: int | None, stdout_fd: int | None) -> None:
        self._restore: int | None = None
        self.input = stdin_fd if stdin_fd is not None else sys.stdin.fileno()
        if stdout_fd is not None:
            self.output = stdout_fd
            return
        sys.stdout.flush()
        self.output = os.dup(1)
        try:
            os.dup2(2, 1)
            self._restore = self.output
        except OSError:  # no stderr to point at: write in place
            pass

    def close(self) -> None:
        if self._restore is not None:
            try:
                os.dup2(self._restore, 1)
            except OSError:
                pass
        if self._restore is not None or self.output not in (0, 1, 2):
            try:
                os.close(self.output)
            except OSError:
                pass


async def first_line(fd: int | None = None) -> bytes:
    """What the client sent first on stdin (up to and with its first newline, or all of it at
    EOF), read in a daemon thread; give it to :func:`serve` as ``prelude``. A proxy reads it
    to learn the client's era before it connects its upstream in the same one."""
    source = fd if fd is not None else sys.stdin.fileno()
    token = anyio.lowlevel.current_token()
    got = anyio.Event()
    read = bytearray()

    def run() -> None:
        while b"\n" not in read and len(read) <= MAX_LINE_BYTES:
            try:
                chunk = os.read(source, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                break
            read.extend(chunk)
        try:
            anyio.from_thread.run_sync(got.set, token=token)
        except (anyio.RunFinishedError, RuntimeError):
            pass  # the caller is gone

    threading.Thread(target=run, name="kite-skills first line", daemon=True).start()
    await got.wait()
    return bytes(read)


async def serve(
    server: Server[Any],
    options: Any,
    *,
    stdin_fd: int | None = None,
    stdout_fd: int | None = None,
    grace: float = EOF_GRACE_SECONDS,
    prelude: bytes = b"",
    relay: FastPath | None = None,
) -> bool:
    """Serve MCP on the wire until stdin ends, stdout breaks or SIGINT; True after SIGINT.
    ``prelude``: the start of stdin, already read (:func:`first_line`); ``relay``: the lines
    it takes skip the SDK (:mod:`kite_skills.mcpkit.relay`)."""
    wire = _Wire(stdin_fd, stdout_fd)
    try:
        return await _serve(server, options, wire, grace, prelude, relay)
    finally:
        wire.close()


async def _serve(
    server: Server[Any],
    options: Any,
    wire: _Wire,
    grace: float,
    prelude: bytes,
    fast_path: FastPath | None,
) -> bool:
    token = anyio.lowlevel.current_token()
    lines_in, lines = anyio.create_memory_object_stream[object](0)
    inbound_writer, inbound = create_context_streams[SessionMessage | Exception](0)
    outbound, outbound_reader = create_context_streams[SessionMessage](0)
    outstanding = _Outstanding()
    interrupted = False

    def deliver(item: object) -> None:
        if fast_path is not None and isinstance(item, bytes):
            try:
                if fast_path.offer(item):
                    return
            except Exception:  # a fault of the fast path must not stop stdin: the SDK's way
                log.exception("the relay could not take a line; it goes the SDK's way")
        anyio.from_thread.run(lines_in.send, item, token=token)

    async def relay() -> None:
        async with inbound_writer, lines:
            async for item in lines:
                if item is _EOF:
                    break
                judged = [_error(INVALID_REQUEST, TOO_LONG)] if item is _TOO_LONG else judge(item)  # type: ignore[arg-type]
                for message in judged:
                    if isinstance(message, JSONRPCError):
                        await outbound.send(SessionMessage(message))
                        continue
                    await _pass_on(message)
            # stdin ended: answer what was asked, then let the server stop (python-sdk#2678:
            # the SDK cancels the requests in flight).
            with anyio.move_on_after(grace) as waited:
                await outstanding.wait_empty()
                if fast_path is not None:
                    await fast_path.settled()
            if waited.cancelled_caught:
                log.warning(
                    "stdin closed; stopped waiting for unanswered requests after %ss", grace
                )

    async def _pass_on(message: SessionMessage) -> None:
        inner = message.message
        if isinstance(inner, JSONRPCRequest) and inner.method not in STREAMS:
            outstanding.add(inner.id)
        elif isinstance(inner, JSONRPCNotification) and inner.method == "notifications/cancelled":
            params = inner.params or {}
            cancelled = params.get("requestId")
            if valid_id(cancelled):
                outstanding.done(cancelled)  # a cancelled request is never answered
            elif "requestId" in params:  # null, an object, an array...: no request has it
                log.debug("ignored notifications/cancelled for requestId %s", clipped(cancelled))
                return
        await inbound_writer.send(message)

    async def write_out(tasks: anyio.abc.TaskGroup) -> None:
        async with outbound_reader:
            async for message in outbound_reader:
                inner = bounded(message.message)
                try:
                    data = inner.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                except ValueError:  # text JSON cannot carry (the input is judged for it)
                    log.exception("a message could not be written as JSON")
                    inner = _unwritable(inner)
                    if inner is None:
                        continue
                    data = inner.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                try:
                    await output.write(data.encode())
                except OSError:  # the client closed our stdout: nothing more can be said
                    tasks.cancel_scope.cancel()
                    return
                if isinstance(inner, JSONRPCResponse | JSONRPCError) and inner.id is not None:
                    outstanding.done(inner.id)

    # python-sdk#3551: the SDK's stdin worker thread ignores Ctrl-C; here SIGINT ends serving.
    async def on_sigint(tasks: anyio.abc.TaskGroup) -> None:
        nonlocal interrupted
        try:
            with anyio.open_signal_receiver(signal.SIGINT) as signals:
                async for _ in signals:
                    interrupted = True
                    tasks.cancel_scope.cancel()
                    return
        except (NotImplementedError, RuntimeError, ValueError):
            # no signal handling here (another platform, or not the main thread)
            await anyio.sleep_forever()

    reader = threading.Thread(
        target=_read_lines,
        args=(wire.input, deliver, prelude),
        name="kite-skills stdin",
        daemon=True,
    )
    output = _Output(wire.output)
    try:
        async with anyio.create_task_group() as tasks:
            if fast_path is not None:
                fast_path.serve(output, tasks)
            tasks.start_soon(on_sigint, tasks)
            async with anyio.create_task_group() as serving:
                serving.start_soon(write_out, tasks)  # ends once the server closes ``outbound``
                serving.start_soon(relay)  # ends at stdin EOF, after the grace period
                reader.start()
                await server.run(inbound, outbound, options)
            tasks.cancel_scope.cancel()
    finally:
        output.close()
    lines_in.close()
    return interrupted
