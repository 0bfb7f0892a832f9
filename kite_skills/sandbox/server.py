"""The sandbox's MCP server: the Kite MCP server's tools over the simulation, on stdio (both
protocol eras, through the kit's wire, :mod:`kite_skills.mcpkit.stdio`) or on streamable HTTP at
127.0.0.1 behind a per-launch bearer token or, with ``--oauth``, an OAuth 2.1 sign-in
(:mod:`.oauth`). The session rules and the error middleware are the kit's too
(:mod:`kite_skills.mcpkit.session`), as the main server keeps them, and so is its tool
registry: :attr:`Sandbox.tools` registers the upstream's recorded tools that have a handler,
and ``tools/list``, the dispatch and ``EXCLUDED_TOOLS`` are read from it.

Each tool call advances the simulation to the simulated clock's now, runs the handler,
writes the journal entry, and only then answers.
"""

from __future__ import annotations

import copy
import hmac
import logging
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from starlette.types import ASGIApp, Receive, Scope, Send

from .. import __version__, kite_schemas
from ..display import clipped
from ..mcpkit import (
    HANDSHAKE,
    Context,
    HandshakeState,
    SessionRules,
    ToolRegistry,
    ToolResult,
    ToolRun,
    ToolSpec,
    internal_errors,
)
from ..mcpkit.localhost import Door, header
from ..mcpkit.wire import serve as serve_kept
from . import schemas
from .handlers import Generation, Result
from .journal import Journal, JournalError, recorded
from .sim.events import Finding

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
    """The upstream's tools of ``generation`` as recorded (:mod:`kite_skills.kite_schemas`):
    name, description, JSON input schema and annotations, in its registration order."""
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
    """The simulation, its clock, the handlers of one tool generation and the journal.

    After each call the simulation's watch judges the account (issue 41); what it finds, and
    what the market did meanwhile, is journalled around the call's entry. With ``strict`` a
    call whose effect would begin a watch finding is first tried on a copy of the simulation
    and refused with the rule's message.

    ``tools`` is the one registry of the tools served (``EXCLUDED_TOOLS``, ``excluded``,
    already left out); ``tools/list`` and the dispatch of ``tools/call`` read it."""

    def __init__(
        self,
        sim: Any,
        clock: Callable[[], datetime],
        generation: Generation,
        journal: Journal | None,
        *,
        strict: bool = False,
        excluded: frozenset[str] = frozenset(),
    ) -> None:
        self.sim = sim
        self.clock = clock
        self.generation = generation
        self.journal = journal
        every = ToolRegistry(
            ToolSpec(tool, self._runner(tool.name))
            for tool in tool_models(generation.name)
            if tool.name in generation.handlers
        )
        self.tools = every.excluding(excluded)
        self.unknown_excluded = sorted(excluded - set(every.names()))
        """The names in ``excluded`` that name no tool of this generation."""
        self.parameters = {
            spec["name"]: frozenset(spec["inputSchema"].get("properties", ()))
            for spec in schemas.load(generation.name)
        }
        self.strict = strict
        self.writes = _writes(generation.name)

    def call(self, name: str, arguments: Any) -> Result | None:
        """Run one tool call (None: no such tool) and journal it before anyone is answered.

        A call whose entry cannot be written (a full disk) was done all the same, and is
        answered as done: an agent that read "error" would do it again. No call runs after
        that, so nothing is done that the journal does not hold."""
        if self.journal is not None and self.journal.failure is not None:
            return Result(JOURNAL_FAILED.format(reason=self.journal.failure), True)
        handler = self.generation.handlers.get(name) if name in self.tools else None
        args = arguments if isinstance(arguments, dict) else {}
        before: list[Any] = []
        after: list[Any] = []
        try:
            self.sim.advance_to(self.clock())
            now = self.sim.now
            before = self.sim.take_notes()
        except Exception:
            log.exception("the simulation failed to advance its clock")
            now = self.clock()
            result: Result | None = Result(INTERNAL, True)
        else:
            if handler is None:
                result = None
            else:
                try:
                    refused = self._refusal(handler, args) if self.strict else None
                    if refused is not None:
                        result, after = refused
                    else:
                        result = handler(self.sim, args)
                        after = self.sim.after_call()
                except Exception:
                    log.exception("tool %s failed", clipped(name, 64))
                    result = Result(INTERNAL, True)
        if result is not None and result.kite_error is not None:
            log.info("%s: Kite Connect refused: %s", name, result.kite_error)
        if self.journal is not None:
            try:
                self.journal_notes(before)
                mode = args.get("mode")
                self.journal.call(
                    sim_time=now,
                    tool=name,
                    arguments=recorded(arguments, self.parameters.get(name, frozenset())),
                    text=result.text
                    if result is not None
                    else unknown_tool(name, self.generation.name),
                    is_error=True if result is None else result.is_error,
                    kite_error=result.kite_error if result is not None else None,
                    writes=(name, mode if isinstance(mode, str) else "") in self.writes,
                )
                self.journal_notes(after)
            except JournalError as exc:
                log.warning(
                    "%s (the call %s was done and answered; no further call runs)",
                    exc,
                    clipped(name, 64),
                )
        return result

    def _runner(self, name: str) -> ToolRun:
        """The registry's handler of the tool ``name``: :meth:`call`, its result on the wire."""

        async def run(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
            result = self.call(name, _as_sent(ctx, arguments))
            assert result is not None  # a registered tool has a handler
            return _reply(result)

        return run

    def _refusal(self, handler: Any, args: Any) -> tuple[Result, list[Any]] | None:
        """``--watch strict``: the call tried on a copy; the rule's refusal when it would
        begin a finding (the real simulation untouched), else None."""
        trial = copy.deepcopy(self.sim)
        handler(trial, args)
        began = [n for n in trial.after_call() if isinstance(n, Finding) and n.phase == "began"]
        if not began:
            return None
        refused = [replace(n, phase="refused") for n in began]
        first = began[0]
        text = (
            "kite-skills sandbox --watch strict refused this call: "
            f"{first.message} ({first.detail})"
        )
        return Result(text, True), refused

    def journal_notes(self, notes: list[Any]) -> None:
        """Journal the simulation's events and the watch's findings."""
        assert self.journal is not None
        for note in notes:
            if isinstance(note, Finding):
                self.journal.watch(
                    sim_time=note.at,
                    rule=note.rule,
                    phase=note.phase,
                    instruments=list(note.instruments),
                    detail=note.detail,
                    message=note.message,
                    began=note.began,
                )
            else:
                self.journal.event(
                    sim_time=note.at,
                    event=note.kind,
                    text=note.text,
                    instruments=list(note.instruments),
                )


def _writes(generation: str) -> frozenset[tuple[str, str]]:
    """(tool, mode) pairs of the generation that change the account ("" for no mode)."""
    return frozenset(
        (tool.name, mode_name)
        for tool in kite_schemas.load(generation)  # type: ignore[arg-type]
        for mode_name, mode in tool.modes.items()
        if mode.writes
    )


def unknown_tool(name: str, generation: str = "grouped") -> str:
    """The unknown-tool error. The oldest generation is served by mcp-go v0.31.0
    (zerodha/kite-mcp-server@dcf2dc4 go.mod), whose text is "tool '%s' not found: %w" with
    ErrToolNotFound "tool not found" (mark3labs/mcp-go@v0.31.0 server/server.go:1001,
    server/errors.go:13)."""
    shown = clipped(name, 64)
    if generation == "legacy-oldest":
        return f"tool '{shown}' not found: tool not found"
    return f'unknown tool "{shown}"'


def _as_sent(ctx: Context, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The call's arguments as the client sent them, which the journal keeps: None when it
    sent none (or null), where the dispatch hands every tool a dict."""
    if arguments or (ctx.params or {}).get("arguments") is not None:
        return arguments
    return None


def _reply(result: Result) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=result.text)], is_error=result.is_error
    )


def build_server(sandbox: Sandbox) -> Server[Any]:
    """The SDK server over ``sandbox``: its tools are ``sandbox.tools``, nothing more."""
    # Sorted by name (the registry's order), as the upstream SDKs send tools/list (issue 41
    # §2; mcp-go v0.31.0, the oldest generation's: server/server.go:894 sort.Strings(toolNames)).
    tools = sandbox.tools.listing()

    async def list_tools(ctx: Context, params: Any) -> types.ListToolsResult:
        return tools

    async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> ToolResult:
        spec = sandbox.tools.get(params.name)
        if spec is not None:
            return await spec.run(ctx, dict(params.arguments or {}))
        result = sandbox.call(params.name, params.arguments)  # journalled as unknown
        if result is None:
            raise MCPError(
                INVALID_PARAMS,
                unknown_tool(params.name, sandbox.generation.name),
                {"name": clipped(params.name, 64)},
            )
        return _reply(result)

    @asynccontextmanager
    async def per_connection(server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        yield {HANDSHAKE: HandshakeState()}

    server: Server[Any] = Server(
        "kite-sandbox",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=per_connection,
        on_list_tools=list_tools,
    )
    serve_kept(server, "tools/call", types.CallToolRequestParams, call_tool)
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
