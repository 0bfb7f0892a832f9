"""The localhost door, the MCP kit's HTTP guard: what keeps an HTTP listener on 127.0.0.1 for this
user's programs alone. Import it by name (``from kite_skills.mcpkit import localhost``):
``kite_skills.mcpkit`` itself does not load it, so a stdio server never imports uvicorn. Both
listeners use it, the dashboard (``kite-skills dashboard``) and the sandbox (``kite-skills sandbox
--http``); each adds its own sign-in behind it (a cookie, a bearer token).

- **Host.** A request must name ``127.0.0.1:PORT`` or ``localhost:PORT`` (:meth:`Door.right_host`);
  another name, or none, is a page that rebound its DNS name to 127.0.0.1.
- **Web pages.** A request a browser sends for a web page must come from this port's own page
  (:meth:`Door.web_page_refusal`): another ``Origin``, another port of localhost included, or
  ``Sec-Fetch-Site`` other than ``same-origin``/``none`` is refused.
- **Half-sent requests.** A connection must send its whole request within
  :data:`READ_SECONDS` of opening (or of its last answer), and at most a bounded number are
  kept open: the one waiting longest for its request is closed for a new one
  (:func:`guarded_protocol`), so idle or half-sent requests from any local user cannot use up
  the process's file descriptors and lock the person out.
- **Quiet logging.** What the event loop and uvicorn say about connections (an accept that
  failed, a request that is not HTTP) is one line without a traceback, each kind at most once
  a minute (:class:`Quiet`), so a flood of connections cannot fill the terminal.

The ASGI types are starlette's (``starlette.types``), re-exported here for the listeners.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

import uvicorn
from starlette.types import Scope

from ..display import error_line

if TYPE_CHECKING:
    from uvicorn.protocols.http.h11_impl import H11Protocol

HOST: Final = "127.0.0.1"
READ_SECONDS: Final = 10.0  # to send a whole request (headers and body) once connected
MAX_CONNECTIONS: Final = 256  # at most; lower when the file-descriptor limit is low
LISTEN_QUEUE: Final = 1024  # connections the kernel holds before we accept them (no fds)
QUIET_SECONDS: Final = 60.0  # the same kind of connection trouble is logged once in this long
OWN_FETCH_SITES: Final = (None, "same-origin", "none")  # none: typed in the address bar

log = logging.getLogger(__name__)


def header(scope: Scope, name: bytes) -> str | None:
    """The first value of header ``name`` (lower case, as ASGI gives names), or None."""
    for key, value in scope.get("headers") or ():
        if key == name:
            return str(bytes(value).decode("latin-1"))
    return None


@dataclass(frozen=True)
class Door:
    """The Host and web-page rules of a listener on 127.0.0.1:``port``."""

    port: int

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset({f"127.0.0.1:{self.port}", f"localhost:{self.port}"})

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self.hosts)

    @property
    def wrong_host(self) -> str:
        """Why a request for another host, or none, is refused (answered with 421)."""
        return (
            f"this server answers only at 127.0.0.1:{self.port} or localhost:{self.port} (a "
            "request for another host name, or with no Host, is refused, against DNS rebinding)"
        )

    def right_host(self, scope: Scope) -> bool:
        return header(scope, b"host") in self.hosts

    @staticmethod
    def from_a_browser(scope: Scope) -> bool:
        """Whether the request says where it comes from, as browsers do: ``Origin`` (every
        form POST), ``Sec-Fetch-Site`` (every request of a current browser), or both."""
        return header(scope, b"origin") is not None or header(scope, b"sec-fetch-site") is not None

    def web_page_refusal(self, scope: Scope) -> str:
        """Why a request sent for another web page is refused; "" when it came from this
        port's own page, or from no web page at all (neither ``Origin`` nor
        ``Sec-Fetch-Site``: a program, not a browser).

        Browsers send ``Origin: null`` under Referrer-Policy: no-referrer; then only
        ``Sec-Fetch-Site: same-origin`` vouches for it. A page on another port of localhost
        is ``same-site``, not ``same-origin``: it is refused like any other site."""
        if not self.from_a_browser(scope):
            return ""
        origin, fetch_site = header(scope, b"origin"), header(scope, b"sec-fetch-site")
        if origin in self.origins and fetch_site in OWN_FETCH_SITES:
            return ""
        if origin in (None, "null") and fetch_site == "same-origin":
            return ""
        if fetch_site not in OWN_FETCH_SITES:
            return (
                f"a request from another site or another port of this machine (Sec-Fetch-Site: "
                f"{fetch_site}); nothing changed"
            )
        return (
            f"a request from another web page (its Origin is not http://127.0.0.1:{self.port} "
            f"or http://localhost:{self.port}); nothing changed"
        )


class Quiet(logging.Filter):
    """Lets each kind of warning (its message template) through at most once per
    :data:`QUIET_SECONDS`, without its traceback; an error (an application's failure: a bug,
    whose traceback is wanted) passes as it is. ``clock`` for tests."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._clock = clock
        self._last: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            return True
        now, kind = self._clock(), str(record.msg)
        if now - self._last.get(kind, -QUIET_SECONDS) < QUIET_SECONDS:
            return False
        self._last[kind] = now
        if record.exc_info and record.exc_info[1] is not None:
            record.msg = f"{record.getMessage()}: {error_line(record.exc_info[1])}"
            record.args = None
        record.exc_info = None
        return True


