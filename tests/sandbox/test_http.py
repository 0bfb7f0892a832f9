"""`kite-skills sandbox --http`: 127.0.0.1 only, every request needs the per-launch bearer
token (401 with a one-line reason without it), Host and Origin checked against DNS
rebinding, and the SDK client works over it in both eras with the token."""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import time
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from .sandbox_harness import MODERN, http_sandbox, json_of

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "raw", "version": "1"}},
}  # fmt: skip


def post(port: int, headers: dict[str, str]) -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(
            "POST",
            "/mcp",
            body=json.dumps(INIT),
            headers={"Content-Type": "application/json",
                     "Accept": "application/json, text/event-stream", **headers},
        )  # fmt: skip
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def test_the_door(tmp_path: Path) -> None:
    with http_sandbox(tmp_path, tmp_path / "j.jsonl") as (port, token, lines):
        assert "SIMULATION" in lines[0]
        host = {"Host": f"127.0.0.1:{port}"}
        status, body = post(port, host)
        assert status == 401 and body.count("\n") == 1 and "Authorization: Bearer" in body
        status, body = post(port, {**host, "Authorization": "Bearer " + "x" * len(token)})
        assert status == 401 and "wrong" in body
        status, body = post(port, {**host, "Authorization": f"Basic {token}"})
        assert status == 401
        good = {"Authorization": f"Bearer {token}"}
        status, body = post(port, {**good, "Host": f"evil.example:{port}"})
        assert status == 421
        status, body = post(port, {**good, **host, "Origin": "http://evil.example"})
        assert status == 403
        status, body = post(port, {**good, **host})
        assert status == 200 and json.loads(body)["result"]["serverInfo"]["name"] == "kite-sandbox"
        status, _ = post(
            port, {**good, "Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}
        )
        assert status == 200


@pytest.mark.anyio
@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", MODERN)])
async def test_sdk_client_over_http_with_the_token(tmp_path: Path, mode: str, version: str) -> None:
    journal = tmp_path / "j.jsonl"
    with http_sandbox(tmp_path, journal) as (port, token, _):
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)
        async with http, Client(transport, mode=mode) as client:  # type: ignore[arg-type]
            assert client.protocol_version == version
            margins = json_of(await client.call_tool("portfolio", {"mode": "margins"}))
            assert set(margins) == {"equity", "commodity"}
    calls = [json.loads(x) for x in journal.read_text().splitlines()]
    assert calls[0]["transport"] == "http" and calls[-1]["tool"] == "portfolio"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_a_taken_port_is_said_before_anything_is_served(tmp_path: Path) -> None:
    import socket
    import subprocess

    from .sandbox_harness import command, env

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        journal = tmp_path / "j.jsonl"
        done = subprocess.run(
            [*command(journal, "--http", "--port", str(port))],
            env=env(tmp_path),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"kite-skills sandbox: error: cannot listen on 127.0.0.1:{port}: Address already in use "
        "— choose another port with --port N, or --port 0 for a free one"
    ]
    assert not journal.exists()


