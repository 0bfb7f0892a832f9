"""`kite-skills sandbox` in a real subprocess, driven by the SDK's own client over stdio in
both protocol eras: the tools per generation, calls answered as the real server answers
them, one stderr line, and every call journaled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from kite_skills.sandbox import schemas

from .sandbox_harness import MODERN, RawPeer, json_of, stdio_client, text_of

pytestmark = pytest.mark.anyio
ERAS = [("legacy", "2025-11-25"), ("auto", MODERN)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_grouped_tools_over_stdio(tmp_path: Path, mode: str, version: str) -> None:
    journal = tmp_path / "journal.jsonl"
    async with stdio_client(tmp_path, journal, mode=mode) as client:  # type: ignore[arg-type]
        assert client.protocol_version == version
        assert client.server_info is not None and client.server_info.name == "kite-sandbox"
        assert "SIMULATED" in (client.instructions or "")
        tools = (await client.list_tools()).tools
        # sorted by name, as both upstream SDKs send tools/list (issue 41 §2)
        assert [t.name for t in tools] == sorted(t["name"] for t in schemas.load("grouped"))
        profile = json_of(await client.call_tool("portfolio", {"mode": "profile"}))
        assert list(profile)[:2] == ["user_id", "user_name"] and "meta" in profile
        bad = await client.call_tool("orders", {"mode": "nope"})
        assert bad.is_error and text_of(bad).startswith("Invalid mode. Must be one of: list,")
        missing = await client.call_tool("orders", {"mode": "history"})
        assert missing.is_error and text_of(missing) == "parameter 'order_id': is required"
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("get_orders", {})
        assert unknown.value.code == -32602 and 'unknown tool "get_orders"' in str(unknown.value)
    recorded = [json.loads(line) for line in journal.read_text().splitlines()]
    assert recorded[0]["kind"] == "start" and recorded[0]["clock"] == "2026-12-02 11:30"
    calls = [e for e in recorded if e["kind"] == "call"]
    assert [e["tool"] for e in calls] == ["portfolio", "orders", "orders", "get_orders"]
    assert calls[1]["result"].startswith("Invalid mode") and calls[1]["is_error"]
    assert calls[0]["sim_time"].startswith("2026-12-02 11:30")


@pytest.mark.parametrize(("mode", "version"), ERAS)
@pytest.mark.parametrize("generation", ["legacy", "legacy-oldest"])
async def test_legacy_generations_over_stdio(
    tmp_path: Path, mode: str, version: str, generation: str
) -> None:
    journal = tmp_path / "j.jsonl"
    extra = ("--tools", generation)
    async with stdio_client(tmp_path, journal, mode=mode, extra=extra) as client:  # type: ignore[arg-type]
        listed = (await client.list_tools()).tools
        assert [t.name for t in listed] == sorted(t["name"] for t in schemas.load(generation))
        place_tool = next(t for t in listed if t.name == "place_order")
        if generation == "legacy-oldest":  # mcp-go's default annotations, on every tool
            assert place_tool.annotations is not None
            assert place_tool.annotations.destructive_hint is True
            assert place_tool.input_schema["properties"]["quantity"]["default"] == "1"
        else:
            assert place_tool.annotations is None
        login = await client.call_tool("login", {})
        assert text_of(login).startswith("You are already logged in as ")
        place = await client.call_tool(
            "place_order",
            {"exchange": "NSE", "tradingsymbol": "INFY", "transaction_type": "BUY",
             "quantity": 1, "product": "CNC", "order_type": "MARKET"},
        )  # fmt: skip
        assert place.is_error and text_of(place) == "parameter 'variety': is required"
        orders = json_of(await client.call_tool("get_orders", {"limit": 1}))
        assert set(orders) == {"data", "pagination"}
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("orders", {"mode": "list"})
        expected = (  # mcp-go v0.31.0's own text on the oldest generation
            "tool 'orders' not found: tool not found"
            if generation == "legacy-oldest"
            else 'unknown tool "orders"'
        )
        assert unknown.value.code == -32602 and expected in str(unknown.value)


def test_one_stderr_line_says_it_is_a_simulation(tmp_path: Path) -> None:
    peer = RawPeer(tmp_path, tmp_path / "j.jsonl")
    try:
        assert "result" in peer.initialize()
        reply = peer.request("tools/call", {"name": "portfolio", "arguments": {"mode": "margins"}})
        assert reply["result"]["isError"] is False
        code, stderr = peer.close()
    finally:
        peer.kill()
    assert code == 0
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert "SIMULATION" in lines[0] and "scenario 'default'" in lines[0]
    assert "clock 2026-12-02 11:30 IST" in lines[0] and "j.jsonl" in lines[0]


def test_a_bad_scenario_file_serves_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("clock: [not, a, time]\nholdings: 7\n")
    peer = RawPeer(tmp_path, tmp_path / "j.jsonl", "--scenario", str(bad))
    try:
        code, stderr = peer.close()
    finally:
        peer.kill()
    assert code == 1
    assert f"{bad}:" in stderr and "nothing served" in stderr
    assert "Traceback" not in stderr


def test_legacy_session_rules_and_bad_params(tmp_path: Path) -> None:
    peer = RawPeer(tmp_path, tmp_path / "j.jsonl")
    try:
        early = peer.request("tools/list", {})
        assert early["error"]["code"] == -32602
        assert early["error"]["message"].startswith("the session is not initialized")
        assert "result" in peer.initialize()
        again = peer.request(
            "initialize",
            {"protocolVersion": "2024-11-05", "capabilities": {},
             "clientInfo": {"name": "raw", "version": "1"}},
        )  # fmt: skip
        assert (
            again["error"]["code"] == -32600 and "already initialized" in again["error"]["message"]
        )
        bad = peer.request("tools/call", {"name": "orders", "arguments": "list"})
        assert bad["error"] == {
            "code": -32602,
            "message": "invalid params for tools/call: params.arguments is wrong: "
            "input should be a valid dictionary",
            "data": {  # the kit's invalid_params, as the main server answers
                "problems": [
                    {
                        "field": "params.arguments",
                        "problem": "is wrong: input should be a valid dictionary",
                    }
                ]
            },
        }
        no_arguments = peer.request("tools/call", {"name": "orders"})
        assert no_arguments["result"]["isError"] is True  # GetArguments: an empty map
        code, stderr = peer.close()
    finally:
        peer.kill()
    assert code == 0 and "Traceback" not in stderr


def test_excluded_tools_are_gone_as_on_the_real_server(tmp_path: Path) -> None:
    environ = {"EXCLUDED_TOOLS": " orders , gtt,nope"}
    peer = RawPeer(tmp_path, tmp_path / "j.jsonl", environ=environ)
    try:
        peer.initialize()
        names = [t["name"] for t in peer.request("tools/list", {})["result"]["tools"]]
        assert names == ["alerts", "market", "mutual_funds", "portfolio", "session"]
        gone = peer.request("tools/call", {"name": "orders", "arguments": {"mode": "list"}})
        assert (
            gone["error"]["code"] == -32602 and 'unknown tool "orders"' in gone["error"]["message"]
        )
        code, stderr = peer.close()
    finally:
        peer.kill()
    assert code == 0
    assert "EXCLUDED_TOOLS names no grouped tool: nope" in stderr


async def test_watch_strict_over_stdio_refuses_the_harm_and_journals_it(tmp_path: Path) -> None:
    """Issue 41 §1: a real launch (`--scenario hedged-book --watch strict`): a call that
    would break a hedge is refused with the rule's message and changes nothing; a safe one
    answers as the real server does."""
    journal = tmp_path / "journal.jsonl"
    extra = ("--scenario", "hedged-book", "--watch", "strict")
    sell_long = {
        "mode": "place", "variety": "regular", "exchange": "NFO",
        "tradingsymbol": "BANKNIFTY26DEC58200PE", "transaction_type": "SELL", "quantity": 30,
        "product": "NRML", "order_type": "MARKET", "market_protection": -1,
    }  # fmt: skip
    async with stdio_client(tmp_path, journal, mode="auto", extra=extra) as client:
        refused = await client.call_tool("orders", sell_long)
        assert refused.is_error
        assert "refused this call: a hedged leg is now naked" in text_of(refused)
        safe = await client.call_tool("portfolio", {"mode": "profile"})
        assert not safe.is_error
    from kite_skills.sandbox import journal as journal_module

    summary = journal_module.summary(journal)
    assert summary["watch"] == {"hedge-broken": 1} and summary["writes"] == 1
    assert summary["findings"][0]["phase"] == "refused"
    assert summary["events"] == {}  # nothing was placed


async def test_the_state_a_launch_starts_in_is_journalled_before_any_call(tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    extra = ("--scenario", "ddpi-gtt")
    async with stdio_client(tmp_path, journal, mode="auto", extra=extra) as client:
        await client.list_tools()
    kinds = [json.loads(line)["kind"] for line in journal.read_text().splitlines()]
    assert kinds == ["start", "watch"]
    from kite_skills.sandbox import journal as journal_module

    assert journal_module.summary(journal)["watch"] == {"stop-cannot-fire": 1}
