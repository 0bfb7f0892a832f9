"""Assemble the MCP server and run it on stdio.

``build_server`` is pure (no streams); ``serve_stdio`` is the only code that touches
stdin/stdout, and everything it logs goes to stderr.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import ListenHandler
from mcp.shared._context_streams import create_context_streams
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
)
from pydantic import ValidationError

from .. import __version__, catalog
from ..catalog import Catalog
from ..errors import KiteError
from ..store import Store
from .negotiation import SKILLS_EXTENSION, client_has_skills
from .skills_extension import SkillsGetParams, SkillsListParams, skills_get, skills_list
from .tools import ToolSpec, help_tool, tool_error
from .user_skills import UserSkills

log = logging.getLogger("kite_skills.server")

INSTRUCTIONS = (
    "This server holds trusted, step-by-step procedures for working with a Zerodha Kite "
    "account. Find them through the Skills extension (skills/list, then skills/get and "
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
    return {spec.tool.name: spec for spec in [help_tool(catalog), *user_skills.tools()]}


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

    async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = enabled.get(params.name)
        if spec is None:
            raise MCPError(
                INVALID_PARAMS,
                f"unknown tool '{params.name}' — tools/list shows the tools served here",
                {"name": params.name},
            )
        return await _run_tool(spec, ctx, params.arguments)

    async def list_resources(ctx: Context, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=await user_skills.resources()
            + [
                types.Resource(
                    uri=r.uri,
                    name=r.name,
                    title=r.title,
                    description=r.description,
                    mime_type=r.mime_type,
                    size=r.size,
                )
                for r in catalog.resources()
            ]
        )

    async def read_resource(
        ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        raw = catalog.read(uri)
        text = raw.decode("utf-8") if raw is not None else await user_skills.read(uri)
        if text is None:
            raise MCPError(
                INVALID_PARAMS,
                f"no resource at {params.uri} — resources/list shows what is served",
                {"uri": str(params.uri)},
            )
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)]
        )

    async def list_templates(ctx: Context, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[])

    async def subscribe(ctx: Context, params: types.SubscribeRequestParams) -> types.EmptyResult:
        user_skills.remember(ctx.session)
        user_skills.subscribe(str(params.uri))
        return types.EmptyResult()

    async def unsubscribe(
        ctx: Context, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        user_skills.unsubscribe(str(params.uri))
        return types.EmptyResult()

    @asynccontextmanager
    async def watching(server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(user_skills.watch)
            yield {}
            tasks.cancel_scope.cancel()

    async def remember_legacy_session(ctx: Context, call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method == "initialize":
            user_skills.remember(ctx.session)
        return result

    server: Server[Any] = Server(
        "kite-skills",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=watching,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_subscriptions_listen=ListenHandler(user_skills.bus),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_resource_templates=list_templates,
    )
    server.add_request_handler("skills/list", SkillsListParams, skills_list(catalog))
    server.add_request_handler("skills/get", SkillsGetParams, skills_get(catalog))
    server.extensions[SKILLS_EXTENSION] = {}
    server.middleware.append(_internal_errors)
    server.middleware.append(remember_legacy_session)
    server.middleware.append(_legacy_initialize_extensions)  # innermost
    return server


async def _run_tool(spec: ToolSpec, ctx: Context, arguments: Any) -> types.CallToolResult:
    try:
        return await spec.run(ctx, dict(arguments or {}))
    except Exception:
        log.exception("tool %s failed", spec.tool.name)
        return tool_error(f"internal error in {spec.tool.name} (see the server log)")


async def _internal_errors(ctx: Context, call_next: CallNext) -> HandlerResult:
    """Unexpected exceptions become -32603 (the SDK would send code 0 on legacy)."""
    try:
        return await call_next(ctx)
    except (MCPError, ValidationError):
        raise
    except Exception as exc:
        log.exception("%s failed", ctx.method)
        raise MCPError(INTERNAL_ERROR, "internal error (see the server log)") from exc


async def _legacy_initialize_extensions(ctx: Context, call_next: CallNext) -> HandlerResult:
    """Put ``capabilities.extensions`` back into the legacy initialize result: the SDK
    sieves it out because the 2025-11-25 schema has no such field."""
    result = await call_next(ctx)
    if ctx.method == "initialize" and isinstance(result, dict):
        capabilities = result.setdefault("capabilities", {})
        capabilities["extensions"] = {**capabilities.get("extensions", {}), SKILLS_EXTENSION: {}}
    return result


def serve_stdio(db_path: Path, environ: Mapping[str, str] = os.environ) -> int:
    """Serve MCP on stdin/stdout until the client goes away; 0 on a normal end."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="kite-skills: %(message)s")
    try:
        loaded = catalog.load()
        store = Store.open(db_path)
    except KiteError as exc:
        print(f"kite-skills: cannot start: {exc}", file=sys.stderr)  # noqa: T201
        return 1
    user_skills = UserSkills(store)
    names = sorted(all_tools(loaded, user_skills))
    excluded, unknown = parse_excluded(environ.get("EXCLUDED_TOOLS"), names)
    if unknown:
        log.warning(
            "EXCLUDED_TOOLS names no tool here: %s (known: %s)",
            ", ".join(unknown),
            ", ".join(names),
        )
    if sys.stdin.isatty():
        print(  # noqa: T201
            f"kite-skills: serving MCP on stdio for an MCP client (user skills in {db_path}); "
            "run 'kite-skills --help' for the commands a person uses",
            file=sys.stderr,
        )
    else:
        print(f"kite-skills: user skills in {db_path}", file=sys.stderr)  # noqa: T201
    server = build_server(loaded, user_skills, excluded)
    options = server.create_initialization_options(NotificationOptions(resources_changed=True))
    try:
        anyio.run(_serve, server, options)
    except KeyboardInterrupt:
        return 0
    except BaseExceptionGroup as group:
        if group.subgroup((BrokenPipeError, ConnectionResetError)) is None:
            raise
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        store.close()
    return 0


async def _serve(server: Server[Any], options: Any) -> None:
    async with stdio_server() as (read, write):
        inbound_writer, inbound = create_context_streams[SessionMessage | Exception](0)

        async def answer_unreadable_lines() -> None:
            # The SDK drops a line it cannot parse; JSON-RPC wants an error with id null.
            async with inbound_writer:
                async for item in read:
                    if isinstance(item, Exception):
                        await write.send(SessionMessage(_unreadable(item)))
                    else:
                        await inbound_writer.send(item)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(answer_unreadable_lines)
            await server.run(inbound, write, options)
            tasks.cancel_scope.cancel()


def _unreadable(exc: Exception) -> JSONRPCError:
    not_json = isinstance(exc, ValidationError) and any(
        e["type"] == "json_invalid" for e in exc.errors()
    )
    error = (
        ErrorData(code=PARSE_ERROR, message="parse error: the line is not valid JSON")
        if not_json
        else ErrorData(code=INVALID_REQUEST, message="invalid request: not a JSON-RPC 2.0 message")
    )
    return JSONRPCError(jsonrpc="2.0", id=None, error=error)
