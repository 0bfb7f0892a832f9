"""The server's own log lines, for a client that asks for them (``notifications/message``).

Which lines: kite-skills' own (the ``kite_skills`` loggers: the server's and its store's): a
store that stopped or started answering again or was replaced, a skill left out of a listing
because its text is unreadable, a tool or a request that failed, and at debug each change an
agent makes. Each goes as its message on one line, clipped, never with its traceback; no line
quotes a skill's body (tests/server/test_client_log.py holds them to it), and kite-skills holds
no secret to quote. Other loggers are never sent: the SDK's can quote whole messages, skill
bodies included. Everything still goes to stderr as before (warnings and above); the
client's level changes nothing there.

When (the delivery itself is :func:`.protocol.client_logs` and :meth:`.changes.LegacyPeer.log`):

- handshake era (≤ 2025-11-25): after ``logging/setLevel``, the lines at or above that level
  logged while one of the session's requests is handled (sent before its reply), and those of
  its change poller. Before ``logging/setLevel``: none.
- 2026-07-28: only for a request whose ``_meta`` carries ``io.modelcontextprotocol/logLevel``,
  the lines at or above that level logged while it is handled, sent before its reply.

Lines logged by no request and no poller (the start, the read-receipt thread, stdin's end)
stay on stderr.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Final, get_args

from mcp import types
from mcp_types import LoggingLevel

from ..display import clipped, one_line

LOGGER: Final = "kite_skills"
LEVELS: Final[tuple[LoggingLevel, ...]] = get_args(LoggingLevel)  # least severe first
MAX_LINES: Final = 100  # kept for one request; stderr has the rest
MAX_CHARS: Final = 1000  # one line's text


@dataclass(frozen=True)
class Line:
    """One log line as a client may see it."""

    level: LoggingLevel
    text: str


_COLLECTING: ContextVar[list[Line] | None] = ContextVar("kite_skills_client_log", default=None)


def level_of(record: logging.LogRecord) -> LoggingLevel:
    """A Python log level as the protocol's (RFC 5424) name."""
    if record.levelno >= logging.CRITICAL:
        return "critical"
    if record.levelno >= logging.ERROR:
        return "error"
    if record.levelno >= logging.WARNING:
        return "warning"
    if record.levelno >= logging.INFO:
        return "info"
    return "debug"


class _Collector(logging.Handler):
    """Keeps each line of the server's logger for the work that logged it (a request, a
    poll), when that work collects them."""

    def emit(self, record: logging.LogRecord) -> None:
        lines = _COLLECTING.get()
        if lines is None or len(lines) >= MAX_LINES:
            return
        try:
            text = clipped(one_line(record.getMessage()), MAX_CHARS)
        except Exception:  # a bad format string: stderr shows it; the client gets nothing
            return
        lines.append(Line(level_of(record), text))


_COLLECTOR: Final = _Collector()
_SERVERS_LOCK: Final = threading.Lock()
_servers = 0  # serving now, in this process (the tests run several on threads)
_level_before = logging.NOTSET


@contextmanager
def serving() -> Iterator[None]:
    """While a server serves: kite-skills' loggers hand their lines to :func:`collecting`,
    and pass every level, so that a client may ask for any (stderr's handler keeps its own,
    ``app.serve_stdio``). Afterwards they are as they were, so a process that served (a
    test run) logs no more than before."""
    global _servers, _level_before
    logger = logging.getLogger(LOGGER)
    with _SERVERS_LOCK:
        if _servers == 0:
            _level_before = logger.level
            logger.addHandler(_COLLECTOR)
            logger.setLevel(logging.DEBUG)
        _servers += 1
    try:
        yield
    finally:
        with _SERVERS_LOCK:
            _servers -= 1
            if _servers == 0:
                logger.removeHandler(_COLLECTOR)
                logger.setLevel(_level_before)


@contextmanager
def collecting() -> Iterator[list[Line]]:
    """The lines the server logs inside the block, in this task and the threads it runs."""
    lines: list[Line] = []
    token = _COLLECTING.set(lines)
    try:
        yield lines
    finally:
        _COLLECTING.reset(token)


def notifications(
    lines: list[Line], threshold: LoggingLevel | None
) -> list[types.LoggingMessageNotification]:
    """``lines`` at or above ``threshold`` (none when it is None) as notifications."""
    if threshold is None:
        return []
    least = LEVELS.index(threshold)
    return [
        types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(
                level=line.level, logger="kite-skills", data=line.text
            )
        )
        for line in lines
        if LEVELS.index(line.level) >= least
    ]
