"""Run the dashboard: bind 127.0.0.1 (never another address), print a sign-in link, open a
browser, serve until Ctrl-C or SIGTERM.

Every local user can read a process's command line (``/proc/PID/cmdline``), so the browser is
never given the secret: it opens a ``file://`` page that only this user may read (0600, as
notebook servers do) and that redirects to a link of its own. Each connection must send its
request within :data:`READ_SECONDS`, and at most a bounded number are kept open (the one
waiting longest for a request is closed for a new one), so idle or half-sent requests from
any local user cannot use up the process's file descriptors.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import html
import logging
import os
import signal
import socket
import sys
import tempfile
import threading
import webbrowser
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from kite_skills import invocation
from kite_skills.errors import KiteError
from kite_skills.store import Store

from .app import build_app
from .security import LINK_SECONDS, Door

HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 7381
READ_SECONDS: Final = 10.0  # to send a whole request (headers and body) once connected
MAX_CONNECTIONS: Final = 256  # at most; lower when the file-descriptor limit is low
LISTEN_QUEUE: Final = 1024  # connections the kernel holds before we accept them (no fds)
_DONE: Final = (h11.DONE, h11.MUST_CLOSE)


class Server(uvicorn.Server):
    """uvicorn re-raises a caught SIGINT/SIGTERM after shutting down (a traceback for Ctrl-C,
    death by signal for SIGTERM); the dashboard just stops and says so.

    asyncio accepts at most ``backlog`` connections in one burst and uvicorn also gives that
    number to the kernel as its queue; the burst is kept small (see :func:`config`), the
    kernel's queue is widened again once serving, so that connecting is never slowed down."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        for sock in sockets or ():
            with contextlib.suppress(OSError):
                sock.listen(LISTEN_QUEUE)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        signals = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in signals}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


