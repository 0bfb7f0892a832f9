"""`kite-skills guard` as an MCP client launches it: a real subprocess on stdio, in front of
`kite-skills sandbox` on stdio or over HTTP with its bearer token, driven by the MCP SDK's
client in both protocol eras."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from ..sandbox.sandbox_harness import command as sandbox_command
from ..sandbox.sandbox_harness import env, http_sandbox, oauth_sandbox
from .guard_harness import (
    ORDER,
    Person,
    client,
    guard_argv,
    journal,
    limits,
    over_sandbox,
    text_of,
)

pytestmark = pytest.mark.anyio
ERAS = [("legacy", "2025-11-25"), ("auto", "2026-07-28")]
BIG = {**ORDER, "quantity": 100, "price": 1600}  # ₹1,60,000


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
async def test_tools_list_is_the_upstreams_own(tmp_path: Path, generation: str) -> None:
    argv = sandbox_command(tmp_path / "direct.jsonl", "--tools", generation)
    direct = StdioServerParameters(command=argv[0], args=argv[1:], env=env(tmp_path))
    async with Client(direct, mode="legacy") as upstream:
        theirs = (await upstream.list_tools()).tools
    for mode, _ in ERAS:
        guard = guard_argv(tmp_path, *over_sandbox(tmp_path, "--tools", generation))
        async with client(guard, tmp_path, mode=mode) as c:
            ours = (await c.list_tools()).tools
        assert [t.model_dump() for t in ours] == [t.model_dump() for t in theirs]


@pytest.mark.parametrize(("mode", "version"), ERAS)
@pytest.mark.parametrize(
    ("answer", "decision", "sent"),
    [
        ("accept", "asked-accepted", True),
        ("accept-unticked", "asked-declined", False),
        ("decline", "asked-declined", False),
        ("cancel", "asked-cancelled", False),
    ],
)
async def test_the_person_is_asked_and_decides(
    tmp_path: Path, mode: str, version: str, answer: str, decision: str, sent: bool
) -> None:
    limits(tmp_path, max_order_value=100_000)
    person = Person(answer)  # type: ignore[arg-type]
    guard = guard_argv(tmp_path, *over_sandbox(tmp_path, "--tools", "legacy"))
    async with client(guard, tmp_path, mode=mode, person=person) as c:  # type: ignore[arg-type]
        assert c.protocol_version == version
        result = await c.call_tool("place_order", {**BIG, "variety": "regular"})
        orders = text_of(await c.call_tool("get_orders", {}))
    assert person.asked == [
        "This order is ₹1,60,000, above your ₹1,00,000 limit per order [order-value]. Place it?"
    ]
    assert (not result.is_error) is sent
    assert ('"quantity":100,' in orders) is sent
    if not sent:
        word = "cancelled" if answer == "cancel" else "declined"
        assert text_of(result).startswith(f"The person {word} it: This order is ₹1,60,000")
    assert [e["decision"] for e in journal(tmp_path)] == [decision]


async def test_a_client_that_cannot_ask_is_refused_with_the_limit(tmp_path: Path) -> None:
    limits(tmp_path, max_order_value=100_000)
    guard = guard_argv(tmp_path, *over_sandbox(tmp_path, "--tools", "grouped"))
    async with client(guard, tmp_path, mode="auto") as c:
        result = await c.call_tool("orders", {"mode": "place", **BIG})
    assert result.is_error
    assert text_of(result) == (
        "kite-skills guard refused place BUY 100 NSE:INFY at 1600: this order is ₹1,60,000, "
        "above your ₹1,00,000 limit per order [order-value]. Nothing was sent; the person can "
        "change a limit with 'kite-skills guard limits set' or on the dashboard's Guard page, "
        "or place it themselves."
    )


async def test_it_fails_closed_when_the_book_cannot_be_read(tmp_path: Path) -> None:
    """The upstream answers get_orders with an error (not served): writes are refused with
    the reason; reads keep working."""
    guard = guard_argv(tmp_path, *over_sandbox(tmp_path, "--tools", "legacy"))
    async with client(guard, tmp_path, environ={"EXCLUDED_TOOLS": "get_orders"}) as c:
        result = await c.call_tool(
            "place_order", {**ORDER, "variety": "regular", "quantity": 1, "price": 1600}
        )
        assert result.is_error and "could not check your limits (get_orders failed" in text_of(
            result
        )
        assert not (await c.call_tool("get_positions", {})).is_error
    assert journal(tmp_path)[-1]["decision"] == "fail-closed"


# How each generation places an order: the tool and the words it adds.
PLACE = {
    "grouped": ("orders", {"mode": "place"}),
    "legacy": ("place_order", {}),
    "legacy-oldest": ("place_order", {}),
}


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
async def test_a_watch_rule_reads_the_account_by_each_generations_tools(
    tmp_path: Path, generation: str
) -> None:
    """The hedged book's iron condor: selling its long call wing while the short call is open
    is refused as a broken hedge, the positions read through the generation's own tools."""
    sandbox = over_sandbox(tmp_path, "--tools", generation, "--scenario", "hedged-book")
    tool, words = PLACE[generation]
    wing = {
        **ORDER, **words, "exchange": "NFO", "tradingsymbol": "BANKNIFTY26DEC59900CE",
        "transaction_type": "SELL", "product": "NRML", "quantity": 30, "price": 250,
    }  # fmt: skip
    async with client(guard_argv(tmp_path, *sandbox), tmp_path) as c:
        result = await c.call_tool(tool, wing)
    assert result.is_error and "[hedge-broken]" in text_of(result)
    assert "after this write, BANKNIFTY up side: 30 exposed, 0 covered" in text_of(result)
    assert journal(tmp_path)[-1]["limits"] == ["hedge-broken"]


