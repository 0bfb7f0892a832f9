"""The localhost door alone (kite_skills/mcpkit/localhost.py): each listener's ASGI guard wrapping
a trivial inner app, so that a refusal here is the door's own and not the SDK's, uvicorn's or
a handler's behind it. The same requests go to the dashboard's guard and to the sandbox's."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from starlette.types import Receive, Scope, Send

from kite_skills.dashboard import security
from kite_skills.mcpkit.localhost import QUIET_SECONDS, Door, Quiet
from kite_skills.sandbox import server

PORT = 8123
OTHER = 8124  # a page on another port of this machine: same site, another origin
TOKEN = "t" * 43
INNER = "the inner app answered"


async def _inner(scope: Scope, receive: Receive, send: Send) -> None:
    body = INNER.encode()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


def _dashboard() -> tuple[Any, list[tuple[bytes, bytes]]]:
    """The dashboard's guard, and the headers of a signed-in browser (its session cookie)."""
    door = security.Door(PORT)
    cookie = (b"cookie", f"{door.cookie_name}={door.new_session()}".encode())
    return security.guard(_inner, door), [cookie]


def _sandbox() -> tuple[Any, list[tuple[bytes, bytes]]]:
    """The sandbox's guard, and the headers of its client (the bearer token)."""
    return server.guard(_inner, TOKEN, PORT), [(b"authorization", f"Bearer {TOKEN}".encode())]


GUARDS: dict[str, Callable[[], tuple[Any, list[tuple[bytes, bytes]]]]] = {
    "dashboard": _dashboard,
    "sandbox": _sandbox,
}


def _ask(app: Any, headers: list[tuple[bytes, bytes]], method: str = "POST") -> tuple[int, str]:
    """One request straight into ``app`` with exactly ``headers`` (an HTTP client always adds
    a Host header, so none could send a request without one)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": "/skills/x/publish" if method == "POST" else "/skills",
        "raw_path": b"/",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("testclient", 50000),  # in process: no socket owner to look up
        "server": ("127.0.0.1", PORT),
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def run() -> None:
        await app(scope, receive, send)

    anyio.run(run)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], body.decode()


def _h(**headers: str) -> list[tuple[bytes, bytes]]:
    return [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]


@pytest.mark.parametrize("listener", GUARDS)
def test_the_right_request_reaches_the_inner_app(listener: str) -> None:
    """The other tests' refusals are the door's: the same request with the right headers
    passes, from a program (no Origin) and from the listener's own page."""
    app, signed_in = GUARDS[listener]()
    own = {"origin": f"http://127.0.0.1:{PORT}", "sec_fetch_site": "same-origin"}
    for host in (f"127.0.0.1:{PORT}", f"localhost:{PORT}"):
        assert _ask(app, [*signed_in, *_h(host=host, **own)]) == (200, INNER)
        no_referrer = {"origin": "null", "sec_fetch_site": "same-origin"}
        assert _ask(app, [*signed_in, *_h(host=host, **no_referrer)]) == (200, INNER)
    program = _h(host=f"127.0.0.1:{PORT}")
    assert _ask(app, [*signed_in, *program], "GET") == (200, INNER)


@pytest.mark.parametrize("listener", GUARDS)
@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize(
    "host", [None, "", f"127.0.0.1:{OTHER}", f"localhost:{OTHER}", "127.0.0.1", "evil.example"]
)
def test_no_host_or_another_host_is_refused_by_the_door(
    listener: str, method: str, host: str | None
) -> None:
    app, signed_in = GUARDS[listener]()
    headers = [*signed_in, *([] if host is None else _h(host=host))]
    status, text = _ask(app, headers, method)
    assert status == 421, text
    assert f"answers only at 127.0.0.1:{PORT} or localhost:{PORT}" in text
    assert INNER not in text


@pytest.mark.parametrize("listener", GUARDS)
@pytest.mark.parametrize("page", [f"http://127.0.0.1:{OTHER}", f"http://localhost:{OTHER}"])
def test_a_page_on_another_localhost_port_is_refused_by_the_door(listener: str, page: str) -> None:
    """What a browser sends for a page of another local web app: its Origin, and
    ``Sec-Fetch-Site: same-site`` (ports do not make another site); and the Origin alone, as
    an older browser sends it."""
    app, signed_in = GUARDS[listener]()
    host = _h(host=f"127.0.0.1:{PORT}")
    status, text = _ask(app, [*signed_in, *host, *_h(origin=page, sec_fetch_site="same-site")])
    assert (status, INNER in text) == (403, False)
    assert "another site or another port of this machine (Sec-Fetch-Site: same-site)" in text
    status, text = _ask(app, [*signed_in, *host, *_h(origin=page)])
    assert (status, INNER in text) == (403, False)
    assert f"another web page (its Origin is not http://127.0.0.1:{PORT}" in text


