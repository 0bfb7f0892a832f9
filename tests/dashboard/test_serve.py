"""Serving the dashboard with real sockets on 127.0.0.1: requests have a deadline and
connections a bound, so idle or half-sent requests from any local user cannot lock the person
out. No test waits on a clock: each waits for an event (a close, an answer) with a bound."""

from __future__ import annotations

import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from kite_skills.dashboard import serve
from kite_skills.dashboard.app import build_app
from kite_skills.dashboard.security import Door, peer_uid
from kite_skills.mcpkit import localhost
from kite_skills.store import Store

from .test_security import _wait_for_link

DASHBOARD = [sys.executable, "-m", "kite_skills", "dashboard", "--port", "0", "--no-browser"]
HALF_A_REQUEST = b"GET /skills HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow"


class Served(NamedTuple):
    port: int
    door: Door
    store: Store


@pytest.fixture
def served(db: Path) -> Iterator[Served]:
    """The real app on the test store under :func:`localhost.config`, with a half-second
    deadline, in a thread."""
    sock = serve.bind(0)
    port = sock.getsockname()[1]
    store = Store.open(db)
    door = Door(port)
    server = serve.Server(localhost.config(build_app(store, door), read_seconds=0.5))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield Served(port, door, store)
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()
        store.close()


def _closed_by_the_server(conn: socket.socket) -> bytes:
    """What the server sent before it closed ``conn`` (fails if it never closes)."""
    conn.settimeout(30)
    received = b""
    while chunk := conn.recv(65536):
        received += chunk
    return received


def _get(port: int, path: str = "/static/style.css", cookie: str = "") -> bytes:
    """One request on its own connection, its whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
        conn.sendall(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
            f"{cookie}\r\n".encode()
        )
        return _closed_by_the_server(conn)


def signed_in(served: Served) -> str:
    """The Cookie header line a browser sends after the sign-in link."""
    answer = _get(served.port, f"/skills?token={served.door.issue()}").decode()
    cookie = re.search(r"(?im)^set-cookie: ([^;]+);", answer)
    assert cookie, answer
    return f"Cookie: {cookie.group(1)}\r\n"


def test_a_half_sent_request_is_closed_after_the_deadline(served: Served) -> None:
    port = served.port
    with socket.create_connection(("127.0.0.1", port), timeout=5) as silent:
        assert _closed_by_the_server(silent) == b""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as half:
        half.sendall(HALF_A_REQUEST)
        assert _closed_by_the_server(half) == b""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as body:
        body.sendall(
            f"POST /skills/new HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Content-Length: 100\r\n\r\nname=x".encode()
        )
        assert _closed_by_the_server(body).startswith(b"HTTP/1.1 403 ")  # not signed in


def test_a_kept_alive_connection_that_starts_a_request_and_stalls_is_closed(
    served: Served,
) -> None:
    """uvicorn's keep-alive timer stops at the first byte of the next request."""
    port = served.port
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(f"GET /static/style.css HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += conn.recv(65536)
        assert answer.startswith(b"HTTP/1.1 200 ")
        conn.sendall(b"G")
        _closed_by_the_server(conn)


def test_idle_connections_beyond_the_bound_give_way_to_a_new_request(tmp_path: Path) -> None:
    """The real command under a 128-file limit, 200 half-sent requests held open by another
    "user": the person's request is still answered, and the oldest idle ones were closed."""
    err = tmp_path / "err.txt"

    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))

    with err.open("w") as stderr:
        process = subprocess.Popen(
            [*DASHBOARD, "--db", str(tmp_path / "s.db")],
            stderr=stderr,
            stdout=subprocess.DEVNULL,
            preexec_fn=low_limit,
        )
    held: list[socket.socket] = []
    try:
        port = int(_wait_for_link(err, process).split(":")[2].split("/")[0])
        for _ in range(200):
            conn = socket.create_connection(("127.0.0.1", port), timeout=10)
            conn.sendall(HALF_A_REQUEST)
            held.append(conn)
        assert _get(port).startswith(b"HTTP/1.1 200 "), err.read_text()
        assert _get(port, "/skills").startswith(b"HTTP/1.1 403 ")  # the guard answers too
        closed = 0
        for conn in held[:100]:  # the oldest: given way to newer ones
            conn.settimeout(10)
            try:
                closed += conn.recv(1) == b""
            except OSError:
                closed += 1
        assert closed == 100
        assert process.poll() is None
    finally:
        for conn in held:
            conn.close()
        process.terminate()
        assert process.wait(timeout=15) == 0
    assert "Traceback" not in err.read_text()


