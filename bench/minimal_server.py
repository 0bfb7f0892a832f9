"""The baseline: the smallest mcp lowlevel server, with one no-op tool.

bench/run.py packages it as a zipapp the way kite-skills is packaged (shiv, --compressed,
--reproducible, the very site-packages of dist/kite-skills.pyz minus kite-skills itself), so a
ratio against it measures what kite-skills adds on the same interpreter and the same SDK.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool(name="echo", input_schema={"type": "object"})])


async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
    # {"bytes": N} answers with N bytes of text: bench/run.py's evidence of what a reply's
    # size alone costs. Without it (the no-op), the reply is empty.
    size = int((params.arguments or {}).get("bytes", 0))
    return types.CallToolResult(content=[types.TextContent(text="x" * size)] if size else [])


async def main() -> None:
    server: Server[Any] = Server(
        "minimal", version="0", on_list_tools=list_tools, on_call_tool=call_tool
    )
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def run() -> None:
    anyio.run(main)


if __name__ == "__main__":
    run()
