"""The dashboard's HTTP security, each rule at the HTTP level against a real store file."""

from __future__ import annotations

import html
import http.cookiejar
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.testclient import TestClient

from kite_skills.dashboard.app import build_app
from kite_skills.dashboard.security import CSP, LINK_SECONDS, Door, safe_location
from kite_skills.store import Store

from .conftest import BASE, ORIGIN, PORT, csrf_of, rev_of, rows

HEADERS = {
    "content-security-policy": CSP,
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
}


def test_no_cookie_is_403_with_how_to_open(anonymous: TestClient, door: Door) -> None:
    for path in ("/skills", "/skills/compare-funds", "/skills/log", "/skills/new"):
        page = anonymous.get(path)
        assert page.status_code == 403, path
        assert "kite-skills dashboard" in page.text and "token" in page.text
        # the address to open names this dashboard's own port, never a placeholder
        assert f"http://127.0.0.1:{door.port}/skills?token=" in page.text
        assert "PORT" not in page.text


def test_the_token_sets_a_strict_httponly_cookie_and_redirects_to_the_clean_url(
    anonymous: TestClient, door: Door
) -> None:
    token = door.issue()
    arrived = anonymous.get(f"/skills/compare-funds?token={token}")
    assert arrived.status_code == 303
    assert arrived.headers["location"] == "/skills/compare-funds"
    cookie = arrived.headers["set-cookie"]
    assert cookie.startswith(f"{door.cookie_name}=")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/skills" in cookie
    assert token not in cookie
    assert anonymous.get("/skills/compare-funds").status_code == 200


def test_a_wrong_token_or_forged_cookie_is_refused(anonymous: TestClient, door: Door) -> None:
    assert anonymous.get("/skills?token=" + "x" * 43).status_code == 403
    assert anonymous.get("/skills?token=").status_code == 403
    anonymous.cookies.set(door.cookie_name, "nonce.0000")
    assert anonymous.get("/skills").status_code == 403
    other = Door(door.port)  # an earlier launch's cookie does not open this one
    anonymous.cookies.set(door.cookie_name, other.new_session())
    assert anonymous.get("/skills").status_code == 403


@pytest.mark.parametrize(
    "host", ["evil.example:8123", "127.0.0.1:9999", "localhost", "127.0.0.1", "[::1]:8123", ""]
)
def test_a_wrong_host_is_refused(client: TestClient, host: str) -> None:
    page = client.get("/skills", headers={"host": host})
    assert page.status_code == 421
    assert f"answers only at 127.0.0.1:{PORT} or localhost:{PORT}" in page.text
    assert "compare-funds" not in page.text


