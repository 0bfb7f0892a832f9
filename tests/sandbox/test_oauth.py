"""`kite-skills sandbox --http --oauth` (kite_skills/sandbox/oauth.py): token lifetimes on the
simulated clock at their edges (an access token's hour, the Kite session's 06:00 IST end,
``expires_in`` in real seconds), the consent page's answers, and the door over real HTTP
(Host and Origin as in --http, /mcp refused without a token the authority issued, the
person's answers only from the sandbox's own page). The guard's sign-in through all of it:
tests/guard/test_oauth.py."""

from __future__ import annotations

import http.client
import json
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from mcp.server.auth.provider import AuthorizationParams, TokenError
from mcp.shared.auth import OAuthClientInformationFull

from kite_skills.sandbox.oauth import SESSION_ENDED, SandboxAuthority, session_end
from kite_skills.sandbox.sim import IST

from .sandbox_harness import oauth_sandbox

REDIRECT = "http://127.0.0.1:9/callback"
CLIENT = OAuthClientInformationFull(
    client_id="c1",
    redirect_uris=[REDIRECT],
    token_endpoint_auth_method="none",  # type: ignore[list-item]
)

OTHER = CLIENT.model_copy(update={"client_id": "c2"})


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def at(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=IST)


class Clock:
    def __init__(self, start: str) -> None:
        self.now = at(start)

    def __call__(self) -> datetime:
        return self.now


@pytest.mark.parametrize(
    ("moment", "ends"),
    [
        ("2026-12-03 05:59:59", "2026-12-03 06:00:00"),
        ("2026-12-03 06:00:00", "2026-12-04 06:00:00"),
        ("2026-12-03 06:00:01", "2026-12-04 06:00:00"),
        ("2026-12-02 23:59:59", "2026-12-03 06:00:00"),
    ],
)
def test_the_kite_session_ends_at_the_next_six_in_the_morning(moment: str, ends: str) -> None:
    assert session_end(at(moment)) == at(ends)


async def signed_in(authority: SandboxAuthority) -> dict[str, object]:
    """Approve one sign-in on the consent page; the token the code is exchanged for."""
    params = AuthorizationParams(
        state="s1", scopes=None, code_challenge="x" * 43, redirect_uri=REDIRECT,  # type: ignore[arg-type]
        redirect_uri_provided_explicitly=True, resource="http://127.0.0.1:9/mcp",
    )  # fmt: skip
    page = await authority.authorize(CLIENT, params)
    target = authority.decide(parse_qs(urlsplit(page).query)["request"][0], approve=True)
    assert target is not None
    given = parse_qs(urlsplit(target).query)["code"][0]
    assert await authority.load_authorization_code(OTHER, given) is None  # not another client's
    code = await authority.load_authorization_code(CLIENT, given)
    assert code is not None
    token = (await authority.exchange_authorization_code(CLIENT, code)).model_dump()
    assert await authority.load_authorization_code(CLIENT, code.code) is None  # used once
    return token


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("start", "speed", "expires_in", "last_good"),
    [
        ("2026-12-02 11:30:00", 1.0, 3600, "2026-12-02 12:29:59"),  # an hour
        ("2026-12-02 11:30:00", 3600.0, 1, "2026-12-02 12:29:59"),  # a second at 3600x
        ("2026-12-02 11:30:00", 0.5, 7200, "2026-12-02 12:29:59"),
        ("2026-12-03 05:30:00", 1.0, 1800, "2026-12-03 05:59:59"),  # the session ends first
        ("2026-12-03 05:00:00", 1.0, 3600, "2026-12-03 05:59:59"),  # both at once
        ("2026-12-03 04:59:59", 1.0, 3600, "2026-12-03 05:59:58"),  # an hour, a second before
    ],
)
async def test_an_access_token_lives_an_hour_within_the_kite_session(
    start: str, speed: float, expires_in: int, last_good: str
) -> None:
    clock = Clock(start)
    authority = SandboxAuthority(clock, speed)
    token = await signed_in(authority)
    assert token["expires_in"] == expires_in
    clock.now = at(last_good)
    assert await authority.load_access_token(str(token["access_token"])) is not None
    clock.now += timedelta(seconds=1)
    assert await authority.load_access_token(str(token["access_token"])) is None


@pytest.mark.anyio
async def test_expires_in_is_rounded_up_to_a_whole_second() -> None:
    token = await signed_in(SandboxAuthority(Clock("2026-12-02 11:30:00"), 3600.0 * 2))
    assert token["expires_in"] == 1


