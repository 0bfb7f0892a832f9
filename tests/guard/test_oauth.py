"""The guard's sign-in (kite_skills/guard/oauth.py) against `kite-skills sandbox --http --oauth`
over real loopback HTTP, with the MCP SDK's streamable HTTP client: the person approves or
denies on the sandbox's consent page (driven here by an HTTP client, as their browser would),
the answer comes back to the guard's loopback listener, and the tokens stay in memory.

Zerodha's hosted server (https://mcp.kite.trade/mcp) cannot be reached from the test
machines; the sandbox's --oauth mode signs in the way its documentation describes."""

from __future__ import annotations

import json
import logging
import re
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from kite_skills.guard.oauth import LoopbackRedirect, SignInError, upstream_auth

from ..sandbox.sandbox_harness import json_of, oauth_sandbox
from ..server.harness import zipapp

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Browser:
    """The person's browser: each sign-in page it is shown gets the next answer ("approve" or
    "deny") on the consent page, on its own thread (``webbrowser.open`` returns at once too).
    ``codes`` holds the authorization codes it carried back to the guard."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.opened: list[str] = []
        self.codes: list[str] = []
        self.problems: list[BaseException] = []
        self.threads: set[int | None] = set()

    def __call__(self, url: str) -> bool:
        self.opened.append(url)
        answer = self.answers.pop(0)
        thread = threading.Thread(target=self._drive, args=(url, answer), daemon=True)
        thread.start()
        self.threads.add(thread.ident)
        return True

    def _drive(self, url: str, answer: str) -> None:
        try:
            with httpx2.Client(timeout=30) as http:
                page = http.get(url, follow_redirects=True)
                assert page.status_code == 200 and "Approve" in page.text, page.text
                request = re.search(r'name="request" value="([^"]+)"', page.text)
                assert request is not None
                back = http.post(
                    page.url.join("/consent"),
                    data={"request": request.group(1), "decision": answer},
                )
                assert back.status_code == 302
                target = back.headers["location"]
                self.codes += httpx2.URL(target).params.get_list("code")
                http.get(target)  # to the guard's loopback listener
        except BaseException as exc:  # reported by the test, not lost on a thread
            self.problems.append(exc)


class Wire:
    """Every bearer token the guard sent and every token the sandbox issued, as seen on the
    wire by the HTTP client's event hooks (so the test knows what must never be stored)."""

    def __init__(self) -> None:
        self.bearers: list[str] = []
        self.issued: list[dict[str, Any]] = []
        self.grants: list[str] = []

    async def request(self, request: httpx2.Request) -> None:
        bearer = request.headers.get("authorization", "")
        if bearer.startswith("Bearer ") and bearer[7:] not in self.bearers:
            self.bearers.append(bearer[7:])
        if request.url.path == "/token":
            self.grants += re.findall(r"grant_type=(\w+)", request.content.decode())

    async def response(self, response: httpx2.Response) -> None:
        if response.request.url.path == "/token" and response.status_code == 200:
            await response.aread()
            self.issued.append(json.loads(response.content))

    def secrets(self, browser: Browser) -> set[str]:
        tokens = {t[k] for t in self.issued for k in ("access_token", "refresh_token")}
        return tokens | set(self.bearers) | set(browser.codes)


@asynccontextmanager
async def guard_client(port: int, browser: Browser, wire: Wire) -> AsyncIterator[Client]:
    url = f"http://127.0.0.1:{port}/mcp"
    http = create_mcp_http_client(auth=upstream_auth(url, open_browser=browser, timeout=60))
    http.event_hooks["request"].append(wire.request)
    http.event_hooks["response"].append(wire.response)
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        yield client


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """HOME, the data and config folders and the temporary folder of this process and the
    sandbox, all under one tree that the tests search for tokens afterwards."""
    root = tmp_path / "home"
    (root / "tmp").mkdir(parents=True)
    for name, sub in (("HOME", ""), ("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "config"),
                      ("XDG_CACHE_HOME", "cache"), ("TMPDIR", "tmp")):  # fmt: skip
        monkeypatch.setenv(name, str(root / sub))
    monkeypatch.setattr(tempfile, "tempdir", str(root / "tmp"))
    yield root


def files_holding(root: Path, secrets: set[str]) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path}: {s[:6]}…" for s in secrets if s.encode() in data]
    return found


