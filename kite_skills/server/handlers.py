"""The MCP request handlers, as the python-sdk's examples write them: each looks up, delegates
to the catalog or the user's skills, and wraps the result in the SDK's model.

:class:`Handlers` holds its dependencies explicitly: the catalog, the user's skills (the
agent's view of the store, its change feed and read receipts hang off
:class:`.user_skills.UserSkills`) and the tool table. ``prompts/*`` are :class:`.prompts.Prompts`'
and the Skills extension's methods :mod:`.skills_extension`'s; :func:`.app.build_server`
registers them all. Protocol rules are middlewares (the kit's
:mod:`kite_skills.mcpkit.session`), not handler code.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from ..catalog import Catalog
from ..display import clipped
from ..errors import StoreError, UnreadableSkill
from ..mcpkit import (
    HANDSHAKE,
    Context,
    HandshakeState,
    ToolRegistry,
    ToolResult,
    ToolSpec,
    tool_error,
)
from .changes import PEER, URI_SCHEME
from .protocol import peer_of
from .skills_extension import client_has_skills
from .tools import calc_tool, help_tool
from .user_skills import SKILL_MIME_TYPE, UserSkills

log = logging.getLogger("kite_skills.server")


def all_tools(catalog: Catalog, user_skills: UserSkills) -> ToolRegistry:
    """The one registry of this server's tools (``EXCLUDED_TOOLS`` not yet applied)."""
    receipts = user_skills.receipts

    def on_recipe(ctx: Context, key: str) -> None:
        receipts.note(ctx, "recipe", key, "help")

    return ToolRegistry([help_tool(catalog, on_recipe), calc_tool(), *user_skills.tools()])


class Handlers:
    """``tools/*``, ``resources/*`` and the legacy subscriptions, over the catalog, the user's
    skills and the tools served (``tools``: those ``EXCLUDED_TOOLS`` leaves)."""

    def __init__(self, catalog: Catalog, user_skills: UserSkills, tools: ToolRegistry) -> None:
        self._catalog = catalog
        self._user_skills = user_skills
        self._tools = tools

    # -- tools --------------------------------------------------------------------------------

    async def list_tools(self, ctx: Context, params: Any) -> types.ListToolsResult:
        # a Skills client reads the catalog through the extension, not the help tool
        return self._tools.listing(hidden={"help"} if client_has_skills(ctx) else ())

    async def call_tool(self, ctx: Context, params: types.CallToolRequestParams) -> ToolResult:
        spec = self._tools.get(params.name)
        if spec is None:
            raise MCPError(
                INVALID_PARAMS,
                f"unknown tool '{clipped(params.name, 64)}' — tools/list shows the tools "
                "served here",
                {"name": clipped(params.name, 64)},
            )
        return await _run_tool(spec, ctx, params.arguments)

    # -- resources ----------------------------------------------------------------------------

    async def list_resources(self, ctx: Context, params: Any) -> types.ListResourcesResult:
        catalog = [types.Resource.model_validate(r.to_dict()) for r in self._catalog.resources()]
        return types.ListResourcesResult(resources=await self._user_skills.resources() + catalog)

    async def read_resource(
        self, ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        resource, raw = self._catalog.resource(uri), self._catalog.read(uri)
        if resource is not None and raw is not None:
            self._user_skills.receipts.note(ctx, "recipe", uri, "resources/read")
            return _contents(uri, resource.mime_type, raw.decode("utf-8"))
        text = await self._user_skill_text(uri)
        if text is None:
            raise _no_resource(uri)
        self._user_skills.receipts.note(ctx, "skill", uri_name(uri), "resources/read")
        return _contents(uri, SKILL_MIME_TYPE, text)

    async def _user_skill_text(self, uri: str) -> str | None:
        """The live skill's document at ``uri``, None for no such skill; -32603 naming the
        cause when the store fails to read it."""
        try:
            return await self._user_skills.read(uri)
        except (StoreError, sqlite3.Error) as exc:
            if not isinstance(exc, UnreadableSkill):  # the store logs those itself, once
                self._user_skills.report(uri, f"cannot read {clipped(uri)}: {exc}")
            raise MCPError(
                INTERNAL_ERROR, f"the skill store could not read {clipped(uri)}: {exc}"
            ) from exc

    async def list_resource_templates(
        self, ctx: Context, params: Any
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[])

    # -- change notifications (legacy subscriptions; 2026-07-28 listens via the change feed) --

    @asynccontextmanager
    async def connection(self, server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        """The lifespan of one served connection: its handshake (the kit's session rules keep
        it) and its legacy peer, fed by the change feed."""
        handshake = HandshakeState()
        async with self._user_skills.changes.serving(handshake) as peer:
            yield {HANDSHAKE: handshake, PEER: peer}

    async def subscribe(
        self, ctx: Context, params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        peer = peer_of(ctx)
        if peer is not None:
            peer.subscribe(str(params.uri))
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: Context, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        peer = peer_of(ctx)
        if peer is not None:
            peer.unsubscribe(str(params.uri))
        return types.EmptyResult()

    # -- logging (handshake era; 2026-07-28 asks per request: protocol.client_logs) -----------

    async def set_log_level(
        self, ctx: Context, params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        peer = peer_of(ctx)
        if peer is not None:
            peer.log_level = params.level
        return types.EmptyResult()


def uri_name(uri: str) -> str:
    """The skill a ``user-skill://NAME`` URI names."""
    return uri.removeprefix(URI_SCHEME)


def _no_resource(uri: str) -> MCPError:
    return MCPError(
        INVALID_PARAMS,
        f"no resource at {clipped(uri)} — resources/list shows what is served "
        "(skill:// for the catalog, user-skill://NAME for the user's live skills)",
        {"uri": clipped(uri)},
    )


def _contents(uri: str, mime_type: str, text: str) -> types.ReadResourceResult:
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type=mime_type, text=text)]
    )


async def _run_tool(spec: ToolSpec, ctx: Context, arguments: Any) -> ToolResult:
    """The tool's result; an exception it lets out is logged and becomes a tool error."""
    try:
        return await spec.run(ctx, dict(arguments or {}))
    except Exception:
        log.exception("tool %s failed", spec.tool.name)
        return tool_error(f"internal error in {spec.tool.name} (see the server log)")
