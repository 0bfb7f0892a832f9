"""The upstream Kite MCP server the guard stands in front of, reached through the MCP SDK's
client: Streamable HTTP by URL (Zerodha's hosted server, a self-hosted kite-mcp-server, or
``kite-skills sandbox --http`` with its bearer token), or a stdio command (a self-hosted
server, or ``kite-skills sandbox``).

``auth`` is the seam for a sign-in that runs in the HTTP client (OAuth 2.1 through the SDK's
client auth, :mod:`kite_skills.guard.oauth`): any ``httpx2.Auth`` is handed to the transport.
A bearer token is sent as one header and never logged.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp import Client, StdioServerParameters
from mcp.client.client import ConnectMode
from mcp.client.session import DISCOVER_TIMEOUT_SECONDS

from ..mcpkit.relay import UpstreamPipes

if TYPE_CHECKING:
    import httpx2


@dataclass(frozen=True)
class Upstream:
    """Exactly one of ``url`` and ``command``."""

    url: str | None = None
    command: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)  # for a command: what it is given
    bearer: str | None = field(default=None, repr=False)
    auth: httpx2.Auth | None = field(default=None, repr=False)

    def describe(self) -> str:
        return self.url or " ".join(self.command)


def upstream_pipes(upstream: Upstream) -> UpstreamPipes | None:
    """The pipes of a stdio upstream, which reads are relayed on (POSIX; on Windows the SDK's
    transport keeps its Job Object, and every call goes the SDK's way)."""
    if upstream.url is not None or sys.platform == "win32":
        return None
    return UpstreamPipes(list(upstream.command), upstream.env or None)


def era_of(first: bytes) -> ConnectMode:
    """The client's era from its first line: ``initialize`` is the handshake era; anything
    else (a 2026-07-28 request, nothing, not JSON) lets the upstream choose."""
    try:
        message = json.loads(first.split(b"\n", 1)[0])
    except ValueError:
        return "auto"
    handshake = isinstance(message, dict) and message.get("method") == "initialize"
    return "legacy" if handshake else "auto"


@asynccontextmanager
async def open_upstream(
    upstream: Upstream,
    read_timeout: float,
    pipes: UpstreamPipes | None = None,
    mode: ConnectMode = "auto",
) -> AsyncIterator[Client]:
    """A connected SDK client (``auto``: the era the upstream offers, discover, else
    initialize; ``legacy``: the handshake era, the client's own). A stdio upstream runs on
    ``pipes`` when given."""
    if upstream.url is not None:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        headers = {"Authorization": f"Bearer {upstream.bearer}"} if upstream.bearer else None
        http = create_mcp_http_client(headers=headers, auth=upstream.auth)
        transport = streamable_http_client(upstream.url, http_client=http)
        async with http, Client(transport, read_timeout_seconds=read_timeout) as client:
            yield client
        return
    # The handshake era's initialize gets the bound the SDK gives a discover (a starting
    # upstream can take seconds); each call is bounded by the guard's own timeout.
    if mode == "legacy":
        read_timeout = max(read_timeout, DISCOVER_TIMEOUT_SECONDS)
    if pipes is not None:
        transport = pipes.transport()
        async with Client(transport, mode=mode, read_timeout_seconds=read_timeout) as client:
            yield client
        return
    first, *rest = upstream.command
    params = StdioServerParameters(command=first, args=rest, env=upstream.env or None)
    async with Client(params, mode=mode, read_timeout_seconds=read_timeout) as client:
        yield client


async def all_tools(client: Client) -> list[Any]:
    """Every tool the upstream lists, every page."""
    tools: list[Any] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools
