"""Dashboard page latency: p50 of ``GET /skills`` with 1,000 skills, against a baseline.

    python bench/dashboard.py [--skills 1000] [--runs 60]

Builds a store with N skills (most live, some drafts, proposed revisions and archived ones),
serves the real dashboard app with uvicorn on a real 127.0.0.1 socket, and times requests with
a keep-alive HTTP client carrying the session cookie. The baseline, measured in the same run
and the same way, is a trivial Starlette route behind the same uvicorn config. Prints the
medians and the ratio.
"""

from __future__ import annotations

import argparse
import http.client
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

from kite_skills.dashboard.app import build_app
from kite_skills.dashboard.security import Door
from kite_skills.store import Store, agent, human

BODY = "# Procedure\n\n" + "".join(f"{i}. Step {i} of the procedure.\n" for i in range(1, 30))


def fill(store: Store, count: int) -> None:
    drafts, proposals, archived = count // 20, count // 30, count // 50
    live = count - drafts
    human.import_skills(
        store,
        ((f"skill-{i:04d}", f"When to use skill number {i}", BODY) for i in range(live)),
        via="cli",
        who="bench",
    )
    for i in range(live, count):
        agent.save(store, f"skill-{i:04d}", f"A draft, number {i}", BODY, who="bench-agent 1.0")
    for i in range(proposals):
        agent.save(store, f"skill-{i:04d}", "A better description", BODY + "More.\n", who="b 1")
    for i in range(proposals, proposals + archived):
        human.archive(store, f"skill-{i:04d}", via="cli", who="bench")


class Served:
    def __init__(self, app: Any, sock: socket.socket) -> None:
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def bind() -> socket.socket:
    sock = socket.socket()
    # As kite_skills.dashboard.serve.bind does: without it, a response written in two parts
    # waits for the client's delayed ACK (about 40 ms on Linux).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


def timings(port: int, path: str, cookie: str, runs: int) -> list[float]:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    headers = {"Host": f"127.0.0.1:{port}", "Cookie": cookie}
    seen: list[float] = []
    for i in range(runs + 5):
        start = time.perf_counter()
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        body = response.read()
        elapsed = time.perf_counter() - start
        assert response.status == 200, (response.status, body[:200])
        if i >= 5:  # warm-up
            seen.append(elapsed)
    conn.close()
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp) / "skills.db") as store:
        fill(store, args.skills)
        sock = bind()
        door = Door(sock.getsockname()[1])
        dashboard = Served(build_app(store, door), sock)
        conn = http.client.HTTPConnection("127.0.0.1", dashboard.port)
        conn.request(
            "GET", f"/skills?token={door.issue()}", headers={"Host": f"127.0.0.1:{dashboard.port}"}
        )
        cookie = conn.getresponse().getheader("set-cookie", "").split(";")[0]
        conn.close()
        baseline_app = Starlette(routes=[Route("/", lambda r: HTMLResponse("<p>ok</p>"))])
        baseline = Served(baseline_app, bind())
        try:
            base = timings(baseline.port, "/", "", args.runs)
            skills = timings(dashboard.port, "/skills", cookie, args.runs)
            detail = timings(dashboard.port, "/skills/skill-0000", cookie, args.runs)
        finally:
            dashboard.stop()
            baseline.stop()
    b, s, d = (statistics.median(t) * 1000 for t in (base, skills, detail))
    print(f"{args.skills} skills, {args.runs} requests each (p50, keep-alive, 127.0.0.1)")
    print(f"  baseline: trivial Starlette route  {b:8.2f} ms")
    print(f"  dashboard GET /skills              {s:8.2f} ms  ({s / b:.1f}x baseline)")
    print(f"  dashboard GET /skills/NAME (diff)  {d:8.2f} ms  ({d / b:.1f}x baseline)")


if __name__ == "__main__":
    main()
