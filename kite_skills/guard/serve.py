"""Connect to the upstream, then serve the guard on stdio until the client goes."""

from __future__ import annotations

from pathlib import Path

from ..mcpkit import stdio
from .journal import Journal
from .server import Guard, build_server
from .upstream import Upstream, all_tools, connect


async def serve(upstream: Upstream, limits_path: Path, journal: Journal, timeout: float) -> bool:
    """True when stopped by SIGINT."""
    async with connect(upstream, timeout) as client:
        tools = await all_tools(client)
        guard = Guard(client, tools, limits_path, journal, timeout=timeout)
        server = build_server(guard, client.instructions)
        return await stdio.serve(server, server.create_initialization_options())