async def _without_host(app: Any, path: str, headers: list[tuple[bytes, bytes]]) -> tuple[int, str]:
    """One GET straight into the ASGI app with exactly ``headers`` (TestClient and httpx
    always add a Host header, so they cannot send a request without one)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.0",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("testclient", 50000),  # in process, as TestClient: no socket to look up
        "server": ("127.0.0.1", 8123),
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], body.decode()


@pytest.mark.parametrize("path", ["/skills", "/static/style.css"])
def test_a_request_with_no_host_header_is_refused(store: Store, door: Door, path: str) -> None:
    """No Host at all (an HTTP/1.0 request may omit it) is no right host either, even with a
    valid session cookie, and even for the one page served without a cookie."""
    app = build_app(store, door)
    cookie = (b"cookie", f"{door.cookie_name}={door.new_session()}".encode())
    status, text = anyio.run(_without_host, app, path, [cookie])
    assert status == 421, text
    assert "Wrong host" in text and "compare-funds" not in text
    right = (b"host", b"127.0.0.1:8123")
    assert anyio.run(_without_host, app, path, [right, cookie])[0] == 200  # the same, with Host


def test_localhost_is_a_right_host(client: TestClient) -> None:
    assert client.get("/static/style.css", headers={"host": "localhost:8123"}).status_code == 200


def test_security_headers_on_every_response(client: TestClient, anonymous: TestClient) -> None:
    responses = [
        client.get("/skills"),
        client.get("/skills/compare-funds"),
        client.get("/skills/ghost"),
        client.get("/static/style.css"),
        client.get("/skills", headers={"host": "evil.example"}),
        client.post("/skills/compare-funds/archive", data={}),
    ]
    anonymous.cookies.clear()
    responses.append(anonymous.get("/skills"))
    for response in responses:
        for name, value in HEADERS.items():
            assert response.headers.get(name) == value, (response.url, name)
    assert "script-src" not in CSP and "'unsafe-inline'" not in CSP and "http" not in CSP


def test_pages_load_nothing_from_elsewhere_and_have_no_script(client: TestClient) -> None:
    for path in (
        "/skills",
        "/skills/compare-funds",
        "/skills/new",
        "/skills/log",
        "/skills/compare-funds/edit",
    ):
        text = client.get(path).text
        assert "http://" not in text and "https://" not in text, path
        assert "<script" not in text.lower(), path


def _publish_form(client: TestClient) -> dict[str, str]:
    page = client.get("/skills/compare-funds").text
    return {"csrf": csrf_of(page), "rev": rev_of(page)}


def test_post_without_csrf_changes_nothing(client: TestClient, db: Path) -> None:
    before = rows(db)
    form = _publish_form(client)
    for data in ({"rev": form["rev"]}, {"rev": form["rev"], "csrf": "0" * 64}, {}):
        refused = client.post("/skills/compare-funds/publish", data=data)
        assert refused.status_code == 403  # the CSRF check's refusal, not the Origin check's
        assert "security token is missing or wrong; nothing changed" in refused.text
    assert rows(db) == before


def test_post_from_a_foreign_origin_changes_nothing(client: TestClient, db: Path) -> None:
    before = rows(db)
    form = _publish_form(client)
    another_page = "another web page (its Origin is not"
    for headers, reason in (
        ({"origin": "http://evil.example"}, another_page),
        ({"origin": "null"}, another_page),
        ({"origin": "http://127.0.0.1:9999"}, another_page),
        ({"origin": "http://localhost:9999"}, another_page),
        ({"origin": "http://evil.example", "sec-fetch-site": "same-origin"}, another_page),
        ({"sec-fetch-site": "cross-site"}, "(Sec-Fetch-Site: cross-site)"),
        ({"sec-fetch-site": "same-site"}, "(Sec-Fetch-Site: same-site)"),
        ({"origin": "null", "sec-fetch-site": "cross-site"}, "(Sec-Fetch-Site: cross-site)"),
        # a page on another port of localhost: the same site, under no-referrer
        ({"origin": "null", "sec-fetch-site": "same-site"}, "(Sec-Fetch-Site: same-site)"),
        (
            {"origin": "http://127.0.0.1:9999", "sec-fetch-site": "same-site"},
            "(Sec-Fetch-Site: same-site)",
        ),
    ):
        refused = client.post("/skills/compare-funds/publish", data=form, headers=headers)
        assert refused.status_code == 403, headers
        assert reason in refused.text and "nothing changed" in refused.text, headers
    assert rows(db) == before
    done = client.post("/skills/compare-funds/publish", data=form, headers={"origin": ORIGIN})
    assert done.status_code == 303
    assert rows(db) != before


def test_a_browsers_null_origin_passes_only_with_same_origin_fetch_metadata(
    client: TestClient, db: Path
) -> None:
    """What Chromium sends for the dashboard's own form under Referrer-Policy: no-referrer."""
    form = _publish_form(client)
    headers = {"origin": "null", "sec-fetch-site": "same-origin"}
    done = client.post("/skills/compare-funds/publish", data=form, headers=headers)
    assert done.status_code == 303


def test_get_never_changes_anything(client: TestClient, db: Path) -> None:
    before = rows(db)
    form = _publish_form(client)
    for action in ("publish", "accept", "reject", "draft", "archive", "restore", "delete"):
        got = client.get(f"/skills/compare-funds/{action}", params=form)
        # /delete and /restore are questions (one that does not apply goes back to the skill)
        assert got.status_code in (200, 303, 405), action
    assert client.get("/skills/compare-funds/delete").status_code == 200
    assert rows(db) == before


