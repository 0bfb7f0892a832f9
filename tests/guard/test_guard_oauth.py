"""The guard in front of `kite-skills sandbox --http --oauth` (the hosted server's sign-in,
simulated): its upstream's ``auth`` is the OAuth client auth of kite_skills/guard/oauth.py,
the person approves in the browser once, and then reads pass and writes are judged. Zerodha's
hosted server cannot be reached from the test machines; this is what stands in for it."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from kite_skills.guard import limits as limits_module
from kite_skills.guard.journal import Journal
from kite_skills.guard.oauth import upstream_auth
from kite_skills.guard.server import Guard, build_server
from kite_skills.guard.upstream import Upstream, all_tools, open_upstream

from ..sandbox.sandbox_harness import oauth_sandbox
from .guard_harness import ORDER, journal, text_of
from .test_oauth import Browser

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_the_guard_signs_in_then_judges_writes(tmp_path: Path) -> None:
    browser = Browser("approve")
    limits_module.save(tmp_path / "limits.json", limits_module.Limits(max_order_value=100_000))
    log = Journal(tmp_path / "guard.jsonl")
    with oauth_sandbox(tmp_path, tmp_path / "s.jsonl") as (port, _):
        url = f"http://127.0.0.1:{port}/mcp"
        upstream = Upstream(url=url, auth=upstream_auth(url, open_browser=browser))
        async with open_upstream(upstream, 30.0) as client:
            guard = Guard(
                client, await all_tools(client), tmp_path / "limits.json", log, timeout=30.0
            )
            async with Client(build_server(guard, None), mode="legacy") as agent:
                read = await agent.call_tool("portfolio", {"mode": "margins"})
                big = await agent.call_tool(
                    "orders", {"mode": "place", **ORDER, "quantity": 100, "price": 1600}
                )
    log.close()
    assert browser.problems == [] and len(browser.opened) == 1
    assert not read.is_error and big.is_error
    assert "above your ₹1,00,000 limit per order [order-value]" in text_of(big)
    assert [e["decision"] for e in journal(tmp_path)] == ["refuse"]
