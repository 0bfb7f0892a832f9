"""Run the dashboard: bind 127.0.0.1 (never another address), print a sign-in link, open a
browser, serve until Ctrl-C or SIGTERM, behind the localhost door
(:mod:`kite_skills.mcpkit.localhost`: Host, web pages, half-sent requests, quiet logging).

Every local user can read a process's command line (``/proc/PID/cmdline``), so the browser is
never given the secret: it opens a ``file://`` page that only this user may read (0600, as
notebook servers do) and that redirects to a link of its own.
"""

from __future__ import annotations

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
from typing import Final

from kite_skills import invocation
from kite_skills.errors import KiteError
from kite_skills.mcpkit import localhost
from kite_skills.store import Store

from .app import build_app
from .security import LINK_SECONDS, Door

HOST: Final = localhost.HOST
DEFAULT_PORT: Final = 7381


class Server(localhost.Server):
    """uvicorn re-raises a caught SIGINT/SIGTERM after shutting down (a traceback for Ctrl-C,
    death by signal for SIGTERM); the dashboard just stops and says so."""

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
        Server(localhost.config(app)).run(sockets=[sock])
    finally:
        store.close()
        sock.close()
        if page is not None:
            with contextlib.suppress(OSError):
                page.unlink()
    _say("kite-skills dashboard: stopped")
    return 0
