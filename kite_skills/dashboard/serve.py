"""Run the dashboard: bind 127.0.0.1 (never another address), print the link, open a browser,
serve until Ctrl-C or SIGTERM."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import signal
import socket
import sys
import threading
import webbrowser
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import uvicorn

from kite_skills.errors import KiteError
from kite_skills.store import Store

from .app import build_app
from .security import Door

HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 7381


class _Server(uvicorn.Server):
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
    """The port the dashboard wanted is taken."""


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port`` (0: a free port the kernel picks)."""
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


def run(db: Path, port: int, open_browser: bool) -> int:
    sock = bind(port)
    store = Store.open(db)
    try:
        door = Door(sock.getsockname()[1])
        app = build_app(store, door)
        url = door.url()
        _say(f"kite-skills dashboard: serving the store {store.path}")
        _say(f"open {url}")
        _say("(this link is your key for this launch; Ctrl-C stops the dashboard)")
        if open_browser and _has_gui_browser():
            try:
                webbrowser.open(url)
            except Exception:  # no browser here: the printed link is enough
                logging.getLogger(__name__).debug("no browser opened", exc_info=True)
        config = uvicorn.Config(
            app, log_level="warning", access_log=False, lifespan="off", server_header=False
        )
        _Server(config).run(sockets=[sock])
    finally:
        store.close()
        sock.close()
    _say("kite-skills dashboard: stopped")
    return 0
