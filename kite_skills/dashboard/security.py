"""The dashboard's door: who may talk to it, and what every response carries.

One ASGI middleware in front of every route, behind the localhost door
(:mod:`kite_skills.mcpkit.localhost`, which the sandbox's listener uses too):

- ``Host`` must be ``127.0.0.1:PORT`` or ``localhost:PORT`` (DNS rebinding) — else 421.
- On Linux, the connection must come from a program of the user running the dashboard: the
  owner of the client's socket is read from ``/proc/net/tcp``. Another user's program is
  refused whatever it carries (a cookie the browser sent to their web app on another port,
  since cookies ignore ports, is useless to them), and so is a socket that is gone.
- Sign-in links carry a secret token that works **once**, within :data:`LINK_SECONDS`
  (compared in constant time). Exchanging it gets an HttpOnly, SameSite=Strict session cookie
  named for this port, scoped to ``/skills``, and a redirect to the clean URL (never off the
  dashboard). Any other request without a valid cookie gets a 403 page saying how to open the
  dashboard, and the terminal gets a fresh link when the last one printed is used or expired.
  Only the stylesheet and ``/`` are served without one.
- A state change (POST) must say where it comes from: the door's web-page rule
  (:meth:`kite_skills.mcpkit.localhost.Door.web_page_refusal`: the dashboard's own ``Origin``,
  or ``Origin: null`` with ``Sec-Fetch-Site: same-origin``), and unlike the sandbox's bearer
  requests, not neither header: a POST with no ``Origin`` and no ``Sec-Fetch-Site`` did not come
  from a browser showing the dashboard. Either is refused before any handler runs; the
  per-session CSRF token is checked by :func:`Door.check_csrf` when the form is read.
- Every response carries a strict CSP (no script at all, nothing from another origin),
  ``X-Frame-Options: DENY``, ``Referrer-Policy: no-referrer``, ``X-Content-Type-Options:
  nosniff`` and ``Cache-Control: no-store``.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import os
import secrets
import socket
import sys
import threading
import time
from collections.abc import Callable
from http.cookies import SimpleCookie
from typing import Final
from urllib.parse import parse_qsl, quote, urlencode

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kite_skills.mcpkit import localhost
from kite_skills.mcpkit.localhost import header

CSP: Final = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS: Final[tuple[tuple[bytes, bytes], ...]] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
PUBLIC_PATHS: Final = frozenset({"/static/style.css", "/"})
SAFE_METHODS: Final = frozenset({"GET", "HEAD"})
LINK_SECONDS: Final = 120.0  # how long a sign-in link works (once)
COOKIE_PATH: Final = "/skills"  # every page that needs the cookie is below it

HOW_TO_OPEN = (
    "Open the dashboard with the newest link that '{command} dashboard' printed in its "
    "terminal (http://127.0.0.1:{port}/skills?token=…). Each link works once, for two minutes; "
    "when the last one printed is used or expired, showing this page printed a new one there."
)


class Door:
    """The sign-in links, the allowed hosts, and session and CSRF tokens derived from a
    per-launch key.

    A link's token is single-use and expires after ``link_seconds``. ``announce`` (the
    terminal) receives the fresh link :meth:`offer_link` makes when the last one it printed is
    used or expired. ``clock`` is :func:`time.monotonic` unless a test passes its own.
    """

    def __init__(
        self,
        port: int,
        *,
        link_seconds: float = LINK_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        announce: Callable[[str], None] | None = None,
        command: str = "kite-skills",
    ) -> None:
        self.port = port
        self.how_to_open = HOW_TO_OPEN.format(
            command=command, port=port
        )  # command: kite_skills.invocation
        self._key = secrets.token_bytes(32)
        self.localhost = localhost.Door(port)
        self.cookie_name = f"kite_skills_{port}"
        self.link_seconds = link_seconds
        self._clock = clock
        self._links: dict[str, float] = {}  # token -> when it stops working
        self._printed: str | None = None  # the token of the last link announced
        self._lock = threading.Lock()
        self.announce = announce
        self.uid = os.geteuid() if hasattr(os, "geteuid") else None

    def issue(self) -> str:
        """A new sign-in token: it works once, within ``link_seconds``."""
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._links[token] = self._clock() + self.link_seconds
        return token

    def link(self, token: str, path: str = "/skills") -> str:
        return f"http://127.0.0.1:{self.port}{path}?token={token}"

    def url(self, path: str = "/skills") -> str:
        """A link with a new single-use token."""
        return self.link(self.issue(), path)

    def redeem(self, offered: str) -> bool:
        """True, once, for a token :meth:`issue` made that has not expired."""
        with self._lock:
            now = self._clock()
            for token, until in list(self._links.items()):
                if until <= now:
                    del self._links[token]
            found = None
            for token in self._links:  # a handful: compare each in constant time
                if hmac.compare_digest(offered.encode(), token.encode()):
                    found = token
            if found is None:
                return False
            del self._links[found]
            return True

    def printed_link(self) -> str:
        """A new link for the terminal; it replaces the one printed before."""
        token = self.issue()
        with self._lock:
            if self._printed is not None:
                self._links.pop(self._printed, None)
            self._printed = token
        return self.link(token)

    def offer_link(self) -> None:
        """Announce a fresh link when the last one printed is used or expired (at most one
        new line per ``link_seconds``, whoever asks)."""
        if self.announce is None:
            return
        with self._lock:
            printed = self._printed
            alive = printed is not None and self._links.get(printed, 0.0) > self._clock()
        if not alive:
            self.announce(self.printed_link())

    def _mac(self, purpose: str, nonce: str) -> str:
        return hmac.new(self._key, f"{purpose}:{nonce}".encode(), hashlib.sha256).hexdigest()

    def new_session(self) -> str:
        nonce = secrets.token_urlsafe(16)
        return f"{nonce}.{self._mac('session', nonce)}"

    def session_of(self, cookie_value: str | None) -> str | None:
        """The session nonce of a valid cookie value, else None (constant-time compare)."""
        if not cookie_value or "." not in cookie_value:
            return None
        nonce, mac = cookie_value.split(".", 1)
        return nonce if hmac.compare_digest(mac, self._mac("session", nonce)) else None

    def csrf_for(self, session: str) -> str:
        return self._mac("csrf", session)

    def check_csrf(self, session: str, offered: object) -> bool:
        return isinstance(offered, str) and hmac.compare_digest(
            offered.encode(), self.csrf_for(session).encode()
        )


def _endpoint(address: object) -> str | None:
    """``('127.0.0.1', 8080)`` as ``/proc/net/tcp`` writes it (``0100007F:1F90``)."""
    if not isinstance(address, (tuple, list)) or len(address) != 2:
        return None
    try:
        packed = socket.inet_aton(str(address[0]))
        port = int(address[1])
    except (OSError, ValueError):  # not an IPv4 address (an in-process test client)
        return None
    return f"{int.from_bytes(packed, sys.byteorder):08X}:{port:04X}"


def peer_uid(client: object, server: object, table: str = "/proc/net/tcp") -> int | None:
    """The user owning the client end of a TCP connection over IPv4 on this machine, from
    the kernel's socket table; -1 when that socket is gone; None when it cannot be told
    (no such table: not Linux; not an IPv4 address)."""
    local, remote = _endpoint(client), _endpoint(server)
    if local is None or remote is None:
        return None
    try:
        with open(table, encoding="ascii") as rows:
            for row in rows:
                fields = row.split()
                if len(fields) > 7 and fields[1] == local and fields[2] == remote:
                    return int(fields[7])
    except (OSError, ValueError):
        return None
    return -1


def guard(app: ASGIApp, door: Door) -> ASGIApp:
    """Wrap ``app`` in the checks above. Sets ``scope["state"]["session"]`` for handlers."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    (k, v) for k, v in message.get("headers", []) if k not in _SECURITY_NAMES
                ]
                message["headers"] = headers + list(SECURITY_HEADERS)
            await send(message)

        if not door.localhost.right_host(scope):
            await _page(send_secured, 421, "Wrong host", _sentence(door.localhost.wrong_host))
            return
        if door.uid is not None:
            uid = peer_uid(scope.get("client"), scope.get("server"))
            if uid is not None and uid != door.uid:
                await _page(
                    send_secured,
                    403,
                    "Another user",
                    "This dashboard answers only the user who started it; this connection "
                    "belongs to another user's program (or is already closed). Nothing changed.",
                )
                return
        cookies = SimpleCookie()
        try:
            cookies.load(header(scope, b"cookie") or "")
        except Exception:  # an unparsable Cookie header is simply no cookie
            cookies = SimpleCookie()
        morsel = cookies.get(door.cookie_name)
        session = door.session_of(morsel.value if morsel else None)
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if "token" in query:
            await _arrive(scope, send_secured, door, query, signed_in=session is not None)
            return
        if scope.get("path", "") in PUBLIC_PATHS and scope.get("method") in SAFE_METHODS:
            await app(scope, receive, send_secured)
            return
        if session is None:
            door.offer_link()
            await _page(send_secured, 403, "Not signed in", door.how_to_open)
            return
        if scope.get("method") not in SAFE_METHODS:
            refusal = _refuse_origin(door, scope)
            if refusal:
                await _page(send_secured, 403, "Refused", refusal)
                return
        scope.setdefault("state", {})["session"] = session
        await app(scope, receive, send_secured)

    return guarded


