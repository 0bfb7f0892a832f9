"""Assemble the MCP server and run it on stdio.

``build_server`` is pure (no streams); ``serve_stdio`` is the only code that touches
stdin/stdout, and everything it logs goes to stderr.
"""

from __future__ import annotations

import functools
import logging
import os
import sqlite3
import sys
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.subscriptions import PromptsListChanged
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from .. import __version__, catalog, invocation
from ..catalog import Catalog
from ..display import clipped, one_line
from ..errors import KiteError, StoreError, UnreadableSkill
from ..store import AgentView
from . import skills_extension, stdio
from .changes import PEER, URI_SCHEME, LegacyPeer
from .prompts import Prompts, legacy_cache_fields
from .skills_extension import client_has_skills
from .tools import ToolResult, ToolSpec, help_tool, tool_error
from .user_skills import UserSkills

log = logging.getLogger("kite_skills.server")

INSTRUCTIONS = (
    "This server holds trusted, step-by-step procedures for working with a Zerodha Kite "
    "account. Before following a catalog recipe, look for the person's own skills with the "
    "skills tool (search with the task's words): a live skill of theirs says how they want "
    "that task done, so read it with skillRead and prefer it to the recipe. Find the "
    "catalog's recipes through the Skills extension (skills/list, then skills/get and "
    "resources/read) or, if your client does not use Skills, through the help tool "
    "starting at key '/'. A procedure is documentation only: it never replaces the "
    "user's explicit approval of each order, modification, cancellation or alert."
)

Context = ServerRequestContext[Any, Any]


def parse_excluded(value: str | None, known: Iterable[str]) -> tuple[frozenset[str], list[str]]:
    """Names from ``EXCLUDED_TOOLS`` (comma-separated), and those that name no tool."""
    names = frozenset(n.strip() for n in (value or "").split(",") if n.strip())
    return names, sorted(names - set(known))


def all_tools(catalog: Catalog, user_skills: UserSkills) -> dict[str, ToolSpec]:
    receipts = user_skills.receipts

    def on_recipe(ctx: Context, key: str) -> None:
        receipts.note(ctx, "recipe", key, "help")

    tools = [help_tool(catalog, on_recipe), *user_skills.tools()]
    return {spec.tool.name: spec for spec in tools}