@pytest.mark.anyio
async def test_an_order_reconciliation_workflow_over_http(tmp_path: Path) -> None:
    """As the Go server's own integration test did against its mock API, over authenticated
    HTTP: place, find it in the order book, modify, read its history, cancel, reconcile."""
    journal = tmp_path / "j.jsonl"
    with http_sandbox(tmp_path, journal) as (port, token, _):
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)
        async with http, Client(transport, mode="auto") as client:
            quote = json_of(
                await client.call_tool("market", {"mode": "ltp", "instruments": ["NSE:INFY"]})
            )
            found = json_of(await client.call_tool(
                "market", {"mode": "search", "search_mode": "get_by_id", "id": "NSE:INFY",
                           "verbosity": "full"}))  # fmt: skip
            tick = found["data"][0]["tick_size"]
            price = round(round(quote["NSE:INFY"]["last_price"] * 0.9 / tick) * tick, 2)
            order = {"mode": "place", "exchange": "NSE", "tradingsymbol": "INFY",
                     "transaction_type": "BUY", "quantity": 3, "product": "CNC",
                     "order_type": "LIMIT", "price": price, "tag": "rehearsal"}  # fmt: skip
            order_id = json_of(await client.call_tool("orders", order))["order_id"]
            book = json_of(await client.call_tool("orders", {"mode": "list"}))
            mine = next(o for o in book if o["order_id"] == order_id)
            assert mine["status"] == "OPEN" and mine["tag"] == "rehearsal"
            lower = round(price - tick, 2)
            modified = await client.call_tool(
                "orders", {"mode": "modify", "order_id": order_id, "order_type": "LIMIT",
                           "quantity": 3, "price": lower})  # fmt: skip
            assert json_of(modified) == {"order_id": order_id}
            history = json_of(
                await client.call_tool("orders", {"mode": "history", "order_id": order_id})
            )
            assert history[-1]["price"] == lower and history[-1]["quantity"] == 3
            assert history[-1]["modified"] is True or any(
                h["status"] == "MODIFY VALIDATION PENDING" for h in history
            )
            cancelled = await client.call_tool("orders", {"mode": "cancel", "order_id": order_id})
            assert json_of(cancelled) == {"order_id": order_id}
            book = json_of(await client.call_tool("orders", {"mode": "list", "limit": 50}))
            final = next(o for o in book["data"] if o["order_id"] == order_id)
            assert final["status"] == "CANCELLED" and final["cancelled_quantity"] == 3
    calls = [json.loads(x) for x in journal.read_text().splitlines() if '"call"' in x]
    modes = [c["arguments"].get("mode") for c in calls]
    assert modes == ["ltp", "search", "place", "list", "modify", "history", "cancel", "list"]


HALF_A_REQUEST = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow"


def test_half_sent_requests_and_junk_from_another_program_do_not_lock_the_person_out(
    tmp_path: Path,
) -> None:
    """The localhost door on the sandbox's listener (kite_skills/mcpkit/localhost.py), with the
    real command under a 128-file limit: 300 half-sent requests held open, then the person's
    request, which is still answered; then 50 connections that send no HTTP at all. The oldest
    half-sent ones were closed to make room, and stderr holds a few lines, not a traceback per
    connection."""
    import resource
    import socket
    import subprocess

    from .sandbox_harness import command, env

    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))

    err = tmp_path / "err.txt"
    with err.open("w") as stderr:
        process = subprocess.Popen(
            command(tmp_path / "j.jsonl", "--http", "--port", "0"),
            env=env(tmp_path),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            preexec_fn=low_limit,
        )
    held: list[socket.socket] = []
    try:
        for _ in range(600):  # the start line, within a minute
            started = re.search(r"127\.0\.0\.1:(\d+)/mcp.*Bearer (\S+?)'", err.read_text())
            if started or process.poll() is not None:
                break
            time.sleep(0.1)
        assert started, err.read_text()
        port, token = int(started.group(1)), started.group(2)
        for _ in range(300):
            conn = socket.create_connection(("127.0.0.1", port), timeout=10)
            conn.sendall(HALF_A_REQUEST)
            held.append(conn)
        status, body = post(port, {"Host": f"127.0.0.1:{port}", "Authorization": f"Bearer {token}"})
        assert status == 200 and "kite-sandbox" in body, err.read_text()[-2000:]
        for _ in range(50):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as junk:
                junk.sendall(b"\x16\x03\x01 not http\r\n\r\n")
                junk.settimeout(10)
                with contextlib.suppress(OSError):
                    while junk.recv(65536):
                        pass
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
        process.wait(timeout=20)
    said = err.read_text()
    assert "Traceback" not in said
    assert said.count("Invalid HTTP request received.") == 1  # once a minute, not per connection
    assert len(said.splitlines()) <= 4, said
