"""``kite-skills skills search QUERY`` (issue 39 §4): the person sees what an agent's ``skills``
tool finds, in the same order — both ask the store's one search (real store file, the MCP
server in process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from kite_skills import catalog
from kite_skills.cli import main
from kite_skills.server.app import build_server
from kite_skills.server.user_skills import UserSkills
from kite_skills.store import AgentView, Store, agent, human

FIXTURE = Path(__file__).parent / "data" / "search_skills.json"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "skills.db"
    skills = [tuple(row) for row in json.loads(FIXTURE.read_text(encoding="utf-8"))]
    with Store.open(path) as store:
        human.import_skills(store, skills, via="cli", who="pat")  # type: ignore[arg-type]
        agent.save(store, "fund-draft", "Mutual fund expense ratio draft", "# fund\n", who="bot")
    return path


def _cli(db: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    capsys.readouterr()
    assert main(["skills", "search", *argv, "--json", "--db", str(db)]) == 0
    return [s["name"] for s in json.loads(capsys.readouterr().out)]


@pytest.mark.anyio
@pytest.mark.parametrize("query", ["mutual fund expense", "sip", "stop loss order", "", "zzzz"])
async def test_the_cli_ranks_as_the_agents_skills_tool(
    db: Path, capsys: pytest.CaptureFixture[str], query: str
) -> None:
    with Store.open(db) as store:
        server = build_server(catalog.load(), UserSkills(AgentView(store)))
        async with Client(server, mode="legacy") as client:
            for limit in (3, 20):
                tool = await client.call_tool("skills", {"q": query, "limit": limit})
                assert tool.structured_content is not None
                expected = [s["name"] for s in tool.structured_content["skills"]]
                assert _cli(db, capsys, query, "--limit", str(limit)) == expected
    if query == "mutual fund expense":
        assert len(expected) > 2 and expected != sorted(expected)  # ranked, not listed
        assert "fund-draft" not in expected  # the agent's search: live skills only


def test_search_prints_a_ranked_list_and_refuses_a_bad_limit(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = _cli(db, capsys, "sip")
    assert main(["skills", "search", "sip", "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines] == [[f"{i}.", n] for i, n in enumerate(names, 1)]
    assert main(["skills", "search", "nothing-like-it", "--db", str(db)]) == 0
    assert capsys.readouterr().out == "no live skill matches 'nothing-like-it'\n"
    assert main(["skills", "search", "sip", "--limit", "101", "--db", str(db)]) == 1
    assert "limit" in capsys.readouterr().err