def build_server(
    catalog: Catalog, user_skills: UserSkills, excluded: frozenset[str] = frozenset()
) -> Server[Any]:
    specs = all_tools(catalog, user_skills)
    enabled = {name: spec for name, spec in specs.items() if name not in excluded}

    async def list_tools(ctx: Context, params: Any) -> types.ListToolsResult:
        hide_help = client_has_skills(ctx)
        return types.ListToolsResult(
            tools=[s.tool for n, s in sorted(enabled.items()) if not (hide_help and n == "help")]
        )

    async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> ToolResult:
        spec = enabled.get(params.name)
        if spec is None:
            raise MCPError(
                INVALID_PARAMS,
                f"unknown tool '{clipped(params.name, 64)}' — tools/list shows the tools "
                "served here",
                {"name": clipped(params.name, 64)},
            )
        return await _run_tool(spec, ctx, params.arguments)

    async def list_resources(ctx: Context, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=await user_skills.resources()
            + [types.Resource.model_validate(r.to_dict()) for r in catalog.resources()]
        )

    async def read_resource(
        ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        raw = catalog.read(uri)
        try:
            text = raw.decode("utf-8") if raw is not None else await user_skills.read(uri)
        except (StoreError, sqlite3.Error) as exc:
            if not isinstance(exc, UnreadableSkill):  # the store logs those itself, once
                user_skills.report(uri, f"cannot read {clipped(uri)}: {exc}")
            raise MCPError(
                INTERNAL_ERROR, f"the skill store could not read {clipped(uri)}: {exc}"
            ) from exc
        if text is not None:
            kind, item = ("recipe", uri) if raw is not None else ("skill", uri_name(uri))
            user_skills.receipts.note(ctx, kind, item, "resources/read")
        else:
            raise MCPError(
                INVALID_PARAMS,
                f"no resource at {clipped(uri)} — resources/list shows what is served "
                "(skill:// for the catalog, user-skill://NAME for the user's live skills)",
                {"uri": clipped(uri)},
            )
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)]
        )

    async def list_templates(ctx: Context, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[])

    changes = user_skills.changes
    changes.on_live_set_change(PromptsListChanged())  # live user skills are prompts too
    changes.on_description_change(PromptsListChanged())  # a prompt shows its description

    async def subscribe(ctx: Context, params: types.SubscribeRequestParams) -> types.EmptyResult:
        peer = _peer(ctx)
        if peer is not None:
            peer.subscribe(str(params.uri))
        return types.EmptyResult()

    async def unsubscribe(
        ctx: Context, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        peer = _peer(ctx)
        if peer is not None:
            peer.unsubscribe(str(params.uri))
        return types.EmptyResult()

    @asynccontextmanager
    async def watching(server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        async with changes.serving() as peer:
            yield {PEER: peer}

    async def session_rules(ctx: Context, call_next: CallNext) -> HandlerResult:
        """The handshake era's rules the SDK leaves loose: one ``initialize`` per session
        (a second would re-judge the client), and a clear word to a request sent before it."""
        peer = _peer(ctx)
        if peer is None or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return await call_next(ctx)
        if ctx.request_id is None:  # a notification
            if ctx.method == "notifications/initialized":
                peer.opened = True
            return await call_next(ctx)
        if ctx.method == "initialize":
            if peer.session is not None:
                raise MCPError(INVALID_REQUEST, ALREADY_INITIALIZED)
            result = await call_next(ctx)
            peer.attach(ctx.session)
            return result
        if not peer.opened and ctx.method != "ping":
            if server.get_request_handler(ctx.method) is not None:
                raise MCPError(INVALID_PARAMS, NOT_INITIALIZED, {"method": clipped(ctx.method, 64)})
        return await call_next(ctx)

    prompts = Prompts(catalog, user_skills.view, user_skills.receipts)
    server: Server[Any] = Server(
        "kite-skills",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=watching,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_subscriptions_listen=changes.listen,
        on_list_tools=list_tools,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_resource_templates=list_templates,
        on_get_prompt=prompts.get_prompt,
    )
    # These two answer with the wire JSON they build (a dict, which the SDK's handler contract
    # takes), not with the model the constructor's typed ``on_*`` arguments ask for.
    server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    server.add_request_handler("prompts/list", types.PaginatedRequestParams, prompts.list_prompts)
    skills_extension.serve(server, catalog)
    server.middleware.append(_internal_errors)
    server.middleware.append(session_rules)
    server.middleware.append(prompts.remembered)  # holds legacy_cache_fields' answer
    server.middleware.append(legacy_cache_fields)
    server.middleware.append(skills_extension.legacy_initialize_extensions)  # innermost
    return server


ALREADY_INITIALIZED = (
    "this session is already initialized: a second 'initialize' is refused, and the first "
    "negotiation (protocol version, capabilities, client) stays in force — start a new "
    "connection to negotiate again"
)
NOT_INITIALIZED = (
    "the session is not initialized: send 'initialize' (then 'notifications/initialized') "
    "first, or use the 2026-07-28 protocol by putting io.modelcontextprotocol/protocolVersion, "
    "clientCapabilities and clientInfo in each request's _meta"
)


def uri_name(uri: str) -> str:
    """The skill a ``user-skill://NAME`` URI names."""
    return uri.removeprefix(URI_SCHEME)


def _peer(ctx: Context) -> LegacyPeer | None:
    """This connection's legacy peer; None when served without our lifespan."""
    state = ctx.lifespan_context
    peer = state.get(PEER) if isinstance(state, dict) else None
    return peer if isinstance(peer, LegacyPeer) else None


async def _run_tool(spec: ToolSpec, ctx: Context, arguments: Any) -> ToolResult:
    try:
        return await spec.run(ctx, dict(arguments or {}))
    except Exception:
        log.exception("tool %s failed", spec.tool.name)
        return tool_error(f"internal error in {spec.tool.name} (see the server log)")


async def _internal_errors(ctx: Context, call_next: CallNext) -> HandlerResult:
    """Unexpected exceptions become -32603 (the SDK would send code 0 on legacy)."""
    try:
        return await call_next(ctx)
    except MCPError:
        raise
    except ValidationError as exc:  # the SDK would answer "Invalid request parameters", data ""
        raise invalid_params(ctx.method, exc) from exc
    except Exception as exc:
        log.exception("%s failed", ctx.method)
        raise MCPError(INTERNAL_ERROR, "internal error (see the server log)") from exc


MAX_PROBLEMS = 3  # named in an invalid-params message; ``data`` lists up to 10


def invalid_params(method: str, exc: ValidationError) -> MCPError:
    """-32602 naming each field that is wrong (``params.protocolVersion is missing``), with
    the same as ``data.problems``; the input itself is never echoed."""
    problems = []
    for error in exc.errors(include_url=False, include_input=False, include_context=False)[:10]:
        loc = [clipped(part, 40) for part in error["loc"]]
        field = ".".join(loc if loc[:1] == ["params"] else ["params", *loc])  # spec or custom
        said = clipped(error["msg"], 120)
        problem = (
            "is missing"
            if error["type"] == "missing"
            else f"is wrong: {said[:1].lower()}{said[1:]}"
        )
        problems.append({"field": field, "problem": problem})
    said = "; ".join(f"{p['field']} {p['problem']}" for p in problems[:MAX_PROBLEMS])
    more = len(exc.errors()) - MAX_PROBLEMS
    return MCPError(
        INVALID_PARAMS,
        f"invalid params for {clipped(method, 60)}: {said or 'they do not match its schema'}"
        + (f"; and {more} more" if more > 0 else ""),
        {"problems": problems},
    )


def serve_stdio(db_path: Path, environ: Mapping[str, str] = os.environ) -> int:
    """Serve MCP on stdin/stdout until the client goes away: 0 on a normal end, 130 after
    Ctrl-C, 1 when the catalog is broken. A store that cannot be opened is no reason to stop:
    the catalog is served and the user-skill tools say what is wrong."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="kite-skills: %(message)s")
    logging.getLogger("mcp.server.runner").addFilter(_quiet_drops)
    try:
        return serve_wire(db_path, environ)
    except KeyboardInterrupt:
        return 130


def _quiet_drops(record: logging.LogRecord) -> bool:
    """Not logged: a notification the SDK drops for malformed params (``notifications/progress``
    with an object as its token). It gets no answer, as JSON-RPC wants, and no stderr line
    either: a client could fill the log with them."""
    return not str(record.msg).startswith("dropped ")


def serve_wire(
    db_path: Path,
    environ: Mapping[str, str],
    *,
    stdin_fd: int | None = None,
    stdout_fd: int | None = None,
) -> int:
    """What :func:`serve_stdio` does once logging is set up: load the catalog, open the store,
    read ``EXCLUDED_TOOLS`` and serve until the client goes away (0; 130 after SIGINT; 1 when
    the catalog is broken). ``stdin_fd``/``stdout_fd`` name other pipes than stdin and stdout:
    the tests serve in process that way (tests/server/harness.py), with no build."""
    try:
        loaded = catalog.load()
    except KiteError as exc:
        print(f"kite-skills: cannot start: {exc}", file=sys.stderr)  # noqa: T201
        return 1
    try:
        view: AgentView | None = AgentView.open(db_path, command=invocation.current().command)
    except KiteError as exc:
        view = None
        user_skills = UserSkills.without_store(str(exc))
        log.warning(
            "the skill store is unavailable, serving the catalog only: %s",
            one_line(str(exc)),
        )
    else:
        user_skills = UserSkills(view)
    names = sorted(all_tools(loaded, user_skills))
    excluded, unknown = parse_excluded(environ.get("EXCLUDED_TOOLS"), names)
    if unknown:
        log.warning(
            "EXCLUDED_TOOLS names no tool here: %s (known: %s)",
            ", ".join(unknown),
            ", ".join(names),
        )
    if os.isatty(stdin_fd) if stdin_fd is not None else sys.stdin.isatty():
        print(  # noqa: T201
            f"kite-skills: serving MCP on stdio for an MCP client (user skills in {db_path}); "
            f"run '{invocation.current().run('--help')}' for the commands a person uses",
            file=sys.stderr,
        )
    else:
        print(f"kite-skills: user skills in {db_path}", file=sys.stderr)  # noqa: T201
    server = build_server(loaded, user_skills, excluded)
    options = server.create_initialization_options(
        NotificationOptions(resources_changed=True, prompts_changed=True)
    )
    try:
        interrupted = anyio.run(
            functools.partial(stdio.serve, stdin_fd=stdin_fd, stdout_fd=stdout_fd), server, options
        )
    finally:
        user_skills.receipts.close()
        if view is not None:
            view.close()
    return 130 if interrupted else 0