# How each generation lists and deletes GTTs.
GTTS = {
    "grouped": (("gtt", {"mode": "list"}), ("gtt", {"mode": "delete"})),
    "legacy": (("get_gtts", {}), ("delete_gtt_order", {})),
    "legacy-oldest": (("get_gtts", {}), ("delete_gtt_order", {})),
}


@pytest.mark.parametrize("generation", ["grouped", "legacy", "legacy-oldest"])
async def test_deleting_the_only_stop_on_a_holding_is_refused_in_each_generation(
    tmp_path: Path, generation: str
) -> None:
    """The default account's two-leg GTT on its 500 ITC shares: its delete is refused as
    protection removed, the GTTs and holdings read through the generation's own tools."""
    (list_tool, list_words), (delete_tool, delete_words) = GTTS[generation]
    guard = guard_argv(tmp_path, *over_sandbox(tmp_path, "--tools", generation))
    async with client(guard, tmp_path) as c:
        listed = json.loads(text_of(await c.call_tool(list_tool, list_words)))
        (itc,) = [t for t in listed if t["condition"]["tradingsymbol"] == "ITC"]
        result = await c.call_tool(delete_tool, {**delete_words, "trigger_id": itc["id"]})
        assert result.is_error and "[protection-removed]" in text_of(result)
        assert "NSE:ITC: 500 open, 0 of 500 still protected" in text_of(result)
        listed = json.loads(text_of(await c.call_tool(list_tool, list_words)))
    assert [t["status"] for t in listed if t["id"] == itc["id"]] == ["active"]


async def test_it_fails_closed_when_the_gtts_cannot_be_read(tmp_path: Path) -> None:
    """The upstream does not serve get_gtts: a cancel (which could remove a stop) is refused
    with the reason; with the watch rules off it goes through, and reads keep working."""
    guard = guard_argv(tmp_path, *over_sandbox(tmp_path, "--tools", "legacy"))
    cancel = {"variety": "regular", "order_id": "261202200000002"}  # the default book's SBIN
    async with client(guard, tmp_path, environ={"EXCLUDED_TOOLS": "get_gtts"}) as c:
        result = await c.call_tool("cancel_order", cancel)
        assert result.is_error and "could not check your limits (get_gtts failed" in text_of(result)
        assert not (await c.call_tool("get_positions", {})).is_error
        off = ("hedge_broken", "short_before_hedge", "over_exit", "protection_removed")
        limits(tmp_path, **dict.fromkeys(off, False))
        assert not (await c.call_tool("cancel_order", cancel)).is_error
    assert [e["decision"] for e in journal(tmp_path)] == ["fail-closed", "allow"]


async def test_it_fails_closed_when_the_upstream_times_out(tmp_path: Path) -> None:
    """The sandbox is stopped (SIGSTOP) after the tools are listed: the read before a write
    times out, and the write is refused; once it runs again, so does the guard."""
    pid_file = tmp_path / "upstream.pid"
    words = " ".join(f"'{w}'" for w in sandbox_command(tmp_path / "s.jsonl", "--tools", "legacy"))
    shell = ["--", "/bin/sh", "-c", f"echo $$ > '{pid_file}'; exec {words}"]
    guard = guard_argv(tmp_path, *shell, timeout=1.0)
    async with client(guard, tmp_path) as c:
        pid = int(pid_file.read_text())
        os.kill(pid, signal.SIGSTOP)
        try:
            order = {**ORDER, "variety": "regular", "quantity": 1, "price": 1600}
            result = await c.call_tool("place_order", order)
            assert result.is_error
            assert "could not check your limits (get_orders did not answer within 1 s)" in text_of(
                result
            )
        finally:
            os.kill(pid, signal.SIGCONT)
        with anyio.fail_after(30):
            while True:  # the late answers drain; then the guard judges again
                result = await c.call_tool("place_order", {**order, "quantity": 2})
                if not result.is_error:
                    break
    assert journal(tmp_path)[0]["decision"] == "fail-closed"