_SECURITY_NAMES = frozenset(k for k, _ in SECURITY_HEADERS)


NO_ORIGIN: Final = (
    "This change carried no Origin header (browsers send one with every form), so it did not "
    "come from a dashboard page; nothing changed."
)


def _refuse_origin(door: Door, scope: Scope) -> str:
    """Why a state change is refused ("" when it comes from the dashboard's own page).

    Browsers send ``Origin`` with every form POST (``null`` under Referrer-Policy:
    no-referrer, then ``Sec-Fetch-Site: same-origin`` vouches for it). A POST with neither
    did not come from a browser showing the dashboard: another program replaying a cookie
    it was sent (cookies are not port-scoped) is refused here."""
    if not door.localhost.from_a_browser(scope):
        return NO_ORIGIN
    refusal = door.localhost.web_page_refusal(scope)
    return _sentence(refusal) if refusal else ""


def _sentence(text: str) -> str:
    return f"{text[:1].upper()}{text[1:]}."


def safe_location(path: str, rest: str = "") -> str:
    """A redirect target that stays on the dashboard: ``path`` percent-encoded (so ``\\``,
    tabs and newlines, which browsers drop or read as ``/``, cannot make ``//host``), and
    ``/skills`` for anything that would not start with exactly one ``/``."""
    quoted = quote(path, safe="/")
    if not quoted.startswith("/") or quoted.startswith("//"):
        return "/skills"
    return quoted + (f"?{rest}" if rest else "")


