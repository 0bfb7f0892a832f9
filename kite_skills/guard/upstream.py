"""The upstream Kite MCP server the guard stands in front of, reached through the MCP SDK's
client: Streamable HTTP by URL (Zerodha's hosted server, a self-hosted kite-mcp-server, or
``kite-skills sandbox --http`` with its bearer token), or a stdio command (a self-hosted
server, or ``kite-skills sandbox``).

``auth`` is the seam for a sign-in that runs in the HTTP client (OAuth 2.1 through the SDK's
client auth, :mod:`kite_skills.guard.oauth`): any ``httpx2.Auth`` is handed to the transport.
A bearer token is sent as one header and never logged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp import Client, StdioServerParameters

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


@asynccontextmanager
async def open_upstream(upstream: Upstream, read_timeout: float) -> AsyncIterator[Client]:
    """A connected SDK client (the era the upstream offers: discover, else initialize)."""
    if upstream.url is not None:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        headers = {"Authorization": f"Bearer {upstream.bearer}"} if upstream.bearer else None
        http = create_mcp_http_client(headers=headers, auth=upstream.auth)
        transport = streamable_http_client(upstream.url, http_client=http)
        async with http, Client(transport, read_timeout_seconds=read_timeout) as client:
            yield client
        return
    first, *rest = upstream.command
    params = StdioServerParameters(command=first, args=rest, env=upstream.env or None)
    async with Client(params, read_timeout_seconds=read_timeout) as client:
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
