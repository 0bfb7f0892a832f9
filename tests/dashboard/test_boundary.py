"""The MCP server never loads the dashboard (start-up cost and the draft boundary): checked in
a fresh interpreter, as ``tests/server/test_user_skills_boundary.py`` does for the human
actions."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import kite_skills.server


def test_the_mcp_server_and_the_cli_never_import_the_dashboard() -> None:
    modules = sorted(
        f"kite_skills.server.{m.name}" for m in pkgutil.iter_modules(kite_skills.server.__path__)
    )
    script = (
        "import importlib, json, sys\n"
        f"for name in ['kite_skills.cli', *{modules!r}]: importlib.import_module(name)\n"
        "from kite_skills.cli import build_parser\n"
        "build_parser()\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = json.loads(done.stdout)
    assert "kite_skills.server.user_skills" in loaded
    leaked = [
        m
        for m in loaded
        # markdown_it is not listed: the catalog reads its own Markdown with it at start-up
        if m.startswith(("kite_skills.dashboard", "jinja2", "markupsafe"))
    ]
    assert leaked == [], f"the MCP server loads {leaked}"
