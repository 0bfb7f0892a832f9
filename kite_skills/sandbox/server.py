"""The sandbox's MCP server: the Kite MCP server's tools over the simulation, on stdio (both
protocol eras, through the kit's wire, :mod:`kite_skills.mcpkit.stdio`) or on streamable HTTP at
127.0.0.1 behind a per-launch bearer token or, with ``--oauth``, an OAuth 2.1 sign-in
(:mod:`.oauth`). The session rules and the error middleware are the kit's too
(:mod:`kite_skills.mcpkit.session`), as the main server keeps them.

Each tool call advances the simulation to the simulated clock's now, runs the handler,
writes the journal entry, and only then answers.
"""

from __future__ import annotations

import hmac
import logging
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from starlette.types import ASGIApp, Receive, Scope, Send

from .. import __version__
from ..display import clipped
from ..mcpkit import HANDSHAKE, Context, HandshakeState, SessionRules, internal_errors
from ..mcpkit.localhost import Door, header
from . import schemas
from .handlers import Generation, Result
from .journal import Journal, JournalError, recorded

if TYPE_CHECKING:
    from .oauth import SandboxAuthority

log = logging.getLogger("kite_skills.sandbox")

INSTRUCTIONS: Final = (
    "This is kite-skills sandbox: a SIMULATED Zerodha Kite account and market served with the "
    "Kite MCP server's own tools. Nothing here reaches Zerodha and no money is at stake; use "
    "it to rehearse a procedure. Every call is recorded in the sandbox's journal."
)
INTERNAL: Final = "internal error in the simulation (see the sandbox's stderr)"
JOURNAL_FAILED: Final = (
    "not run, nothing changed: the sandbox's journal cannot record calls ({reason}), and the "
    "sandbox runs none it cannot record — the person frees space for the journal, or chooses "
    "another with --journal FILE, and starts the sandbox again"
)


def tool_models(generation: str) -> list[types.Tool]:
    tools = []
    for spec in schemas.load(generation):
        annotations = spec.get("annotations")
        tools.append(
            types.Tool(
                name=spec["name"],
                description=spec["description"],
                input_schema=spec["inputSchema"],
                annotations=types.ToolAnnotations.model_validate(annotations)
                if annotations
                else None,
            )
        )
    return tools


class Sandbox:
    """The simulation, its clock, the handlers of one tool generation and the journal."""

    def __init__(
        self,
        sim: Any,
        clock: Callable[[], datetime],
        generation: Generation,
        journal: Journal | None,
    ) -> None:
        self.sim = sim
        self.clock = clock
        self.generation = generation
        self.journal = journal
        self.parameters = {
            spec["name"]: frozenset(spec["inputSchema"].get("properties", ()))
            for spec in schemas.load(generation.name)
        }

    def call(self, name: str, arguments: Any) -> Result | None:
        """Run one tool call (None: no such tool) and journal it before anyone is answered.

        A call whose entry cannot be written (a full disk) was done all the same, and is
        answered as done: an agent that read "error" would do it again. No call runs after
        that, so nothing is done that the journal does not hold."""
        if self.journal is not None and self.journal.failure is not None:
            return Result(JOURNAL_FAILED.format(reason=self.journal.failure), True)
        handler = self.generation.handlers.get(name)
        args = arguments if isinstance(arguments, dict) else {}
        try:
            self.sim.advance_to(self.clock())
            now = self.sim.now
        except Exception:
            log.exception("the simulation failed to advance its clock")
            now = self.clock()
            result: Result | None = Result(INTERNAL, True)
        else:
            if handler is None:
                result = None
            else:
                try:
                    result = handler(self.sim, args)
                except Exception:
                    log.exception("tool %s failed", clipped(name, 64))
                    result = Result(INTERNAL, True)
        if result is not None and result.kite_error is not None:
            log.info("%s: Kite Connect refused: %s", name, result.kite_error)
        if self.journal is not None:
            try:
                self.journal.call(
                    sim_time=now,
                    tool=name,
                    arguments=recorded(arguments, self.parameters.get(name, frozenset())),
                    text=result.text if result is not None else unknown_tool(name),
                    is_error=True if result is None else result.is_error,
                    kite_error=result.kite_error if result is not None else None,
                )
            except JournalError as exc:
                log.warning(
                    "%s (the call %s was done and answered; no further call runs)",
                    exc,
                    clipped(name, 64),
                )
        return result