async def test_over_http_with_the_sandboxs_bearer_token(tmp_path: Path) -> None:
    limits(tmp_path, max_order_value=100_000)
    with http_sandbox(tmp_path, tmp_path / "s.jsonl") as (port, token, _):
        guard = guard_argv(
            tmp_path, "--url", f"http://127.0.0.1:{port}/mcp", "--bearer-env", "SANDBOX_TOKEN"
        )
        person = Person("accept")
        async with client(guard, tmp_path, person=person, environ={"SANDBOX_TOKEN": token}) as c:
            assert "portfolio" in {t.name for t in (await c.list_tools()).tools}
            small = await c.call_tool(
                "orders", {"mode": "place", **ORDER, "quantity": 1, "price": 1600}
            )
            big = await c.call_tool("orders", {"mode": "place", **BIG})
        assert not small.is_error and not big.is_error and len(person.asked) == 1
    path = tmp_path / "guard.jsonl"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert token not in path.read_text()
    assert [e["decision"] for e in journal(tmp_path)] == ["allow", "asked-accepted"]


def test_a_wrong_bearer_token_stops_the_guard_before_serving(tmp_path: Path) -> None:
    with http_sandbox(tmp_path, tmp_path / "s.jsonl") as (port, _token, _):
        argv = guard_argv(tmp_path, "--url", f"http://127.0.0.1:{port}/mcp", "--bearer-env", "T")
        done = subprocess.run(
            argv,
            env={**env(tmp_path), "T": "tok-x9z-wrong"},
            input=b"",
            capture_output=True,
            timeout=60,
        )
    said = done.stderr.decode()
    assert done.returncode == 1 and done.stdout == b""
    assert f"error: cannot reach the Kite MCP server http://127.0.0.1:{port}/mcp: " in said
    assert "Traceback" not in said and "tok-x9z" not in said  # the token is never shown


@pytest.mark.zipapp
async def test_the_built_file_guards_its_own_sandbox(tmp_path: Path, shiv_root: Path) -> None:
    """The built file's `guard --sandbox` (the guard and the sandbox from the zipapp, started
    the way `setup --guard` writes it): the sandbox's tools, and a limit that fires."""
    from ..server.harness import zipapp

    limits(tmp_path, max_order_value=100_000)
    pyz = str(zipapp())
    argv = [sys.executable, pyz, "guard", "--limits", str(tmp_path / "limits.json"),
            "--journal", str(tmp_path / "guard.jsonl"), "--sandbox", "--",
            "--journal", str(tmp_path / "s.jsonl")]  # fmt: skip
    person = Person("decline")
    async with client(argv, tmp_path, person=person, environ={"SHIV_ROOT": str(shiv_root)}) as c:
        assert "portfolio" in {t.name for t in (await c.list_tools()).tools}
        result = await c.call_tool("orders", {"mode": "place", **BIG})
    assert result.is_error and len(person.asked) == 1
    assert [e["decision"] for e in journal(tmp_path)] == ["asked-declined"]


# The person's browser for `guard --url … --oauth` from the built file: the guard opens it
# through Python's webbrowser, which runs $BROWSER with the address and waits for it; the
# sign-in's answer comes back only after it returns, so the page is driven in the background.
BROWSER = """#!/bin/sh
"{python}" "{driver}" "$1" >/dev/null 2>>"{log}" &
"""
# Approve on the sandbox's consent page, then follow the redirect to the guard's loopback.
APPROVE = """import re, sys
import httpx2
with httpx2.Client(timeout=30) as http:
    page = http.get(sys.argv[1], follow_redirects=True)
    assert page.status_code == 200 and "Approve" in page.text, page.text
    request = re.search(r'name="request" value="([^"]+)"', page.text).group(1)
    back = http.post(page.url.join("/consent"), data={"request": request, "decision": "approve"})
    assert back.status_code == 302, back.text
    http.get(back.headers["location"])
"""


