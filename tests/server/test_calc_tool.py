"""The ``calc`` tool over the real server (the SDK's in-memory client, both protocol eras):
listed for every client, Skills clients included; hidden by ``EXCLUDED_TOOLS``; its answer's
structured content follows its output schema; a bad input gets every field's problem; and
listing the tools imports none of the calculators."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from mcp import Client
from mcp.client import advertise
from mcp.shared.exceptions import MCPError

from kite_skills.catalog import Catalog
from kite_skills.server.app import build_server
from kite_skills.server.user_skills import UserSkills
from kite_skills.store import AgentView, Store

from .harness import ROOT, SKILLS_EXTENSION, Target, sdk_client

pytestmark = pytest.mark.anyio

SPREAD = {
    "mode": "payoff",
    "legs": [
        {"instrument": "CE", "side": "BUY", "strike": 24800, "price": 310, "quantity": 75},
        {"instrument": "CE", "side": "SELL", "strike": 25000, "price": 205, "quantity": 75},
    ],
}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("skills_client", [False, True])
async def test_calc_answers_with_structured_content_for_every_client(
    loaded: Catalog, store: Store, mode: str, skills_client: bool
) -> None:
    extensions = [advertise(SKILLS_EXTENSION)] if skills_client else []
    server = build_server(loaded, UserSkills(AgentView(store)))
    async with Client(server, mode=mode, extensions=extensions) as c:
        (tool,) = [t for t in (await c.list_tools()).tools if t.name == "calc"]
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert tool.input_schema["properties"]["mode"]["enum"][0] == "tick"
        result = await c.call_tool("calc", SPREAD)
        assert not result.is_error
        assert tool.output_schema is not None
        jsonschema.validate(result.structured_content, tool.output_schema)
        answer = result.structured_content or {}
        assert answer["result"]["breakevens"] == [24905]
        assert answer["result"]["max_loss"] == 7875 and answer["result"]["max_profit"] == 7125
        assert "maximum loss: 7,875.00" in result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_bad_calc_call_names_every_field(loaded: Catalog, store: Store, mode: str) -> None:
    server = build_server(loaded, UserSkills(AgentView(store)))
    async with Client(server, mode=mode) as c:
        result = await c.call_tool("calc", {"mode": "tick", "price": -1, "purpose": "hold"})
        assert result.is_error
        text = result.content[0].text  # type: ignore[union-attr]
        assert text.startswith("calc tick: 3 problems:\n`price`: input should be greater than 0")
        assert "`tick_size`: missing — send" in text and "`purpose`: input should be" in text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_excluded_tools_hide_calc(loaded: Catalog, store: Store, mode: str) -> None:
    server = build_server(loaded, UserSkills(AgentView(store)), frozenset({"calc"}))
    async with Client(server, mode=mode) as c:
        assert "calc" not in {t.name for t in (await c.list_tools()).tools}
        with pytest.raises(MCPError) as info:
            await c.call_tool("calc", SPREAD)
        assert info.value.code == -32602


def test_listing_the_tools_imports_no_calculator() -> None:
    """The server's start stays as it was: ``calc``'s schemas come from its tool.json."""
    code = (
        "import sys\n"
        "from kite_skills import catalog\n"
        "from kite_skills.server.handlers import all_tools\n"
        "from kite_skills.server.user_skills import UserSkills\n"
        "tools = all_tools(catalog.load(), UserSkills.without_store('none'))\n"
        "assert 'calc' in tools\n"
        "print(sorted(m for m in sys.modules if m.startswith('kite_skills.calc')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]", done.stderr


def test_a_mode_loads_only_its_own_calculator() -> None:
    """A server that answers payoff (which prices with greeks' Black-76) holds no other
    mode's module, nor any model but payoff's built (bench section 5, the warm server's RSS)."""
    code = (
        "import sys\n"
        "from kite_skills.server.tools import CalcTool\n"
        f"assert not CalcTool.answer({SPREAD!r}).get('isError')\n"
        "print(sorted(m for m in sys.modules if m.startswith('kite_skills.calc')))\n"
        "from kite_skills.calc import MODES\n"
        "print(sorted(n for n, m in MODES.items() if m.model.__pydantic_complete__))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    loaded, built = done.stdout.splitlines()
    calculators = ["kite_skills.calc.greeks", "kite_skills.calc.payoff"]
    common = ["kite_skills.calc", "kite_skills.calc._common", "kite_skills.calc._validate"]
    assert loaded == str(sorted(common + calculators)), done.stderr
    assert built == "['payoff']", done.stderr


async def test_an_answer_is_kept_for_the_same_request_and_only_for_so_many() -> None:
    from kite_skills.server.tools import CALC_ANSWERS_KEPT, CalcTool

    tool = CalcTool()
    first = await tool.run(None, SPREAD)  # type: ignore[arg-type]
    reordered = {"legs": SPREAD["legs"], "mode": "payoff"}
    assert await tool.run(None, reordered) is first  # type: ignore[arg-type]
    for n in range(CALC_ANSWERS_KEPT):
        await tool.run(None, {"mode": "lots", "quantity": n, "lot_size": 1})  # type: ignore[arg-type]
    late = {"mode": "lots", "quantity": 10**6, "lot_size": 1}
    assert await tool.run(None, late) is not await tool.run(None, late)  # type: ignore[arg-type]
    assert await tool.run(None, SPREAD) is first  # type: ignore[arg-type]


WHERE = ["in-process", pytest.param("zipapp", marks=pytest.mark.zipapp)]


@pytest.fixture(params=WHERE)
def where(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_calc_answers_over_the_wire(
    target: Target, where: str, shiv_root: Path, db: Path, mode: str
) -> None:
    """The built file ships calc/tool.json and the calculators the first call imports."""
    async with sdk_client(target, shiv_root, db, mode=mode) as client:  # type: ignore[arg-type]
        assert "calc" in {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool("calc", SPREAD)
        assert not result.is_error
        assert (result.structured_content or {})["result"]["breakevens"] == [24905]