def unknown_tool(name: str) -> str:
    return f'unknown tool "{clipped(name, 64)}"'


def build_server(sandbox: Sandbox) -> Server[Any]:
    tools = types.ListToolsResult(
        tools=[
            t for t in tool_models(sandbox.generation.name) if t.name in sandbox.generation.handlers
        ]
    )

    async def list_tools(ctx: Context, params: Any) -> types.ListToolsResult:
        return tools

    async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        result = sandbox.call(params.name, params.arguments)
        if result is None:
            raise MCPError(
                INVALID_PARAMS, unknown_tool(params.name), {"name": clipped(params.name, 64)}
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)], is_error=result.is_error
        )

    @asynccontextmanager
    async def per_connection(server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        yield {HANDSHAKE: HandshakeState()}

    server: Server[Any] = Server(
        "kite-sandbox",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=per_connection,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.middleware.append(internal_errors(INTERNAL))
    server.middleware.append(SessionRules(server))
    return server


# ---------------------------------------------------------------- HTTP


def new_token() -> str:
    return secrets.token_urlsafe(32)


def guard(app: ASGIApp, token: str | None, port: int) -> ASGIApp:
    """The localhost door (:mod:`kite_skills.mcpkit.localhost`: the Host must name this server,
    else 421; a request for another web page is refused, 403), then, given a ``token``,
    ``Authorization: Bearer <token>`` (else 401), compared in constant time. Without one
    (``--oauth``) the SDK's bearer middleware judges /mcp's tokens."""
    door = Door(port)

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await app(scope, receive, send)
            return
        if not door.right_host(scope):
            await _refuse(send, 421, f"misdirected request: {door.wrong_host}")
            return
        refusal = door.web_page_refusal(scope)
        if refusal:
            await _refuse(send, 403, f"forbidden: {refusal}")
            return
        if token is None:
            await app(scope, receive, send)
            return
        offered = (header(scope, b"authorization") or "").encode("latin-1")
        scheme, _, credential = offered.partition(b" ")
        if not offered:
            await _refuse(
                send,
                401,
                "unauthorized: send 'Authorization: Bearer <token>' with the token "
                "'kite-skills sandbox --http' printed on its stderr",
            )
            return
        if scheme.lower() != b"bearer" or not hmac.compare_digest(
            credential.strip(), token.encode()
        ):
            await _refuse(
                send,
                401,
                "unauthorized: the bearer token is wrong (each launch prints a new one on stderr)",
            )
            return
        await app(scope, receive, send)

    return guarded


async def _refuse(send: Send, status: int, reason: str) -> None:
    body = (reason + "\n").encode()
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="kite-sandbox"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def http_app(server: Server[Any], port: int, admits: str | SandboxAuthority) -> ASGIApp:
    """The SDK's streamable HTTP app at /mcp (its own Host/Origin checks kept on, for this
    port only), behind :func:`guard`. ``admits``: the per-launch bearer token, or with
    ``--oauth`` the authorisation server whose tokens /mcp takes (its routes: the SDK's
    metadata, /register, /authorize, /token, /revoke, and the consent page)."""
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = [f"127.0.0.1:{port}", f"localhost:{port}"]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"http://{h}" for h in hosts],
    )
    if isinstance(admits, str):
        inner = server.streamable_http_app(
            host="127.0.0.1", json_response=True, transport_security=security
        )
        return guard(inner, admits, port)
    from mcp.server.auth.provider import ProviderTokenVerifier

    from .oauth import auth_settings, consent_route

    inner = server.streamable_http_app(
        host="127.0.0.1",
        json_response=True,
        transport_security=security,
        auth=auth_settings(port),
        token_verifier=ProviderTokenVerifier(admits),
        auth_server_provider=admits,
        custom_starlette_routes=[consent_route(admits)],
    )
    return guard(inner, None, port)
