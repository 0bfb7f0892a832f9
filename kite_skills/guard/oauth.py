"""The guard's sign-in to a Streamable HTTP upstream that asks for OAuth 2.1 (Zerodha's hosted
Kite MCP server, ``https://mcp.kite.trade/mcp``; ``kite-skills sandbox --http --oauth`` in
the tests), through the MCP SDK's client auth (:class:`mcp.client.auth.OAuthClientProvider`:
discovery, dynamic registration, PKCE S256, refresh).

For the guard::

    from kite_skills.guard.oauth import upstream_auth
    auth = upstream_auth("https://mcp.kite.trade/mcp")
    http = create_mcp_http_client(auth=auth)       # mcp.shared._httpx_utils
    async with http, Client(streamable_http_client(url, http_client=http)) as client: ...

The first request that meets a 401 signs in: the person's browser opens at the server's
authorization page (the address is also written to stderr: stdout is the MCP wire), and
the answer comes back to a one-shot listener on 127.0.0.1 (:class:`LoopbackRedirect`). An
expired access token is refreshed; when the refresh is refused (the Kite session ended at
06:00 IST), the browser is opened again. A refused or unanswered sign-in raises
:class:`SignInError`, whose message says what to do.

Tokens live in this process's memory only (:class:`MemoryTokens`): never on disk, never in
a log line; the guard's next start signs in again.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
import webbrowser
from collections.abc import Callable
from typing import Final
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.to_thread
import httpx2
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from ..errors import KiteError

SIGN_IN_TIMEOUT: Final = 300.0  # seconds: a Kite login with its second factor fits
CALLBACK_PATH: Final = "/callback"
MAX_REQUEST_BYTES: Final = 16 * 1024
CLIENT_NAME: Final = "kite-skills guard"


class SignInError(KiteError):
    """The sign-in to the upstream did not complete: refused in the browser, not answered in
    time, or the loopback redirect could not be served."""


class MemoryTokens:
    """The SDK's ``TokenStorage`` in memory: the tokens and this client's registration, for
    this process only. Its repr names no token."""

    def __init__(self) -> None:
        self._tokens: OAuthToken | None = None
        self._client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self._tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self._client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._client = client_info

    def __repr__(self) -> str:
        return f"MemoryTokens(signed_in={self._tokens is not None})"


def _bound(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    return sock


class LoopbackRedirect:
    """The redirect URI ``http://127.0.0.1:PORT/callback`` (RFC 8252 §7.3). The port is held
    (bound, not listening) for this object's life, because the client registers the exact
    URI once; it listens only while a sign-in waits, and takes one answer carrying that
    sign-in's ``state`` (any other request gets 404 or 400 and is otherwise ignored)."""

    def __init__(self) -> None:
        self._socket: socket.socket | None = _bound(0)
        self.port: int = self._socket.getsockname()[1]
        self.uri = f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    def listen(self) -> None:
        """Accept connections from now on (before the browser opens, so none is refused)."""
        if self._socket is None:
            raise SignInError(
                f"the sign-in's loopback port 127.0.0.1:{self.port} was taken by another "
                "program since the guard started — restart the guard"
            )
        self._socket.listen(8)

    async def answer(self, state: str, timeout: float) -> AuthorizationCodeResult:
        """Wait for the browser to bring back this sign-in's answer."""
        stop = threading.Event()
        try:
            return await anyio.to_thread.run_sync(
                self._serve, state, time.monotonic() + timeout, stop, abandon_on_cancel=True
            )
        finally:
            stop.set()

    def _serve(self, state: str, deadline: float, stop: threading.Event) -> AuthorizationCodeResult:
        sock = self._socket
        assert sock is not None  # listen() came first
        try:
            while not stop.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SignInError(
                        "no answer came back from the browser in time — the next call "
                        "through the guard opens the sign-in page again: approve it there"
                    )
                sock.settimeout(min(left, 1.0))
                try:
                    connection, _ = sock.accept()
                except TimeoutError:
                    continue
                with connection:
                    result = _one_request(connection, state)
                if result is not None:
                    return result
            raise SignInError("the sign-in was abandoned")
        finally:
            self._reopen()

    def _reopen(self) -> None:
        """Stop listening, and hold the same port again for the next sign-in."""
        if self._socket is not None:
            self._socket.close()
        try:
            self._socket = _bound(self.port)
        except OSError:
            self._socket = None  # said by the next listen()


