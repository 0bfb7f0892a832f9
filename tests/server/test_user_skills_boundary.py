"""The draft boundary at import time (no transport): loading the MCP server never loads the
store's human actions. ``tests/store/test_lifecycle.py`` checks the source text statically;
this checks what a fresh interpreter actually imports."""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import kite_skills.server

# The person's entry point (the desk, the verb table and the actions behind them) and the CLI.
FORBIDDEN = (
    "kite_skills.store.desk",
    "kite_skills.store.human",
    "kite_skills.store.verbs",
    "kite_skills.cli.skills",
)


def test_importing_the_mcp_server_never_loads_the_persons_entry_point() -> None:
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


# ---- the boundary as a type: the server holds an AgentView, never a Store -------------------

SERVER = Path(kite_skills.server.__file__).parent
# What the server may not name: the store itself, and the modules that take one.
STORE_NAMES = {"Store", "PersonDesk"}
STORE_MODULES = {
    "kite_skills.store.db",
    "kite_skills.store.agent",
    "kite_skills.store.desk",
    "kite_skills.store.human",
    "kite_skills.store.verbs",
}
STORE_ATTRIBUTES = {"store", "_store"}  # the view keeps its store to itself


def _resolved(node: ast.ImportFrom, path: Path) -> str:
    if not node.level:
        return node.module or ""
    package = ["kite_skills", *path.relative_to(SERVER.parent).parent.parts]
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def store_reaches(source: str, path: Path) -> list[str]:
    """Where ``source`` (the server module at ``path``) names the Store or reaches past an
    AgentView to one."""
    found = []
    for node in ast.walk(ast.parse(source, str(path))):
        where = f"{path.name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Name) and node.id in STORE_NAMES:
            found.append(f"{where}: names {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in STORE_NAMES | STORE_ATTRIBUTES:
            found.append(f"{where}: reaches .{node.attr}")
        elif isinstance(node, ast.Import):
            found += [f"{where}: imports {a.name}" for a in node.names if a.name in STORE_MODULES]
        elif isinstance(node, ast.ImportFrom):
            module = _resolved(node, path)
            for alias in node.names:
                if module in STORE_MODULES or f"{module}.{alias.name}" in STORE_MODULES:
                    found.append(f"{where}: imports {module}.{alias.name}")
                elif module == "kite_skills.store" and alias.name in STORE_NAMES:
                    found.append(f"{where}: imports {alias.name}")
    return found


def test_the_server_holds_an_agent_view_never_the_store() -> None:
    """The draft boundary as a type: ``kite_skills.server`` gets an AgentView (the agent's reads
    and actions) and never names the Store, imports the modules that take one, or reaches
    for a ``.store`` behind the view."""
    reaches = [
        r
        for path in sorted(SERVER.glob("*.py"))
        for r in store_reaches(path.read_text(encoding="utf-8"), path)
    ]
    assert reaches == []


@pytest.mark.parametrize(
    "line",
    [
        "from ..store import Store",
        "from ..store import agent",
        "from ..store.desk import PersonDesk",
        "from ..store.verbs import PERSON_VERBS",
        "def f(x: 'AgentView') -> None: PersonDesk(x)",
        "from ..store.db import MEMORY",
        "import kite_skills.store.human",
        "def f(x: 'AgentView') -> None: Store.open(x)",
        "def f(view: AgentView) -> None: view._store.get('x')",
        "def f(users: UserSkills) -> None: users.store.get('x')",
    ],
)
def test_the_scan_finds_each_way_of_reaching_the_store(line: str) -> None:
    assert store_reaches(line + "\n", SERVER / "probe.py"), line