def test_a_post_with_the_token_in_the_url_is_not_a_sign_in(
    anonymous: TestClient, door: Door, db: Path
) -> None:
    before = rows(db)
    refused = anonymous.post(f"/skills/compare-funds/publish?token={door.issue()}", data={})
    assert refused.status_code == 403
    assert rows(db) == before


def test_the_csrf_token_belongs_to_one_session(
    client: TestClient, anonymous: TestClient, door: Door, store: Store, db: Path
) -> None:
    """Another session's form token is refused by the CSRF check itself: the second browser
    sends the dashboard's Origin, as a browser does, so the Origin check lets it through."""
    form = _publish_form(client)
    with TestClient(client.app, base_url=BASE, follow_redirects=False) as other:
        other.get(f"/skills?token={door.issue()}")
        other.headers["origin"] = ORIGIN
        before = rows(db)
        refused = other.post("/skills/compare-funds/publish", data=form)
        assert refused.status_code == 403
        assert "security token is missing or wrong; nothing changed" in refused.text
        assert rows(db) == before
        own = {**form, "csrf": csrf_of(other.get("/skills/compare-funds").text)}
        assert other.post("/skills/compare-funds/publish", data=own).status_code == 303
        assert rows(db) != before


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_the_socket_listens_on_127_0_0_1_only(tmp_path: Path, stop: signal.Signals) -> None:
    """The real command, a real uvicorn socket: 127.0.0.1 answers, other addresses do not."""
    err = tmp_path / "err.txt"
    with err.open("w") as stderr:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kite_skills",
                "dashboard",
                "--port",
                "0",
                "--no-browser",
                "--db",
                str(tmp_path / "s.db"),
            ],
            stderr=stderr,
            stdout=subprocess.PIPE,
        )
    try:
        url = _wait_for_link(err, process)
        assert err.read_text().splitlines()[0] == (
            f"kite-skills dashboard: serving the store {tmp_path / 's.db'}"
        )
        port = int(url.split(":")[2].split("/")[0])
        ss = shutil.which("ss")
        connections = (
            subprocess.run(
                [ss, "-Hltn", f"sport = :{port}"], capture_output=True, text=True, check=False
            ).stdout
            if ss
            else ""
        )
        if connections:  # iproute2's view of the listening socket
            assert connections.split()[3] == f"127.0.0.1:{port}", connections
        opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )
        with opener.open(url, timeout=10) as page:  # the token, then the redirect
            assert page.status == 200 and page.url.endswith("/skills")
            assert "No skills yet" in page.read().decode()  # an empty store
        # HTTP/1.0 lets a request leave out Host; the real server passes it on without one
        with socket.create_connection(("127.0.0.1", port), timeout=10) as bare:
            bare.sendall(b"GET /static/style.css HTTP/1.0\r\n\r\n")
            reply = b"".join(iter(lambda: bare.recv(65536), b""))
        assert reply.split(b"\r\n")[0] == b"HTTP/1.1 421 Misdirected Request", reply[:300]
        for address in _other_addresses():
            with pytest.raises(OSError):
                socket.create_connection((address, port), timeout=2).close()
    finally:
        process.send_signal(stop)
        assert process.wait(timeout=15) == 0
        assert process.stdout is not None and process.stdout.read() == b""
    assert err.read_text().splitlines()[-1] == "kite-skills dashboard: stopped"
    assert "Traceback" not in err.read_text()


