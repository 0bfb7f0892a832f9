"""Baseline for bench/startup.py: the smallest mcp lowlevel server with one tool."""

from __future__ import annotations

from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool(name="echo", input_schema={"type": "object"})])


async def main() -> None:
    server: Server[Any] = Server("minimal", version="0", on_list_tools=list_tools)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