@pytest.mark.zipapp
@pytest.mark.parametrize("sign_in", ["bearer", "oauth"])
async def test_the_built_file_guards_a_server_over_http(
    tmp_path: Path, shiv_root: Path, sign_in: str
) -> None:
    """The built file's `guard --url` in front of the built file's `sandbox --http`, as in
    front of Zerodha's hosted server (Streamable HTTP, OAuth 2.1), which cannot be reached from
    the test machines: signed in with the sandbox's bearer token, or with --oauth in the
    person's browser; the upstream's tools are listed, a read passes and a write is judged.
    The guard runs on a CPython of the machine's own (as a person's client starts it), not the
    test venv's, whose site-packages would lend the file an HTTP client it lacks."""
    from ..server.harness import zipapp
    from ..zipapp_platforms import runnable

    limits(tmp_path, max_order_value=100_000)
    pyz = zipapp()
    environ = {**env(tmp_path), "SHIV_ROOT": str(shiv_root)}
    del environ["PYTHONPATH"]  # nothing of this tree: the file's own modules only
    served = (
        http_sandbox(tmp_path, tmp_path / "s.jsonl", pyz=pyz)
        if sign_in == "bearer"
        else oauth_sandbox(tmp_path, tmp_path / "s.jsonl", pyz=pyz)
    )
    with served as (port, *rest):
        url = f"http://127.0.0.1:{port}/mcp"
        if sign_in == "bearer":
            environ["SANDBOX_TOKEN"] = rest[0]
            how = ["--bearer-env", "SANDBOX_TOKEN"]
        else:
            browser = tmp_path / "browser.sh"
            browser.write_text(
                BROWSER.format(
                    python=sys.executable, driver=tmp_path / "approve.py", log=tmp_path / "b.log"
                )
            )
            browser.chmod(0o755)
            (tmp_path / "approve.py").write_text(APPROVE)
            environ["BROWSER"] = str(browser)
            how = ["--oauth"]
        argv = [runnable()[-1].path, str(pyz), "guard", "--limits", str(tmp_path / "limits.json"),
                "--journal", str(tmp_path / "guard.jsonl"), "--url", url, *how]  # fmt: skip
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=environ)
        async with Client(params, mode="legacy") as c:
            assert "portfolio" in {t.name for t in (await c.list_tools()).tools}
            read = await c.call_tool("portfolio", {"mode": "margins"})
            big = await c.call_tool("orders", {"mode": "place", **BIG})
    assert not read.is_error, text_of(read)
    assert big.is_error and "above your ₹1,00,000 limit per order [order-value]" in text_of(big)
    assert [e["decision"] for e in journal(tmp_path)] == ["refuse"]
    if sign_in == "oauth":
        assert (tmp_path / "b.log").read_text() == ""  # the consent page was approved


@pytest.mark.zipapp
@pytest.mark.parametrize("trusted", [True, False])
async def test_the_built_files_guard_checks_the_servers_certificate(
    tmp_path: Path, shiv_root: Path, trusted: bool
) -> None:
    """HTTPS as to the hosted server, from the built file on a CPython of the machine's own:
    a certificate signed by an authority named in SSL_CERT_FILE is accepted and the tools are
    listed; without it, the same certificate is refused and the guard stops before serving.
    (On Windows and macOS the authorities are the system's trust store, through truststore;
    this machine is Linux.)"""
    from ..server.harness import zipapp
    from ..zipapp_platforms import runnable
    from .tls_front import tls_front

    environ = {**env(tmp_path), "SHIV_ROOT": str(shiv_root)}
    del environ["PYTHONPATH"]
    with (
        http_sandbox(tmp_path, tmp_path / "s.jsonl", pyz=zipapp()) as (port, token, _),
        tls_front(port, tmp_path) as (front, ca),
    ):
        url = f"https://127.0.0.1:{front}/mcp"
        environ["SANDBOX_TOKEN"] = token
        if trusted:
            environ["SSL_CERT_FILE"] = str(ca)
        argv = [runnable()[-1].path, str(zipapp()), "guard", "--limits",
                str(tmp_path / "limits.json"), "--journal", str(tmp_path / "guard.jsonl"),
                "--url", url, "--bearer-env", "SANDBOX_TOKEN"]  # fmt: skip
        if not trusted:
            done = subprocess.run(argv, env=environ, input=b"", capture_output=True, timeout=120)
            said = done.stderr.decode()
            assert done.returncode == 1 and done.stdout == b"", said
            assert f"error: cannot reach the Kite MCP server {url}: " in said, said
            assert "CERTIFICATE_VERIFY_FAILED" in said and "Traceback" not in said, said
            return
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=environ)
        async with Client(params, mode="legacy") as c:
            assert "portfolio" in {t.name for t in (await c.list_tools()).tools}
            read = await c.call_tool("portfolio", {"mode": "margins"})
    assert not read.is_error, text_of(read)