def _one_request(connection: socket.socket, state: str) -> AuthorizationCodeResult | None:
    """Serve one HTTP request on the loopback: the answer, or None to keep waiting. Nothing of
    it is logged (its query holds the authorization code)."""
    connection.settimeout(10)
    data = b""
    try:
        while b"\r\n\r\n" not in data and len(data) < MAX_REQUEST_BYTES:
            chunk = connection.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        return None
    method, _, rest = data.partition(b"\r\n")[0].decode("latin-1").partition(" ")
    target = rest.rpartition(" ")[0]
    parts = urlsplit(target)
    if method != "GET" or parts.path != CALLBACK_PATH:
        _reply(connection, 404, "Not the sign-in's address.")
        return None
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    if query.get("state") != state:
        _reply(connection, 400, "This answer belongs to another sign-in; it was ignored.")
        return None
    error = query.get("error")
    if error is not None:
        _reply(connection, 200, "The sign-in was refused. You can close this tab.")
        said = query.get("error_description")
        raise SignInError(
            f"the sign-in was refused ({error}{': ' + said if said else ''}) — the next call "
            "through the guard opens the sign-in page again: approve it there to use this server"
        )
    code = query.get("code")
    if not code:
        _reply(connection, 400, "The answer carries no authorization code.")
        return None
    _reply(connection, 200, "Signed in. You can close this tab and go back to your MCP client.")
    return AuthorizationCodeResult(code=code, state=state, iss=query.get("iss"))


def _reply(connection: socket.socket, status: int, text: str) -> None:
    body = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>kite-skills guard</title></head><body><p>{text}</p></body></html>"
    ).encode()
    head = (
        f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\n"
        "Content-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
    )
    try:
        connection.sendall(head.encode() + body)
    except OSError:
        pass  # the browser went away: the answer was read already


class _SignIn:
    """The SDK's redirect and callback handlers over one :class:`LoopbackRedirect`."""

    def __init__(
        self, server_url: str, open_browser: Callable[[str], object], timeout: float
    ) -> None:
        self.server_url = server_url
        self.open_browser = open_browser
        self.timeout = timeout
        self.loopback = LoopbackRedirect()
        self.state = ""
        self.count = 0

    async def redirect(self, authorization_url: str) -> None:
        self.state = parse_qs(urlsplit(authorization_url).query).get("state", [""])[0]
        self.loopback.listen()
        self.count += 1
        again = "" if self.count == 1 else "the session ended; "  # the refresh was refused
        sys.stderr.write(
            f"kite-skills guard: {again}sign in to {self.server_url} in your browser; if it "
            f"does not open, open this address: {authorization_url}\n"
        )
        sys.stderr.flush()
        await anyio.to_thread.run_sync(self.open_browser, authorization_url)

    async def callback(self) -> AuthorizationCodeResult:
        return await self.loopback.answer(self.state, self.timeout)


def upstream_auth(
    server_url: str,
    *,
    open_browser: Callable[[str], object] = webbrowser.open,
    timeout: float = SIGN_IN_TIMEOUT,
) -> httpx2.Auth:
    """The ``httpx2.Auth`` that signs the guard in to ``server_url`` (its MCP endpoint, e.g.
    ``https://mcp.kite.trade/mcp``) with OAuth 2.1 when it asks, and refreshes its tokens.

    ``open_browser(url)`` shows the authorization page to the person and returns at once (as
    ``webbrowser.open`` does; tests drive the page with an HTTP client instead). ``timeout``:
    seconds to wait for the browser's answer. Requests through it raise :class:`SignInError`
    when the person refuses or does not answer in time."""
    sign_in = _SignIn(server_url, open_browser, timeout)
    metadata = OAuthClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[sign_in.loopback.uri],  # type: ignore[list-item]  # validated by pydantic
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",  # a native app holds no secret (RFC 8252 §8.4)
    )
    return OAuthClientProvider(
        server_url=server_url,
        client_metadata=metadata,
        storage=MemoryTokens(),
        redirect_handler=sign_in.redirect,
        callback_handler=sign_in.callback,
    )
