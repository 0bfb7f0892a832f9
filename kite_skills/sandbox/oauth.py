"""``kite-skills sandbox --http --oauth``: /mcp signed in to the way Zerodha's hosted server
does it (OAuth 2.1: protected resource metadata, authorization server metadata, dynamic
client registration, PKCE S256, a bearer on every /mcp request), built from the MCP SDK's
auth components. What the sandbox adds is the person's consent page (Approve or Deny, as
the hosted server's interstitial before the Kite login) and token lifetimes on the
simulated clock.

Lifetimes, on the simulated clock: an access token lives :data:`ACCESS_TOKEN_LIFETIME`; a
refresh token until the Kite session ends (:data:`SESSION_ENDS`, 06:00 IST the next
morning, as a Kite access token does), and no access token outlives it. ``expires_in`` is
told in real seconds (the lifetime over the clock's speed), so at ``--speed 3600`` an access
token expires a second after it is issued. Everything is held in this process's memory and
never logged.
"""

from __future__ import annotations

import html
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from datetime import time as clock_time
from typing import Final

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

ACCESS_TOKEN_LIFETIME: Final = timedelta(hours=1)
SESSION_ENDS: Final = clock_time(6, 0)  # IST, the next morning: Kite's own cut-off
CODE_LIFETIME_SECONDS: Final = 300  # real seconds: the SDK's token handler checks time.time()
CONSENT_PATH: Final = "/consent"
SESSION_ENDED: Final = (
    "the Kite session ended at 06:00 IST (a Kite login lasts until the next morning) — "
    "sign in again"
)


def session_end(moment: datetime) -> datetime:
    """The next 06:00 after ``moment``, in ``moment``'s zone (the simulated clock's, IST)."""
    end = moment.replace(hour=SESSION_ENDS.hour, minute=0, second=0, microsecond=0)
    return end if end > moment else end + timedelta(days=1)


@dataclass(frozen=True)
class _Pending:
    client: OAuthClientInformationFull
    params: AuthorizationParams


@dataclass(frozen=True)
class _Issued:
    client_id: str
    scopes: list[str]
    resource: str | None
    expires: datetime  # simulated


class SandboxAuthority(
    OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]
):
    """The SDK's authorization server provider for the sandbox: clients, pending consents,
    codes and tokens in dictionaries, expiry on ``clock`` (simulated, ``speed`` times the
    wall clock). The identity-assertion grant keeps the SDK's refusal."""

    def __init__(self, clock: Callable[[], datetime], speed: float) -> None:
        self.clock = clock
        self.speed = speed
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.pending: dict[str, _Pending] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, _Issued] = {}
        self.refresh: dict[str, _Issued] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None  # the SDK's registration handler sets it
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        """The person's consent page for this request (its id is the page's CSRF token)."""
        request = secrets.token_urlsafe(32)
        self.pending[request] = _Pending(client, params)
        return f"{CONSENT_PATH}?request={request}"

    def decide(self, request: str, approve: bool) -> str | None:
        """The person's answer: where the browser goes next (None: no such request)."""
        pending = self.pending.pop(request, None)
        if pending is None:
            return None
        params = pending.params
        if not approve:
            return construct_redirect_uri(
                str(params.redirect_uri),
                error="access_denied",
                error_description="the person denied the sign-in on the sandbox's consent page",
                state=params.state,
            )
        assert pending.client.client_id is not None
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + CODE_LIFETIME_SECONDS,
            client_id=pending.client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        code = self.codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)  # a code is used once
        now = self.clock()
        return self._issue(
            authorization_code.client_id,
            authorization_code.scopes,
            authorization_code.resource,
            now,
            session_end(now),
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        issued = self.refresh.get(refresh_token)
        if issued is None or issued.client_id != client.client_id:
            return None
        return RefreshToken(
            token=refresh_token,
            client_id=issued.client_id,
            scopes=issued.scopes,
            resource=issued.resource,
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        issued = self.refresh.pop(refresh_token.token, None)  # rotated: used once
        now = self.clock()
        if issued is None or now >= issued.expires:
            raise TokenError(error="invalid_grant", error_description=SESSION_ENDED)
        return self._issue(
            issued.client_id, scopes or issued.scopes, issued.resource, now, issued.expires
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        issued = self.access.get(token)
        if issued is None or self.clock() >= issued.expires:
            return None
        return AccessToken(
            token=token, client_id=issued.client_id, scopes=issued.scopes, resource=issued.resource
        )

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(
        self,
        client_id: str,
        scopes: list[str],
        resource: str | None,
        now: datetime,
        session_ends: datetime,
    ) -> OAuthToken:
        access_ends = min(now + ACCESS_TOKEN_LIFETIME, session_ends)
        access = secrets.token_urlsafe(32)
        refresh = secrets.token_urlsafe(32)
        self.access[access] = _Issued(client_id, scopes, resource, access_ends)
        self.refresh[refresh] = _Issued(client_id, scopes, resource, session_ends)
        real_seconds = (access_ends - now).total_seconds() / self.speed
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=math.ceil(real_seconds),  # never 0: a session ends after now
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )


def auth_settings(port: int) -> AuthSettings:
    """This port's issuer (the sandbox itself) and resource (its /mcp), with dynamic client
    registration on, and tokens accepted only for this /mcp."""
    origin = f"http://127.0.0.1:{port}"
    return AuthSettings(
        issuer_url=origin,  # type: ignore[arg-type]  # pydantic validates the string
        resource_server_url=f"{origin}/mcp",  # type: ignore[arg-type]
        validate_token_resource=True,
        client_registration_options=ClientRegistrationOptions(enabled=True),
    )


CONSENT_PAGE: Final = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>kite-skills sandbox: sign in</title></head>
<body>
<h1>Sign in to kite-skills sandbox</h1>
<p>{client} asks to use this SIMULATED Kite account (no real money is at stake).</p>
<form method="post" action="{path}">
<input type="hidden" name="request" value="{request}">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
</body></html>
"""
UNKNOWN_REQUEST: Final = (
    "no such sign-in request: it was answered already or never made — start the sign-in again "
    "from the MCP client\n"
)


def consent_route(authority: SandboxAuthority) -> Route:
    """GET: the Approve/Deny page; POST: the answer, then the browser goes back to the
    client's redirect URI with a code, or with ``error=access_denied``."""

    async def consent(request: Request) -> Response:
        if request.method == "GET":
            ask = request.query_params.get("request", "")
            pending = authority.pending.get(ask)
            if pending is None:
                return PlainTextResponse(UNKNOWN_REQUEST, status_code=400)
            page = CONSENT_PAGE.format(
                client=html.escape(pending.client.client_name or "an MCP client"),
                path=CONSENT_PATH,
                request=html.escape(ask),
            )
            return HTMLResponse(page, headers={"Cache-Control": "no-store"})
        form = await request.form()
        answer = form.get("decision")
        target = authority.decide(str(form.get("request", "")), answer == "approve")
        if target is None:
            return PlainTextResponse(UNKNOWN_REQUEST, status_code=400)
        return RedirectResponse(target, status_code=302, headers={"Cache-Control": "no-store"})

    return Route(CONSENT_PATH, consent, methods=["GET", "POST"])
