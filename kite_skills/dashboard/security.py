"""The dashboard's door: who may talk to it, and what every response carries.

One ASGI middleware in front of every route:

- ``Host`` must be ``127.0.0.1:PORT`` or ``localhost:PORT`` (DNS rebinding) — else 421.
- A per-launch secret token, compared in constant time. The first visit with ``?token=`` gets
  an HttpOnly, SameSite=Strict session cookie and a redirect to the clean URL; any other request
  without a valid cookie gets a 403 page saying how to open the dashboard. Only the stylesheet
  is served without one (so that page is readable).
- A state change (POST) whose ``Origin`` (when the browser sends one) is not the dashboard's
  own, or whose ``Sec-Fetch-Site`` is not same-origin, is refused before any handler runs
  (``Origin: null``, which no-referrer makes browsers send, only with same-origin); the
  per-session CSRF token is checked by :func:`Door.check_csrf` when the form is read.
- Every response carries a strict CSP (no script at all, nothing from another origin),
  ``X-Frame-Options: DENY``, ``Referrer-Policy: no-referrer``, ``X-Content-Type-Options:
  nosniff`` and ``Cache-Control: no-store``.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

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
PUBLIC_PATHS: Final = frozenset({"/static/style.css"})
SAFE_METHODS: Final = frozenset({"GET", "HEAD"})

HOW_TO_OPEN = (
    "Open the dashboard with the link that 'kite-skills dashboard' printed "
    "(http://127.0.0.1:PORT/skills?token=…). Each launch has a new token; if you restarted "
    "it, use the new link."
)


class Door:
    """The launch secret, the allowed hosts, and session and CSRF tokens derived from them."""

    def __init__(self, port: int, token: str | None = None) -> None:
        self.port = port
        self.token = token or secrets.token_urlsafe(32)
        self._key = secrets.token_bytes(32)
        self.hosts = frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})
        self.cookie_name = f"kite_skills_{port}"

    def url(self, path: str = "/skills") -> str:
        return f"http://127.0.0.1:{self.port}{path}?token={self.token}"

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

    def token_ok(self, offered: str) -> bool:
        return hmac.compare_digest(offered.encode(), self.token.encode())

    def csrf_for(self, session: str) -> str:
        return self._mac("csrf", session)

    def check_csrf(self, session: str, offered: object) -> bool:
        return isinstance(offered, str) and hmac.compare_digest(
            offered.encode(), self.csrf_for(session).encode()
        )


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


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

        host = _header(scope, b"host")
        if host not in door.hosts:
            await _page(
                send_secured,
                421,
                "Wrong host",
                f"This dashboard answers only at 127.0.0.1:{door.port} or localhost:{door.port} "
                "(a request for another host name is refused, against DNS rebinding).",
            )
            return
        path = scope.get("path", "")
        if path in PUBLIC_PATHS and scope.get("method") in SAFE_METHODS:
            await app(scope, receive, send_secured)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if "token" in query:
            await _arrive(scope, send_secured, door, query)
            return
        cookies = SimpleCookie()
        try:
            cookies.load(_header(scope, b"cookie") or "")
        except Exception:  # an unparsable Cookie header is simply no cookie
            cookies = SimpleCookie()
        morsel = cookies.get(door.cookie_name)
        session = door.session_of(morsel.value if morsel else None)
        if session is None:
            await _page(send_secured, 403, "Not signed in", HOW_TO_OPEN)
            return
        if scope.get("method") not in SAFE_METHODS:
            origin = _header(scope, b"origin")
            fetch_site = _header(scope, b"sec-fetch-site")
            # With Referrer-Policy: no-referrer a browser sends "Origin: null" even for its
            # own forms; it is accepted only when Sec-Fetch-Site vouches for same-origin.
            own = origin is None or origin in {f"http://{h}" for h in door.hosts}
            if not own and not (origin == "null" and fetch_site == "same-origin"):
                await _page(
                    send_secured,
                    403,
                    "Refused",
                    "This change came from another web page (its Origin is not this "
                    "dashboard); nothing changed.",
                )
                return
            if fetch_site not in (None, "same-origin", "none"):
                await _page(send_secured, 403, "Refused", "A cross-site request; nothing changed.")
                return
        scope.setdefault("state", {})["session"] = session
        await app(scope, receive, send_secured)

    return guarded


_SECURITY_NAMES = frozenset(k for k, _ in SECURITY_HEADERS)


async def _arrive(scope: Scope, send: Send, door: Door, query: dict[str, str]) -> None:
    """``?token=``: a valid one sets the session cookie and redirects to the clean URL."""
    if not door.token_ok(query["token"]) or scope.get("method") not in SAFE_METHODS:
        await _page(send, 403, "Wrong or old link", HOW_TO_OPEN)
        return
    rest = urlencode([(k, v) for k, v in query.items() if k != "token"])
    location = scope.get("path", "/skills") + (f"?{rest}" if rest else "")
    if not location.startswith("/") or location.startswith("//"):
        location = "/skills"
    cookie = (
        f"{door.cookie_name}={door.new_session()}; Path=/; HttpOnly; SameSite=Strict"
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [
                (b"location", location.encode("latin-1", "replace")),
                (b"set-cookie", cookie),
                (b"content-length", b"0"),
            ],
        }
    )
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
