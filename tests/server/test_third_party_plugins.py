"""No pydantic plugin installed on the machine runs inside kite-skills: pydantic would load
every ``pydantic`` entry point it finds on the path and hand it each value it validates (the
person's skill texts, a Kite order given to ``calc``). The program ships none, so it turns the
scan off before the MCP SDK's types are built."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .harness import person_command

PLUGIN = """
from pathlib import Path
import os

Path(os.environ["SPY_MARKER"]).write_text("loaded", "utf-8")


class Plugin:
    def new_schema_validator(self, *args, **kwargs):
        return None, None, None


plugin = Plugin()
"""


def installed_plugin(where: Path) -> Path:
    """A distribution on ``where`` with a ``pydantic`` entry point that leaves a mark."""
    where.mkdir()
    (where / "kite_spy_plugin.py").write_text(PLUGIN, "utf-8")
    info = where / "kite_spy_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kite-spy-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nspy = kite_spy_plugin:plugin\n")
    return where


def serve_a_few_requests(tmp_path: Path, plugin_dir: Path, calls: list[dict[str, object]]) -> str:
    command, extra = person_command()
    path = os.pathsep.join(p for p in (extra.get("PYTHONPATH"), str(plugin_dir)) if p)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "SHIV_ROOT": str(tmp_path / "shiv"),
        "KITE_SKILLS_DB": str(tmp_path / "skills.db"),
        "SPY_MARKER": str(tmp_path / "marker"),
        "PYTHONPATH": path,
    }
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    }
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}]
    lines.append({"jsonrpc": "2.0", "method": "notifications/initialized"})
    lines += [
        {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call}
        for n, call in enumerate(calls, start=1)
    ]
    given = "".join(json.dumps(line) + "\n" for line in lines)
    done = subprocess.run(
        command, input=given, env=env, capture_output=True, text=True, timeout=120
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r.get("id") for r in replies] == list(range(len(calls) + 1)), done.stderr
    assert all("error" not in r and not r["result"].get("isError") for r in replies), replies
    return done.stderr


@pytest.mark.parametrize("mode", ["greeks", "skillSave"])
def test_a_pydantic_plugin_on_the_path_is_never_loaded(tmp_path: Path, mode: str) -> None:
    plugin_dir = installed_plugin(tmp_path / "site")
    call: dict[str, object] = (
        {
            "name": "calc",
            "arguments": {
                "mode": "greeks",
                "quote_time": "2026-12-02 11:30:00",
                "legs": [
                    {
                        "option_type": "CE",
                        "strike": 26000,
                        "underlying": 26080,
                        "option_price": 250,
                        "expiry_date": "2026-12-29",
                        "quantity": 65,
                    }
                ],
            },
        }
        if mode == "greeks"
        else {
            "name": "skillSave",
            "arguments": {"name": "my-notes", "description": "Mine", "body": "# Mine\n"},
        }
    )
    serve_a_few_requests(tmp_path, plugin_dir, [call])
    assert not (tmp_path / "marker").exists()


def test_the_plugin_this_test_installs_is_one_pydantic_would_load(tmp_path: Path) -> None:
    """The other test's proof: the same plugin on the same path, in a plain Python that
    builds a pydantic model, is loaded."""
    plugin_dir = installed_plugin(tmp_path / "site")
    marker = tmp_path / "marker"
    code = "import pydantic\nclass M(pydantic.BaseModel):\n    x: int\n"
    env = {**os.environ, "PYTHONPATH": str(plugin_dir), "SPY_MARKER": str(marker)}
    env.pop("PYDANTIC_DISABLE_PLUGINS", None)
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    assert marker.read_text("utf-8") == "loaded"