@pytest.mark.parametrize("listener", GUARDS)
@pytest.mark.parametrize(
    ("origin", "fetch_site"),
    [
        ("null", "same-site"),  # a page on another port under no-referrer
        ("null", "cross-site"),
        (None, "same-site"),
        (None, "cross-site"),
        (f"http://127.0.0.1:{PORT}", "same-site"),  # a forged Origin, the browser's metadata
        (f"http://127.0.0.1:{PORT}", "cross-site"),
    ],
)
def test_fetch_metadata_from_another_site_is_refused_whatever_the_origin(
    listener: str, origin: str | None, fetch_site: str
) -> None:
    app, signed_in = GUARDS[listener]()
    headers = _h(host=f"127.0.0.1:{PORT}", sec_fetch_site=fetch_site)
    if origin is not None:
        headers += _h(origin=origin)
    status, text = _ask(app, [*signed_in, *headers])
    assert status == 403 and INNER not in text
    assert f"(Sec-Fetch-Site: {fetch_site})" in text


@pytest.mark.parametrize("listener", GUARDS)
@pytest.mark.parametrize("origin", ["null", "http://evil.example", f"http://127.0.0.1:{PORT}/x"])
def test_another_origin_is_refused_even_when_it_claims_the_same_origin(
    listener: str, origin: str
) -> None:
    """``Sec-Fetch-Site: same-origin`` vouches only for this port's own Origin or ``null``."""
    app, signed_in = GUARDS[listener]()
    headers = _h(host=f"127.0.0.1:{PORT}", origin=origin, sec_fetch_site="same-origin")
    status, text = _ask(app, [*signed_in, *headers])
    if origin == "null":
        assert status == 200  # what Chromium sends for the listener's own page
    else:
        assert status == 403 and "another web page" in text


def test_the_quiet_filter_lets_each_kind_of_warning_through_once_a_minute() -> None:
    now = [1000.0]
    quiet = Quiet(clock=lambda: now[0])

    def record(msg: str, level: int = logging.WARNING, exc: BaseException | None = None) -> Any:
        info = (type(exc), exc, None) if exc is not None else None
        return logging.LogRecord("uvicorn.error", level, __file__, 1, msg, None, info)

    first = record("socket.accept() out of system resource", exc=OSError(24, "Too many"))
    assert quiet.filter(first)
    assert first.exc_info is None  # one line, no traceback
    assert first.getMessage() == "socket.accept() out of system resource: [Errno 24] Too many"
    assert not quiet.filter(record("socket.accept() out of system resource"))
    assert quiet.filter(record("Invalid HTTP request received."))  # another kind
    now[0] += QUIET_SECONDS - 0.001
    assert not quiet.filter(record("socket.accept() out of system resource"))
    now[0] += 0.001
    assert quiet.filter(record("socket.accept() out of system resource"))
    failed = record("Exception in ASGI application", logging.ERROR, ValueError("bug"))
    assert quiet.filter(failed) and quiet.filter(failed) and failed.exc_info is not None


def test_the_door_knows_its_hosts_and_origins() -> None:
    door = Door(PORT)
    assert door.hosts == {f"127.0.0.1:{PORT}", f"localhost:{PORT}"}
    assert door.origins == {f"http://127.0.0.1:{PORT}", f"http://localhost:{PORT}"}


def test_the_event_loop_says_a_socket_error_in_one_line_and_a_bug_as_it_is(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from kite_skills.mcpkit import localhost

    async def main() -> None:
        loop = asyncio.get_running_loop()
        for context in (
            {"message": "socket.accept() out of system resource", "exception": OSError(24, "x")},
            {"message": "socket.accept() out of system resource", "exception": OSError(24, "x")},
            {"message": "Task exception was never retrieved", "exception": ValueError("bug")},
        ):
            localhost._loop_trouble(loop, context)

    logger = logging.getLogger("kite_skills.mcpkit.localhost")
    before = logger.filters
    logger.filters = [Quiet()]  # a fresh one: another test's served listener may have used it
    try:
        with caplog.at_level(logging.WARNING):
            anyio.run(main)
    finally:
        logger.filters = before
    said = [(r.name, r.getMessage(), r.exc_info is not None) for r in caplog.records]
    assert said == [
        (
            "kite_skills.mcpkit.localhost",
            "socket.accept() out of system resource: [Errno 24] x",
            False,
        ),
        ("asyncio", "Task exception was never retrieved", True),
    ]
