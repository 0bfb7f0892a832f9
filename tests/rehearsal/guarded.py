"""The rehearsals through `kite-skills guard` with its default limits: the guard in this
process in front of the in-process sandbox, both through the MCP SDK (as
tests/guard/in_process.py), on a thread of its own so that the scripted agent's calls stay
synchronous. The person answers every question yes: the recipe stopped for their approval
before each write (the harness checks that), so a limit the guard asks about is one they saw."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client, types

from kite_skills.guard.journal import Journal
from kite_skills.guard.server import Guard, build_server
from kite_skills.guard.upstream import all_tools
from kite_skills.sandbox.server import Sandbox
from kite_skills.sandbox.server import build_server as sandbox_server

from .agent import Transport


class Through:
    """Makes guarded transports for one test."""

    def __init__(self, home: Path, stack: ExitStack) -> None:
        self.home = home
        self.stack = stack
        self.portal: BlockingPortal | None = None

    @staticmethod
    async def _yes(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"confirm": True})

    @asynccontextmanager
    async def _client(self, sandbox: Sandbox, clock: list[datetime]) -> AsyncIterator[Client]:
        journal = Journal(self.home / "guard.jsonl")
        try:
            async with Client(sandbox_server(sandbox), mode="legacy") as upstream:
                tools = await all_tools(upstream)
                guard = Guard(
                    upstream, tools, self.home / "limits.json", journal, timeout=30.0,
                    now=lambda: clock[0],
                )  # fmt: skip
                server = build_server(guard, None)
                async with Client(server, mode="legacy", elicitation_callback=self._yes) as c:
                    yield c
        finally:
            journal.close()

    def __call__(self, sandbox: Sandbox, clock: list[datetime]) -> Transport:
        if self.portal is None:
            self.portal = self.stack.enter_context(start_blocking_portal("asyncio"))
        portal = self.portal
        client = self.stack.enter_context(
            portal.wrap_async_context_manager(self._client(sandbox, clock))
        )

        def transport(tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
            result: types.CallToolResult = portal.call(client.call_tool, tool, arguments)
            text = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
            return text, bool(result.is_error)

        return transport