def test_store_work_runs_off_the_event_loop(served: Served) -> None:
    """While one request waits for the store (another thread holds it), the server still
    answers others: the handlers' SQLite calls do not block the event loop."""
    cookie = signed_in(served)
    answers: list[bytes] = []
    served.store._lock.acquire()
    try:
        waiting = threading.Thread(
            target=lambda: answers.append(_get(served.port, "/skills", cookie))
        )
        waiting.start()
        waiting.join(0.5)  # time to reach the store, where it must wait
        assert answers == []
        answers.append(_get(served.port))  # the stylesheet: no store needed
    finally:
        served.store._lock.release()
    waiting.join(30)
    assert [a.split(b"\r\n")[0] for a in answers] == [b"HTTP/1.1 200 OK"] * 2
    assert b"text/css" in answers[0] and b"Waiting for you" in answers[1]


NOBODY = 65534
_AS_ANOTHER_USER = """
import socket, sys
port, request = int(sys.argv[1]), sys.argv[2].encode()
with socket.create_connection(("127.0.0.1", port), timeout=20) as conn:
    conn.sendall(request)
    answer = b""
    while chunk := conn.recv(65536):
        answer += chunk
sys.stdout.write(answer.decode("utf-8", "replace"))
"""


SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")  # one another user may run


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another user needs root")
@pytest.mark.skipif(SYSTEM_PYTHON is None, reason="no /usr/bin/python3 for another user")
def test_another_users_program_is_refused_even_with_the_cookie_and_origin(
    served: Served,
) -> None:
    """Another user's web app on 127.0.0.1 is sent the person's cookie by the browser (cookies
    ignore ports) and can forge any header; on Linux its connection is still not the person's."""
    cookie = signed_in(served)
    page = _get(served.port, "/skills/compare-funds", cookie).decode()
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert csrf, page
    body = f"csrf={csrf.group(1)}&name=planted&description=d&body=b"
    requests = [
        f"GET /skills HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n{cookie}"
        "Connection: close\r\n\r\n",
        f"POST /skills/new HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n{cookie}"
        f"Origin: http://127.0.0.1:{served.port}\r\nSec-Fetch-Site: same-origin\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}",
    ]
    for request in requests:
        done = subprocess.run(
            [str(SYSTEM_PYTHON), "-c", _AS_ANOTHER_USER, str(served.port), request],
            capture_output=True,
            text=True,
            timeout=60,
            user=NOBODY,
            group=NOBODY,
            cwd="/",
            env={"PATH": "/usr/bin:/bin"},
        )
        assert done.stdout.startswith("HTTP/1.1 403 "), done.stdout + done.stderr
        assert "answers only the user who started it" in done.stdout
    assert [s.name for s in served.store.list_all()] == ["compare-funds"]
    assert _get(served.port, "/skills", cookie).startswith(b"HTTP/1.1 200 ")  # the person


def test_the_socket_owner_is_read_from_the_kernels_table(tmp_path: Path) -> None:
    table = tmp_path / "tcp"
    table.write_text(
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid\n"
        "   0: 0100007F:D2C4 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000"
        "        0 4242 1\n"
    )
    client, server = ("127.0.0.1", 0xD2C4), ("127.0.0.1", 0x1F90)
    if sys.byteorder == "little":
        assert peer_uid(client, server, str(table)) == 1000
    assert peer_uid(server, client, str(table)) == -1  # no such socket: refused
    assert peer_uid(("testclient", 50000), server, str(table)) is None
    assert peer_uid(client, server, str(tmp_path / "absent")) is None
