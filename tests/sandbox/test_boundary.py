"""The boundaries, checked in fresh interpreters (as tests/dashboard/test_boundary.py does):
the main server and the CLI never load the sandbox, and the sandbox never loads the user-skill
store (nor the dashboard)."""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import kite_skills
import kite_skills.sandbox
import kite_skills.server


def loaded_after(script: str) -> list[str]:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            script + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return list(json.loads(done.stdout.splitlines()[-1]))


def test_the_main_server_and_the_cli_never_import_the_sandbox() -> None:
    modules = sorted(
        f"kite_skills.server.{m.name}" for m in pkgutil.iter_modules(kite_skills.server.__path__)
    )
    loaded = loaded_after(
        "import importlib\n"
        f"for name in ['kite_skills.cli', *{modules!r}]: importlib.import_module(name)\n"
        "from kite_skills.cli import build_parser\n"
        "build_parser()\n"
    )
    assert "kite_skills.server.app" in loaded
    assert [m for m in loaded if m.startswith("kite_skills.sandbox")] == []


def test_the_sandbox_never_imports_the_store() -> None:
    modules = sorted(
        m.name for m in pkgutil.walk_packages(kite_skills.sandbox.__path__, "kite_skills.sandbox.")
    )
    loaded = loaded_after(
        "import importlib, contextlib, io\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "from kite_skills.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['sandbox', '--help'])\n"
    )
    assert "kite_skills.sandbox.server" in loaded and "kite_skills.sandbox.cli" in loaded
    leaked = [m for m in loaded if m.startswith(("kite_skills.store", "kite_skills.dashboard"))]
    assert leaked == [], f"the sandbox loads {leaked}"


def test_only_the_cli_dispatch_names_the_sandbox_outside_it() -> None:
    """Also imports inside functions (which the import test above cannot see): outside
    kite_skills/sandbox, only cli.main's hand-over to ``kite-skills sandbox`` imports it."""
    root = Path(kite_skills.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        if root / "sandbox" in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [f"{'.' * node.level}{node.module or ''}"]
                names += [f"{'.' * node.level}{node.module or ''}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if any("sandbox" in name.split(".") for name in names):
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert [f.split(":")[0] for f in found] == ["cli/__init__.py"], found
