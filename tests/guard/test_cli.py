"""`kite-skills guard` and `kite-skills guard limits …` as a person types them."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from kite_skills.cli import main
from kite_skills.guard import limits

from ..sandbox.sandbox_harness import env
from .guard_harness import guard_argv


def test_the_upstream_must_be_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["guard"]) == 2
    assert capsys.readouterr().err == (
        "kite-skills guard: error: name the upstream: --url https://mcp.kite.trade/mcp, "
        "--sandbox, or -- COMMAND (a stdio Kite MCP server)\n"
    )
    assert main(["guard", "--bearer-env", "T", "--", "kite-mcp-server"]) == 2
    assert "--bearer-env and --oauth are for --url" in capsys.readouterr().err


def test_limits_set_kill_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "limits.json"
    assert (
        main(["guard", "limits", "set", "max_order_value", "₹2,00,000", "--limits", str(path)]) == 0
    )
    assert capsys.readouterr().out == f"max_order_value: ₹2,00,000 ({path})\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert main(["guard", "limits", "kill", "stepping out", "--limits", str(path)]) == 0
    switch = limits.load(path).kill_switch
    assert switch is not None and switch.reason == "stepping out"
    assert limits.load(path).max_order_value == 200_000  # the other limits are kept
    assert main(["guard", "limits", "resume", "--limits", str(path)]) == 0
    assert json.loads(path.read_text())["kill_switch"] is None
    capsys.readouterr()
    assert main(["guard", "limits", "--limits", str(path)]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[0] == str(path) and shown[2].startswith("max_order_value            ₹2,00,000 ")


def test_a_limit_that_is_no_limit_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "limits.json"
    assert main(["guard", "limits", "set", "max_value", "1", "--limits", str(path)]) == 1
    said = capsys.readouterr().err
    assert "'max_value' is not a limit — one of: max_order_value, max_quantity" in said
    assert main(["guard", "limits", "set", "trading_hours", "9-5", "--limits", str(path)]) == 1
    said = capsys.readouterr().err
    assert "kite-skills guard: error: trading_hours '9-5': " in said
    assert "— give it in the form 'kite-skills guard limits' shows" in said and "or off" in said
    assert not path.exists()


def test_sandbox_is_this_programs_own(tmp_path: Path) -> None:
    argv = guard_argv(
        tmp_path, "--sandbox", "--", "--tools", "legacy-oldest", "--journal", str(tmp_path / "s")
    )

    async def names() -> list[str]:
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=env(tmp_path))
        async with Client(params, mode="legacy") as client:
            return [t.name for t in (await client.list_tools()).tools]

    assert {"login", "get_profile"} <= set(anyio.run(names))  # the oldest generation's