async def _arrive(
    scope: Scope, send: Send, door: Door, query: dict[str, str], *, signed_in: bool
) -> None:
    """``?token=``: a valid one (once) sets the session cookie; either way a browser that is
    signed in goes on to the clean URL."""
    rest = urlencode([(k, v) for k, v in query.items() if k != "token"])
    method = scope.get("method")
    # Only a GET spends a link (a HEAD, as link checkers send, does not).
    if method not in SAFE_METHODS or not (
        signed_in or (method == "GET" and door.redeem(query["token"]))
    ):
        door.offer_link()
        await _page(send, 403, "Wrong, used or expired link", door.how_to_open)
        return
    headers = [
        (b"location", safe_location(scope.get("path", "/skills"), rest).encode("latin-1")),
        (b"content-length", b"0"),
    ]
    if not signed_in:
        cookie = (
            f"{door.cookie_name}={door.new_session()}; Path={COOKIE_PATH}; HttpOnly; "
            "SameSite=Strict"
        )
        headers.append((b"set-cookie", cookie.encode()))
    await send({"type": "http.response.start", "status": 303, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


async def _page(send: Send, status: int, title: str, text: str) -> None:
    body = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)} — kite-skills</title>"
        "<link rel='stylesheet' href='/static/style.css'></head><body><main class='door'>"
        f"<h1>{html.escape(title)}</h1><p>{html.escape(text)}</p></main></body></html>"
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/html; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
