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
import httpx2
import pytest
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from kite_skills.sandbox import sim

from ..sandbox.sandbox_harness import http_sandbox
from .agent import Agent, in_process, recipe
from .scripts import Attempt, prepare_buy, reconcile, when

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
    # each partial fill adds an OPEN row with the new filled_quantity (issue 41 §2)
    "History: PUT ORDER REQ RECEIVED -> VALIDATION PENDING -> OPEN PENDING -> OPEN -> OPEN",
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


# ---------------------------------------------------------------- the live variant over HTTP

LIVE_TAG = "ks1130INFYB1"


class DropTheAnswer(httpx2.AsyncBaseTransport):
    """The client's HTTP transport, except that the first `orders` `place` call is sent and
    answered by the server, and then its answer is thrown away and the request fails as a
    client-side read timeout: the connection the agent placed through is gone, and it never
    saw the order id."""

    def __init__(self) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.dropped: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        message = json.loads(request.content) if request.content else {}
        arguments = (message.get("params") or {}).get("arguments") or {}
        if (
            message.get("method") == "tools/call"
            and arguments.get("mode") == "place"
            and not self.dropped
        ):
            answer = await self.inner.handle_async_request(request)
            await answer.aread()  # the server answered; the agent never reads it
            await answer.aclose()
            self.dropped.append(json.loads(answer.content))
            raise httpx2.ReadTimeout("no answer to the place call", request=request)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def bridge(client: Client) -> Any:
    """A synchronous transport for the scripted agent (run in a worker thread) over ``client``;
    a call whose connection fails comes back as an error with no answer."""

    async def call(tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        result = await client.call_tool(tool, arguments)
        texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
        return "\n".join(texts), bool(result.is_error)

    def over_http(tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        try:
            return anyio.from_thread.run(call, tool, arguments)
        except BaseException as lost:  # the connection died under the call
            return f"no answer: {type(lost).__name__}", True

    return over_http


@pytest.mark.anyio
async def test_a_place_whose_answer_is_lost_over_http_is_found_not_placed_again(
    tmp_path: Path,
) -> None:
    """Live: the agent follows /orders/prepare over HTTP to its approved place call; the call
    reaches the sandbox but its answer is dropped and the connection fails. On a new
    connection (the same bearer token) the agent follows /orders/reconcile: it finds the one
    order by tag, side, quantity and time, and places nothing."""
    journal = tmp_path / "journal.jsonl"
    prepare, rec = recipe("orders/prepare.md"), recipe("orders/reconcile.md")
    agent = Agent("grouped", lambda tool, arguments: ("not connected", True))  # set below
    with http_sandbox(tmp_path, journal, "--scenario", "default") as (port, token, _):
        url = f"http://127.0.0.1:{port}/mcp"
        drop = DropTheAnswer()
        first = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, transport=drop)
        with pytest.raises(BaseExceptionGroup) as failed:
            async with (
                first,
                Client(streamable_http_client(url, http_client=first), mode="auto") as client,
            ):
                agent.transport = bridge(client)
                await anyio.to_thread.run_sync(
                    lambda: prepare_buy(
                        agent, prepare, rec, "NSE:INFY", 120, 1641.0, LIVE_TAG, lost=True
                    )
                )
        assert failed.group_contains(httpx2.ReadTimeout)
        (place,) = agent.writes()
        assert not place.answered and place.arguments["tag"] == LIVE_TAG
        (answer,) = drop.dropped  # what the server said, which the agent never saw
        placed_id = json.loads(answer["result"]["content"][0]["text"])["order_id"]
        sent_at = when(
            json.loads(agent.calls_of("market", "quote")[-1].text)["NSE:INFY"]["timestamp"]
        )
        attempt = Attempt(LIVE_TAG, "NSE", "INFY", "BUY", 120, sent_at)
        second = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with (
            second,
            Client(streamable_http_client(url, http_client=second), mode="auto") as client,
        ):
            agent.transport = bridge(client)
            found = await anyio.to_thread.run_sync(
                lambda: reconcile(agent, rec, attempt, f"{sent_at:%H:%M:%S}")
            )
    (match,) = found
    assert match.order["order_id"] == placed_id  # the order the lost answer named
    assert match.unreconciled == []
    assert match.lines[0] == (
        f"Order {placed_id} BUY INFY NSE CNC LIMIT 1641.00, qty 120, tag {LIVE_TAG}"
    )
    # INFY fills at most 100 a tick in this scenario: the order is part-filled and working
    assert (match.order["status"], match.order["filled_quantity"]) == ("OPEN", 100)
    assert len(agent.writes()) == 1, "the agent placed again after the lost answer"
    entries = [json.loads(line) for line in journal.read_text().splitlines()]
    places = [e for e in entries if (e.get("arguments") or {}).get("mode") == "place"]
    assert len(places) == 1 and places[0]["arguments"]["tag"] == LIVE_TAG
    assert [m.mode for m in agent.made[agent.made.index(place) + 1 :]][:1] == ["list"]
