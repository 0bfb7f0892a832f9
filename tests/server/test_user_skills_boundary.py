"""The draft boundary at import time (no transport): loading the MCP server never loads the
store's human actions. ``tests/store/test_lifecycle.py`` checks the source text statically;
this checks what a fresh interpreter actually imports."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import kite_skills.server

FORBIDDEN = ("kite_skills.store.human", "kite_skills.cli_skills")


def test_importing_the_mcp_server_never_loads_the_human_actions() -> None:
    modules = sorted(
        f"kite_skills.server.{m.name}" for m in pkgutil.iter_modules(kite_skills.server.__path__)
    )
    assert "kite_skills.server.user_skills" in modules
    script = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('kite_skills'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = json.loads(done.stdout)
    assert "kite_skills.store.agent" in loaded  # the agent writer is what it uses
    leaked = [m for m in loaded if m in FORBIDDEN]
    assert leaked == [], f"the MCP server loads {leaked}"
