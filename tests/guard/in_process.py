"""The guard in this process, in front of the real sandbox (its simulation and handlers) in
this process too, both through the MCP SDK: the guard's client is ``Client(server)`` over the
SDK's in-memory stream loop (the handshake era), the upstream ``Client(sandbox server)``. The
clock is the test's, so that a minute, a window and the trading hours are exact."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from mcp import Client, types

from kite_skills.guard import limits as limits_module
from kite_skills.guard.journal import Journal
from kite_skills.guard.server import Guard, build_server
from kite_skills.guard.upstream import all_tools
from kite_skills.sandbox import handlers, sim
from kite_skills.sandbox.server import Sandbox
from kite_skills.sandbox.server import build_server as sandbox_server

from .guard_harness import Person, journal


@dataclass
class Clock:
    now: datetime

    def __call__(self) -> datetime:
        return self.now

    def wait(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass
class Guarded:
    client: Client
    home: Path
    clock: Clock
    sandbox: Sandbox
    decisions: list[dict[str, Any]] = field(default_factory=list)

    async def call(self, tool: str, **arguments: Any) -> types.CallToolResult:
        return await self.client.call_tool(tool, arguments)

    def last(self) -> dict[str, Any]:
        return journal(self.home)[-1]


@asynccontextmanager
async def guarded(
    home: Path,
    *,
    limits: limits_module.Limits | None = None,
    person: Person | None = None,
    generation: str = "legacy",
    scenario: str = "default",
    at: datetime | None = None,
) -> AsyncIterator[Guarded]:
    simulation = sim.Simulation(sim.load_scenario(scenario))
    sim_clock = [simulation.now]
    sandbox = Sandbox(
        simulation,
        lambda: sim_clock[0],
        handlers.generation(generation, lambda: sim_clock[0]),
        None,
    )
    clock = Clock(at or simulation.now)
    path = home / "limits.json"
    limits_module.save(path, limits or limits_module.Limits())
    log = Journal(home / "guard.jsonl")
    try:
        async with Client(sandbox_server(sandbox), mode="legacy") as upstream:
            tools = await all_tools(upstream)
            guard = Guard(upstream, tools, path, log, timeout=10.0, now=clock)
            callback: Callable[..., Any] | None = person
            async with Client(
                build_server(guard, None), mode="legacy", elicitation_callback=callback
            ) as client:
                yield Guarded(client, home, clock, sandbox)
    finally:
        log.close()