@pytest.mark.anyio
@pytest.mark.parametrize(("refresh_at", "works"), [("05:59:59", True), ("06:00:00", False)])
async def test_a_refresh_works_until_the_kite_session_ends(refresh_at: str, works: bool) -> None:
    clock = Clock("2026-12-02 11:30:00")
    authority = SandboxAuthority(clock, 1.0)
    token = await signed_in(authority)
    clock.now = at(f"2026-12-03 {refresh_at}")
    assert await authority.load_refresh_token(OTHER, str(token["refresh_token"])) is None
    refresh = await authority.load_refresh_token(CLIENT, str(token["refresh_token"]))
    assert refresh is not None and refresh.resource == "http://127.0.0.1:9/mcp"
    if not works:
        with pytest.raises(TokenError) as refused:
            await authority.exchange_refresh_token(CLIENT, refresh, [])
        assert (refused.value.error, refused.value.error_description) == (
            "invalid_grant", SESSION_ENDED
        )  # fmt: skip
        return
    again = (await authority.exchange_refresh_token(CLIENT, refresh, [])).model_dump()
    assert again["expires_in"] == 1  # the access token ends with the session, at 06:00
    assert await authority.load_access_token(str(again["access_token"])) is not None
    # rotated: the old refresh token is spent
    assert await authority.load_refresh_token(CLIENT, str(token["refresh_token"])) is None


@pytest.mark.anyio
async def test_a_code_is_used_once_and_a_denial_goes_back_with_access_denied() -> None:
    authority = SandboxAuthority(Clock("2026-12-02 11:30:00"), 1.0)
    params = AuthorizationParams(
        state="s2", scopes=None, code_challenge="x" * 43, redirect_uri=REDIRECT,  # type: ignore[arg-type]
        redirect_uri_provided_explicitly=True,
    )  # fmt: skip
    page = await authority.authorize(CLIENT, params)
    request = parse_qs(urlsplit(page).query)["request"][0]
    target = authority.decide(request, approve=False)
    assert target is not None and target.startswith(REDIRECT + "?")
    query = parse_qs(urlsplit(target).query)
    assert query["error"] == ["access_denied"] and query["state"] == ["s2"]
    assert "code" not in query
    assert authority.decide(request, approve=True) is None  # answered once
    assert authority.codes == {}


def call(
    port: int, method: str, path: str, headers: dict[str, str], body: bytes | None = None
) -> tuple[int, dict[str, str], str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode()
    finally:
        connection.close()


def test_the_door_with_oauth(tmp_path: Path) -> None:
    with oauth_sandbox(tmp_path, tmp_path / "j.jsonl") as (port, lines):
        assert "sign in with OAuth 2.1" in lines[1]
        host = {"Host": f"127.0.0.1:{port}"}
        status, headers, _ = call(
            port, "POST", "/mcp", {**host, "Content-Type": "application/json"}, b"{}"
        )
        assert status == 401
        assert (
            f'resource_metadata="http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"'
            in headers["www-authenticate"]
        )
        status, _, _ = call(
            port, "POST", "/mcp", {**host, "Authorization": "Bearer made-up"}, b"{}"
        )
        assert status == 401
        status, _, body = call(port, "GET", "/.well-known/oauth-protected-resource/mcp", host)
        assert status == 200 and json.loads(body)["authorization_servers"] == [
            f"http://127.0.0.1:{port}"
        ]
        status, _, body = call(port, "GET", "/.well-known/oauth-authorization-server", host)
        metadata = json.loads(body)
        assert metadata["code_challenge_methods_supported"] == ["S256"]
        assert metadata["registration_endpoint"] == f"http://127.0.0.1:{port}/register"
        status, _, _ = call(port, "GET", "/.well-known/oauth-authorization-server",
                            {"Host": f"evil.example:{port}"})  # fmt: skip
        assert status == 421
        # A client named to attack the consent page, then the page a person sees.
        named = {"redirect_uris": [REDIRECT], "client_name": "<script>x</script>",
                 "token_endpoint_auth_method": "none"}  # fmt: skip
        json_body = {**host, "Content-Type": "application/json"}
        status, _, body = call(port, "POST", "/register", json_body, json.dumps(named).encode())
        assert status == 201
        client_id = json.loads(body)["client_id"]
        query = urlencode({"response_type": "code", "client_id": client_id,
                           "redirect_uri": REDIRECT, "state": "s3", "code_challenge": "x" * 43,
                           "code_challenge_method": "S256"})  # fmt: skip
        status, headers, _ = call(port, "GET", f"/authorize?{query}", host)
        assert status == 302 and headers["location"].startswith("/consent?request=")
        status, _, page = call(port, "GET", headers["location"], host)
        assert (
            status == 200
            and "&lt;script&gt;x&lt;/script&gt; asks" in page
            and "<script>" not in page
        )
        request = parse_qs(urlsplit(headers["location"]).query)["request"][0]
        form = {**host, "Content-Type": "application/x-www-form-urlencoded"}
        approve = urlencode({"request": request, "decision": "approve"}).encode()
        status, _, _ = call(
            port, "POST", "/consent", {**form, "Origin": "http://evil.example"}, approve
        )
        assert status == 403  # another web page cannot answer for the person
        status, _, body = call(
            port,
            "POST",
            "/consent",
            form,
            urlencode({"request": "guess", "decision": "approve"}).encode(),
        )
        assert status == 400 and "no such sign-in request" in body
        status, headers, _ = call(
            port, "POST", "/consent", {**form, "Origin": f"http://127.0.0.1:{port}"}, approve
        )
        assert status == 302 and parse_qs(urlsplit(headers["location"]).query)["state"] == ["s3"]
