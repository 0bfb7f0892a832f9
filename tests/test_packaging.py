"""The wheel for people who prefer a command on PATH: any CPython >= 3.11, compatible ranges
of what kite_skills imports, every range met by the exact lock the zipapps use."""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from email.parser import Parser
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from kite_skills import __version__

from .zipapp_platforms import runnable

pytestmark = pytest.mark.zipapp  # the built wheel (dist/) and wheelhouse (.build/wheels)

ROOT = Path(__file__).resolve().parents[1]
WHEEL = ROOT / "dist" / f"kite_skills-{__version__}-py3-none-any.whl"


def metadata() -> dict[str, list[str]]:
    if not WHEEL.is_file():
        pytest.fail(f"{WHEEL} is missing — run ./build.sh first")
    with zipfile.ZipFile(WHEEL) as wheel:
        text = wheel.read(f"kite_skills-{__version__}.dist-info/METADATA").decode()
    message = Parser().parsestr(text)
    return {key: message.get_all(key) or [] for key in ("Requires-Python", "Requires-Dist")}


def lock() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements" / "runtime.txt").read_text().splitlines():
        line = line.split("#")[0].split(";")[0].strip()
        if line:
            name, version = line.split("==")
            pins[name.lower().replace("_", "-").replace(".", "-")] = version
    return pins


def normal(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def test_wheel_accepts_every_current_cpython() -> None:
    assert metadata()["Requires-Python"] == [">=3.11"]


def test_every_range_holds_the_locked_version() -> None:
    pins = lock()
    requirements = [Requirement(r) for r in metadata()["Requires-Dist"]]
    assert requirements
    for requirement in requirements:
        pinned = pins.get(normal(requirement.name))
        assert pinned, f"{requirement.name} is not in requirements/runtime.txt"
        assert requirement.specifier.contains(pinned), (str(requirement), pinned)
        assert "==" not in str(requirement.specifier), "the wheel takes ranges; the lock pins"


def third_party_imports() -> set[str]:
    found = set()
    for path in (ROOT / "kite_skills").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    # At the zipapp's root: shiv's bootstrap (the preamble takes its file lock; the start runs
    # it).
    inside = {"kite_skills", "skills_catalog", "_bootstrap"}
    return found - set(sys.stdlib_module_names) - inside


def test_every_package_kite_skills_imports_is_declared() -> None:
    declared = {normal(Requirement(r).name) for r in metadata()["Requires-Dist"]}
    owners = packages_distributions()
    for module in sorted(third_party_imports()):
        assert module in owners, f"kite_skills imports {module}, which nothing installs"
        assert {normal(d) for d in owners[module]} & declared, (
            f"kite_skills imports {module} ({owners[module]}): add it to pyproject's dependencies"
        )


def test_the_wheel_installs_from_the_wheelhouse_and_runs(tmp_path: Path) -> None:
    """What the README tells a person to do, on the newest CPython here."""
    wheelhouse = ROOT / ".build" / "wheels"
    assert any(wheelhouse.glob("mcp-*.whl")), f"{wheelhouse} is missing — run ./build.sh first"
    python = runnable()[-1]
    venv = tmp_path / "venv"
    subprocess.run([python.path, "-m", "venv", str(venv)], check=True, timeout=120)
    install = subprocess.run(
        [
            str(venv / "bin" / "pip"),
            "install",
            "--quiet",
            "--no-index",
            "--find-links",
            str(wheelhouse),
            str(WHEEL),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr
    page = subprocess.run(
        [str(venv / "bin" / "kite-skills"), "help", "/orders"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert page.returncode == 0, page.stderr
    assert "/orders/reconcile" in page.stdout