class PortInUse(KiteError):
    """The dashboard cannot listen on the port it was given (taken, or no port number)."""


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port`` (0: a free port the kernel picks)."""
    if not 0 <= port <= 65535:
        raise PortInUse(
            f"--port {port} is not a port number: give one from 1 to 65535 (the default is "
            "7381), or --port 0 for a free one"
        )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # Accepted connections inherit it: a response written in two parts (headers, body) would
    # otherwise wait for the browser's delayed ACK, about 40 ms per page on Linux.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUse(
                f"port {port} on {HOST} is in use (another dashboard?): open that one, or "
                "choose another port with --port N, or --port 0 for a free one"
            ) from exc
        raise PortInUse(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from exc
    sock.listen(64)
    return sock


def _say(*parts: object) -> None:
    """One line for the person on stderr (stdout stays free)."""
    sys.stderr.write(" ".join(str(p) for p in parts) + "\n")
    sys.stderr.flush()


def _has_gui_browser() -> bool:
    """A console browser (lynx, w3m) would take over this terminal: open one only where a
    desktop is (macOS, Windows, or a Linux session with a display)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def guarded_protocol(read_seconds: float, max_connections: int) -> type[H11Protocol]:
    """uvicorn's h11 protocol with a deadline for each request and a bound on connections.

    uvicorn times out only idle keep-alive connections after a response: a connection that
    sends nothing, or half a request, stays open for ever. Here a request (headers and body)
    must be in within ``read_seconds`` of the connection opening or the last response, else
    the connection is closed; and when more than ``max_connections`` are open, the one waiting
    longest for its request is closed (a request being answered is never cut off)."""

    class Guarded(H11Protocol):
        _timer: asyncio.TimerHandle | None = None
        waiting_since: float | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._await_request()
            if len(self.connections) > max_connections:
                waiting = [
                    (c.waiting_since, c)
                    for c in self.connections
                    if c is not self and isinstance(c, Guarded) and c.waiting_since is not None
                ]
                oldest = min(waiting, key=lambda pair: pair[0])[1] if waiting else self
                oldest.close_waiting()

        def _await_request(self) -> None:
            self._stop_timer()
            self.waiting_since = self.loop.time()
            self._timer = self.loop.call_later(read_seconds, self._read_timed_out)

        def _stop_timer(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _read_timed_out(self) -> None:
            self._timer = None
            if self.conn.their_state not in _DONE:
                self.close_waiting()

        def close_waiting(self) -> None:
            self._stop_timer()
            self.waiting_since = None
            if not self.transport.is_closing():
                self.transport.close()

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state in _DONE:  # the request is in: the app answers it
                self._stop_timer()
                self.waiting_since = None

        def on_response_complete(self) -> None:
            self._await_request()  # the next request on this connection has its own deadline
            super().on_response_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_timer()
            self.waiting_since = None
            super().connection_lost(exc)

    return Guarded


def _connection_limit() -> int:
    """:data:`MAX_CONNECTIONS`, or a quarter of the file-descriptor limit when that is lower
    (after raising the soft limit towards the hard one where the OS allows). A quarter: asyncio
    accepts a burst of connections before their protocols can close the oldest, and SQLite,
    Python and the log need descriptors too."""
    try:
        import resource
    except ImportError:  # Windows: no such limit to share
        return MAX_CONNECTIONS
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        with contextlib.suppress(ValueError, OSError):
            wanted = 4096 if hard == resource.RLIM_INFINITY else min(hard, 4096)
            if wanted > soft:
                resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
                soft = wanted
    return max(8, min(MAX_CONNECTIONS, soft // 4))


def config(
    app: Any,
    *,
    read_seconds: float = READ_SECONDS,
    max_connections: int | None = None,
) -> uvicorn.Config:
    """How the dashboard is served (tests pass a shorter deadline or a lower bound)."""
    limit = _connection_limit() if max_connections is None else max_connections
    return uvicorn.Config(
        app,
        http=guarded_protocol(read_seconds, limit),
        backlog=max(8, limit // 4),  # also how many asyncio accepts in one burst
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
    )


_OPEN_PAGE: Final = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="0;url={url}">
<title>kite-skills dashboard</title></head>
<body><p>Opening <a href="{url}">the kite-skills dashboard</a>…</p></body></html>
"""


def write_open_page(url: str) -> Path:
    """A page only this user may read (0600: ``mkstemp``) that sends the browser to ``url``."""
    fd, name = tempfile.mkstemp(prefix="kite-skills-dashboard-", suffix=".html")
    with os.fdopen(fd, "w", encoding="utf-8") as page:
        page.write(_OPEN_PAGE.format(url=html.escape(url, quote=True)))
    return Path(name)


def _open_browser(door: Door) -> Path | None:
    """Open the browser on a 0600 page holding a link of its own; its path, for clean-up."""
    page = write_open_page(door.url())
    try:
        webbrowser.open(page.as_uri())
    except Exception:  # no browser here: the printed link is enough
        logging.getLogger(__name__).debug("no browser opened", exc_info=True)
    return page


def _announce(url: str) -> None:
    _say("kite-skills dashboard: a new link (the last one was used or expired):")
    _say(f"open {url}")


def run(db: Path, port: int, open_browser: bool) -> int:
    sock = bind(port)
    command = invocation.current().command
    store = Store.open(db, command=command)
    page: Path | None = None
    try:
        door = Door(sock.getsockname()[1], announce=_announce, command=command)
        app = build_app(store, door)
        minutes = round(LINK_SECONDS / 60)
        _say(f"kite-skills dashboard: serving the store {store.path}")
        _say(f"open {door.printed_link()}")
        _say(
            f"(this link works once, within {minutes} minutes; for a new one, open "
            f"http://127.0.0.1:{door.port}/skills and one is printed here. "
            "Ctrl-C stops the dashboard)"
        )
        if open_browser and _has_gui_browser():
            page = _open_browser(door)
        Server(config(app)).run(sockets=[sock])
    finally:
        store.close()
        sock.close()
        if page is not None:
            with contextlib.suppress(OSError):
                page.unlink()
    _say("kite-skills dashboard: stopped")
    return 0