async def test_sign_in_then_tools_through_the_sdk_client_with_tokens_only_in_memory(
    home: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # every library's log line, the SDK's and httpx2's included
    browser, wire = Browser("approve"), Wire()
    with oauth_sandbox(home, home / "journal.jsonl") as (port, sandbox_log):
        async with guard_client(port, browser, wire) as client:
            tools = await client.list_tools()
            assert [t.name for t in tools.tools] == [
                "alerts", "gtt", "market", "mutual_funds", "orders", "portfolio", "session"
            ]  # fmt: skip
            margins = json_of(await client.call_tool("portfolio", {"mode": "margins"}))
            assert set(margins) == {"equity", "commodity"}
    assert browser.problems == [] and len(browser.opened) == 1 and len(browser.codes) == 1
    assert wire.grants == ["authorization_code"] and len(wire.issued) == 1
    secrets = wire.secrets(browser)
    assert len(secrets) == 3  # the code, the access token (the bearer sent), the refresh token
    said = capfd.readouterr()
    assert said.out == ""  # stdout is the MCP wire: the sign-in says nothing there
    assert f"sign in to http://127.0.0.1:{port}/mcp in your browser" in said.err
    guard_logs = [r.getMessage() for r in caplog.records if r.thread not in browser.threads]
    logs = [said.err, *sandbox_log, *guard_logs]  # the browser's own HTTP log is not ours
    assert [line for line in logs if any(s in line for s in secrets)] == []
    assert files_holding(tmp_path, secrets) == []
    calls = [json.loads(x) for x in (home / "journal.jsonl").read_text().splitlines()]
    assert calls[-1]["tool"] == "portfolio"


async def test_a_refused_sign_in_is_a_clear_error(home: Path) -> None:
    browser, wire = Browser("deny"), Wire()
    with oauth_sandbox(home, home / "journal.jsonl") as (port, _):
        with pytest.raises(ExceptionGroup) as raised:
            async with guard_client(port, browser, wire):
                pass
    refused = raised.value.subgroup(SignInError)
    assert refused is not None
    assert str(refused.exceptions[0]) == (
        "the sign-in was refused (access_denied: the person denied the sign-in on the "
        "sandbox's consent page) — the next call through the guard opens the sign-in page "
        "again: approve it there to use this server"
    )
    assert browser.problems == [] and browser.codes == [] and wire.issued == []


async def test_an_expired_access_token_is_refreshed_without_the_browser(home: Path) -> None:
    """At 3600x an access token (an hour, simulated) expires a second after it is issued; the
    next call refreshes it, and the person is not asked again."""
    browser, wire = Browser("approve"), Wire()
    with oauth_sandbox(home, home / "journal.jsonl", "--speed", "3600") as (port, _):
        async with guard_client(port, browser, wire) as client:
            await client.call_tool("portfolio", {"mode": "margins"})
            assert wire.issued[0]["expires_in"] == 1
            time.sleep(2)  # two simulated hours: the access token is past its end
            margins = json_of(await client.call_tool("portfolio", {"mode": "margins"}))
    assert set(margins) == {"equity", "commodity"}
    assert wire.grants == ["authorization_code", "refresh_token"]
    assert len(wire.bearers) == 2 and wire.bearers[1] == wire.issued[1]["access_token"]
    assert len(browser.opened) == 1 and browser.problems == []


async def test_when_the_kite_session_ends_the_person_is_asked_again(
    home: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """At 05:00 IST both tokens end at 06:00 (an hour, six seconds at 600x): the refresh is
    refused, the browser opens again, and a refusal there is the clear error.

    The sign-in must end before 06:00 (within six seconds of the sandbox's start, a margin a
    loaded machine keeps), and the second call comes after it: six seconds and a little after
    the sandbox said it was listening, its clock having started before that."""
    browser, wire = Browser("approve", "deny"), Wire()
    speed = 600
    at = ("--at", "2026-12-03 05:00", "--speed", str(speed))
    with oauth_sandbox(home, home / "journal.jsonl", *at) as (port, _):
        listening = time.monotonic()
        with pytest.raises(ExceptionGroup) as raised:
            async with guard_client(port, browser, wire) as client:
                await client.call_tool("portfolio", {"mode": "margins"})
                assert time.monotonic() - listening < 3600 / speed, "signed in after 06:00"
                time.sleep(max(0.0, listening + 3600 / speed + 0.5 - time.monotonic()))
                await client.call_tool("portfolio", {"mode": "margins"})
    refused = raised.value.subgroup(SignInError)
    assert refused is not None and "the sign-in was refused" in str(refused.exceptions[0])
    assert wire.grants == ["authorization_code", "refresh_token"] and len(wire.issued) == 1
    assert len(browser.opened) == 2 and browser.problems == []
    assert f"kite-skills guard: the session ended; sign in to http://127.0.0.1:{port}/mcp" in (
        capfd.readouterr().err
    )


def visit(url: str) -> tuple[int, str]:
    with httpx2.Client(timeout=30) as http:
        response = http.get(url)
        return response.status_code, response.text


async def test_the_loopback_takes_only_this_sign_ins_answer_then_stops_listening() -> None:
    loopback = LoopbackRedirect()
    assert loopback.uri == f"http://127.0.0.1:{loopback.port}/callback"
    loopback.listen()
    seen: list[tuple[int, str]] = []

    def browser() -> None:
        seen.append(visit(f"http://127.0.0.1:{loopback.port}/favicon.ico"))
        seen.append(visit(f"{loopback.uri}?code=stolen&state=another"))
        seen.append(visit(f"{loopback.uri}?state=s1"))
        seen.append(visit(f"{loopback.uri}?code=c1&state=s1&iss=http%3A%2F%2Fas"))

    thread = threading.Thread(target=browser)
    thread.start()
    result = await loopback.answer("s1", timeout=60)
    thread.join()
    assert (result.code, result.state, result.iss) == ("c1", "s1", "http://as")
    assert [status for status, _ in seen] == [404, 400, 400, 200]
    assert "another sign-in" in seen[1][1] and "Signed in." in seen[3][1]
    with pytest.raises(httpx2.ConnectError):  # held for the next sign-in, not listening
        visit(loopback.uri)


async def test_an_unanswered_sign_in_ends_with_a_clear_error() -> None:
    loopback = LoopbackRedirect()
    loopback.listen()
    with pytest.raises(SignInError) as late:
        await loopback.answer("s1", timeout=0.2)
    assert str(late.value) == (
        "no answer came back from the browser in time — the next call through the guard "
        "opens the sign-in page again: approve it there"
    )


@pytest.mark.zipapp
async def test_the_built_sandbox_signs_the_guard_in(home: Path) -> None:
    """The built file's `sandbox --http --oauth` (its SDK auth routes, the consent form's
    parser) with the guard's sign-in from this tree."""
    browser, wire = Browser("approve"), Wire()
    with oauth_sandbox(home, home / "journal.jsonl", pyz=zipapp()) as (port, _):
        async with guard_client(port, browser, wire) as client:
            margins = json_of(await client.call_tool("portfolio", {"mode": "margins"}))
    assert set(margins) == {"equity", "commodity"}
    assert wire.grants == ["authorization_code"] and browser.problems == []