def _wait_for_link(err: Path, process: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for line in err.read_text().splitlines():
            if line.startswith("open http://127.0.0.1:"):
                return line.removeprefix("open ")
        assert process.poll() is None, err.read_text()
        time.sleep(0.05)
    raise AssertionError("the dashboard printed no link: " + err.read_text())


def _other_addresses() -> list[str]:
    """This machine's non-loopback IPv4 addresses (a UDP connect picks the outgoing one)."""
    found = {"127.0.0.2"}
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # TEST-NET-1: no packet is sent for a UDP connect
        found.add(probe.getsockname()[0])
    except OSError:
        pass
    finally:
        probe.close()
    return sorted(found - {"127.0.0.1", "0.0.0.0"})


def test_a_port_in_use_is_one_clear_line(tmp_path: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "kite_skills",
                "dashboard",
                "--port",
                str(port),
                "--no-browser",
                "--db",
                str(tmp_path / "s.db"),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        taken.close()
    assert done.returncode == 1
    assert done.stderr == (
        f"kite-skills: error: port {port} on 127.0.0.1 is in use (another dashboard?): open "
        "that one, or choose another port with --port N, or --port 0 for a free one\n"
    )


# ---- the person's alone: single-use links, the browser file, Origin, redirects ------------


def test_a_sign_in_link_works_once(store: Store, door: Door) -> None:
    """A link read later (from a copy, a history, a process list) opens nothing."""
    token = door.issue()
    app = TestClient(build_app(store, door), base_url=BASE, follow_redirects=False)
    with app as first, TestClient(app.app, base_url=BASE, follow_redirects=False) as second:
        assert first.get(f"/skills?token={token}").status_code == 303
        assert first.get("/skills").status_code == 200
        again = second.get(f"/skills?token={token}")
        assert again.status_code == 403
        assert "works once" in again.text
        assert second.get("/skills").status_code == 403
        # The browser that used it may open it again: it is signed in, nothing is issued.
        back = first.get(f"/skills/log?token={token}")
        assert back.status_code == 303 and back.headers["location"] == "/skills/log"
        assert "set-cookie" not in back.headers


def test_a_sign_in_link_expires(store: Store) -> None:
    now = [1000.0]
    door = Door(PORT, link_seconds=120, clock=lambda: now[0])
    late, in_time = door.issue(), door.issue()
    with TestClient(build_app(store, door), base_url=BASE, follow_redirects=False) as client:
        now[0] += 119
        assert client.get(f"/skills?token={in_time}").status_code == 303
        client.cookies.clear()
        now[0] += 1
        assert client.get(f"/skills?token={late}").status_code == 403


def test_a_refused_visit_prints_a_fresh_link_when_the_last_one_is_spent(store: Store) -> None:
    """How a person gets a new link: open the dashboard; the terminal shows one. At most one
    new line per link lifetime, whoever asks."""
    now = [0.0]
    printed: list[str] = []
    door = Door(PORT, clock=lambda: now[0], announce=printed.append)
    first = door.printed_link()
    with TestClient(build_app(store, door), base_url=BASE, follow_redirects=False) as client:
        assert client.get("/skills").status_code == 403
        assert printed == []  # the printed link still works: no second one
        assert client.get(first.removeprefix(BASE)).status_code == 303
    with TestClient(build_app(store, door), base_url=BASE, follow_redirects=False) as other:
        assert other.get(first.removeprefix(BASE)).status_code == 403
        assert len(printed) == 1 and printed[0] != first
        assert other.get("/skills").status_code == 403
        assert len(printed) == 1  # the new one is unused: not printed again
        now[0] += LINK_SECONDS
        assert other.get(printed[0].removeprefix(BASE)).status_code == 403  # expired
        assert len(printed) == 2
        assert other.get(printed[1].removeprefix(BASE)).status_code == 303
        assert other.get("/skills").status_code == 200


def test_the_cookie_is_named_for_its_port_and_scoped_to_the_pages(
    anonymous: TestClient, door: Door
) -> None:
    cookie = anonymous.get(f"/skills?token={door.issue()}").headers["set-cookie"]
    attributes = [part.strip() for part in cookie.split(";")]
    assert attributes[0].startswith(f"kite_skills_{PORT}=")
    assert sorted(attributes[1:]) == ["HttpOnly", "Path=/skills", "SameSite=Strict"]
    assert anonymous.get("/").status_code == 303  # outside the cookie's path: no secret there


def test_a_post_with_cookie_and_csrf_but_no_origin_changes_nothing(
    client: TestClient, db: Path
) -> None:
    """Another app on 127.0.0.1 is sent the cookie by the browser (cookies ignore ports); a
    replay of it with a CSRF token read from a page, without Origin, is refused."""
    form = _publish_form(client)
    del client.headers["origin"]
    before = rows(db)
    refused = client.post("/skills/compare-funds/publish", data=form)
    assert refused.status_code == 403
    assert "no Origin header" in refused.text and "nothing changed" in refused.text
    assert rows(db) == before
    same_origin = client.post(
        "/skills/compare-funds/publish", data=form, headers={"sec-fetch-site": "same-origin"}
    )
    assert same_origin.status_code == 303
    assert rows(db) != before


@pytest.mark.parametrize(
    "path",
    [
        "/%5Cevil.example/x",  # /\evil.example: browsers read \ as /
        "/%5C%5Cevil.example",
        "/%2Fevil.example/x",  # //evil.example: protocol-relative
        "/%2F%2Fevil.example",
        "/%09/evil.example",  # browsers drop tabs and newlines from URLs
        "/%0A/evil.example",
        "/%0D%0A/evil.example",
        "/%5C%09evil.example",
    ],
)
def test_the_sign_in_redirect_never_leaves_the_dashboard(
    anonymous: TestClient, door: Door, path: str
) -> None:
    arrived = anonymous.get(f"{path}?token={door.issue()}")
    assert arrived.status_code == 303
    location = arrived.headers["location"]
    as_a_browser_reads_it = location.replace("\\", "/")
    for dropped in "\t\n\r":
        as_a_browser_reads_it = as_a_browser_reads_it.replace(dropped, "")
    assert as_a_browser_reads_it.startswith("/") and not as_a_browser_reads_it.startswith("//")
    assert urllib.parse.urljoin(BASE + "/skills", as_a_browser_reads_it).startswith(BASE + "/")


@pytest.mark.parametrize("location", ["//evil.example/x", "/\\evil.example", "https://e.x/"])
def test_safe_location_refuses_any_other_host(location: str) -> None:
    """Issue 25: this fails if the protocol-relative (``//``) block is removed."""
    assert safe_location(location).startswith(("/skills", "/%5C"))
    assert not safe_location(location).startswith("//")


def test_the_browser_is_opened_with_no_secret_on_its_command_line(tmp_path: Path) -> None:
    """The real command with a stand-in browser ($BROWSER) that records its argv, as every
    local user can read it in /proc: a file:// URL of a 0600 page that redirects, never the
    token. That page's link signs in once; the printed link too; both files go at the end."""
    argv_file = tmp_path / "argv.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {argv_file}\n')
    browser.chmod(0o700)
    err, db = tmp_path / "err.txt", tmp_path / "s.db"
    env = {**os.environ, "BROWSER": str(browser), "DISPLAY": ":99"}
    env.pop("WAYLAND_DISPLAY", None)
    with err.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "kite_skills", "dashboard", "--port", "0", "--db", str(db)],
            stderr=stderr,
            stdout=subprocess.DEVNULL,
            env=env,
        )
    try:
        printed = _wait_for_link(err, process)
        deadline = time.monotonic() + 30
        while not argv_file.exists() or not argv_file.read_text():
            assert time.monotonic() < deadline and process.poll() is None, err.read_text()
            time.sleep(0.05)
        argv = argv_file.read_text().split("\n")
        assert "token" not in "".join(argv)
        assert argv[0].startswith("file://"), argv
        page = Path(urllib.parse.unquote(urllib.parse.urlparse(argv[0]).path))
        assert stat.S_IMODE(page.stat().st_mode) == 0o600
        assert page.stat().st_uid == os.getuid()
        target = re.search(r'content="0;url=([^"]+)"', page.read_text())
        assert target, page.read_text()
        link = html.unescape(target.group(1))
        assert "?token=" in link and link != printed
        for url in (link, printed):
            assert _open(url) == 200
            with pytest.raises(urllib.error.HTTPError) as refused:
                _open(url)
            assert refused.value.code == 403
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
    assert not page.exists()
    assert "Traceback" not in err.read_text()
    assert "works once" in err.read_text()


def _open(url: str) -> int:
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    with opener.open(url, timeout=10) as page:
        return int(page.status)
