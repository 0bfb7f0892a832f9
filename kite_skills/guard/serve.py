"""Connect to the upstream, then serve the guard on stdio until the client goes."""

from __future__ import annotations

from pathlib import Path

from ..display import clipped, error_line
from ..errors import KiteError
from ..mcpkit import stdio
from .journal import Journal
from .server import Guard, build_server
from .upstream import Upstream, all_tools, open_upstream


class UpstreamUnreachable(KiteError):
    """The upstream could not be started, reached or listed before serving."""


def _cause(exc: BaseException) -> BaseException:
    """The first leaf of an exception group (anyio's task groups wrap the transport's)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def serve(upstream: Upstream, limits_path: Path, journal: Journal, timeout: float) -> bool:
    """True when stopped by SIGINT."""
    listed = False
    try:
        async with open_upstream(upstream, timeout) as client:
            tools = await all_tools(client)
            listed = True
            guard = Guard(client, tools, limits_path, journal, timeout=timeout)
            server = build_server(guard, client.instructions)
            return await stdio.serve(server, server.create_initialization_options())
    except Exception as exc:
        if listed:
            raise
        said = error_line(_cause(exc))
        raise UpstreamUnreachable(
            f"cannot reach the Kite MCP server {upstream.describe()}: {clipped(said, 300)} — "
            "check the URL or command (and with --bearer-env, the token), then start again"
        ) from exc
