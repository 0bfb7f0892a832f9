"""/orders/reconcile: the original workflow of the Kite MCP server's own tests — an
authenticated order reconciliation over HTTP. An approved place call timed out; the order
reached Kite and partly filled. Following the recipe finds it (one match, OPEN 100 of 250)
and places nothing."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from kite_skills.sandbox import sim

from ..sandbox.sandbox_harness import http_sandbox
from .agent import Agent, in_process, recipe
from .scripts import Attempt, reconcile

SCENARIO = "reconcile-timeout"
ATTEMPT = Attempt(
    tag="ks1129INFYB1",
    exchange="NSE",
    tradingsymbol="INFY",
    transaction_type="BUY",
    quantity=250,
    sent_at=datetime(2026, 12, 2, 11, 29, 40, tzinfo=sim.IST),
)
TRUTH = [  # what the scenario was built with
    "Order 261202200000002 BUY INFY NSE CNC LIMIT 1640.00, qty 250, tag ks1129INFYB1",
    "Status OPEN (as of 11:30:00 IST): filled 100, pending 150, cancelled 0 (100+0+150 = 250)",
    "Trades: 1 (100 shares), average 1639.80; order average_price 1639.80 - matches",
    "History: PUT ORDER REQ RECEIVED -> VALIDATION PENDING -> OPEN PENDING -> OPEN",
    "Unreconciled: none",
]


def check(agent: Agent, text: str | None = None) -> None:
    (found,) = reconcile(agent, recipe("orders/reconcile.md", text), ATTEMPT, "11:30:00")
    assert found.lines == TRUTH
    assert not agent.writes(), "the agent placed again after finding the order"
    assert [m.mode for m in agent.made] == ["list", "history", "trades"]
    assert {"from": 0, "limit": 50}.items() <= agent.made[0].arguments.items()


def test_a_timed_out_place_is_found_and_not_repeated() -> None:
    check(in_process(SCENARIO))


@pytest.mark.parametrize("generation", ["legacy", "legacy-oldest"])
def test_on_the_legacy_tools_too(generation: str) -> None:
    agent = in_process(SCENARIO, generation)
    check(agent)
    assert [m.arguments for m in agent.made][1:] == [
        {"order_id": "261202200000002"},
        {"order_id": "261202200000002"},
    ]


@pytest.mark.anyio
async def test_authenticated_reconciliation_over_http(tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    with http_sandbox(tmp_path, journal, "--scenario", SCENARIO) as (port, token, _):
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)
        async with http, Client(transport, mode="auto") as client:  # type: ignore[arg-type]

            async def call(tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
                result = await client.call_tool(tool, arguments)
                texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
                return "\n".join(texts), bool(result.is_error)

            def over_http(tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
                return anyio.from_thread.run(call, tool, arguments)

            agent = Agent("grouped", over_http)
            await anyio.to_thread.run_sync(check, agent)
    entries = [json.loads(line) for line in journal.read_text().splitlines()]
    assert entries[0]["transport"] == "http"
    calls = [e for e in entries if e.get("tool")]
    assert [e["arguments"]["mode"] for e in calls] == ["list", "history", "trades"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