def _loop_trouble(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The event loop's word about a socket (``socket.accept() out of system resource``: an
    OSError) as one line, through :class:`Quiet`; anything else (a bug) as asyncio says it."""
    exception = context.get("exception")
    if not isinstance(exception, OSError):
        loop.default_exception_handler(context)
        return
    log.warning(str(context.get("message", "event loop error")), exc_info=exception)


class Server(uvicorn.Server):
    """uvicorn's server with the door's quiet logging, and a kernel queue widened once serving.

    asyncio accepts at most ``backlog`` connections in one burst and uvicorn also gives that
    number to the kernel as its queue; the burst is kept small (see :func:`config`), the
    kernel's queue is widened again once serving, so that connecting is never slowed down."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        asyncio.get_running_loop().set_exception_handler(_loop_trouble)
        await super().startup(sockets)
        for sock in sockets or ():
            with contextlib.suppress(OSError):
                sock.listen(LISTEN_QUEUE)


def guarded_protocol(read_seconds: float, max_connections: int) -> type[H11Protocol]:
    """uvicorn's h11 protocol with a deadline for each request and a bound on connections.

    uvicorn times out only idle keep-alive connections after a response: a connection that
    sends nothing, or half a request, stays open for ever. Here a request (headers and body)
    must be in within ``read_seconds`` of the connection opening or the last response, else
    the connection is closed; and when more than ``max_connections`` are open, the one waiting
    longest for its request is closed (a request being answered is never cut off)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    done = (h11.DONE, h11.MUST_CLOSE)

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
            if self.conn.their_state not in done:
                self.close_waiting()

        def close_waiting(self) -> None:
            self._stop_timer()
            self.waiting_since = None
            if not self.transport.is_closing():
                self.transport.close()

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state in done:  # the request is in: the app answers it
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


def connection_limit() -> int:
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


_QUIET = Quiet()


def config(
    app: Any,
    *,
    lifespan: Literal["on", "off"] = "off",
    read_seconds: float = READ_SECONDS,
    max_connections: int | None = None,
) -> uvicorn.Config:
    """How a listener behind the door is served (tests pass a shorter deadline or a lower
    bound; the sandbox's MCP app needs its lifespan on)."""
    limit = connection_limit() if max_connections is None else max_connections
    made = uvicorn.Config(
        app,
        http=guarded_protocol(read_seconds, limit),
        backlog=max(8, limit // 4),  # also how many asyncio accepts in one burst
        log_level="warning",
        access_log=False,
        lifespan=lifespan,
        server_header=False,
    )
    # uvicorn's own warnings about a connection ("Invalid HTTP request received."), and the
    # event loop's, once a minute each.
    for name in ("uvicorn.error", __name__):
        target = logging.getLogger(name)
        if _QUIET not in target.filters:
            target.addFilter(_QUIET)
    return made
