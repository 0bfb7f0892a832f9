"""With PYTHONDONTWRITEBYTECODE=1 the zipapp's server still gets bytecode in its own shiv cache,
written once in the background, so later starts need not compile the MCP SDK again."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.zipapp

ROOT = Path(__file__).resolve().parents[1]


def _pyz() -> Path:
    path = Path(os.environ.get("KITE_SKILLS_PYZ", ROOT / "dist" / "kite-skills.pyz"))
    if not path.is_file():
        pytest.fail(f"{path} is missing — run ./build.sh first")
    return path


def _serve_once(tmp_path: Path, **env: str) -> Path:
    shiv_root = tmp_path / "shiv"
    subprocess.run(
        [sys.executable, str(_pyz())],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=True,
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "SHIV_ROOT": str(shiv_root),
            "KITE_SKILLS_DB": str(tmp_path / "s.db"),
            **env,
        },
    )
    (site,) = shiv_root.glob("kite-skills.pyz_*/site-packages")
    return site


def test_bytecode_is_written_once_in_the_background_when_python_may_not(tmp_path: Path) -> None:
    site = _serve_once(tmp_path, PYTHONDONTWRITEBYTECODE="1")
    tag = sys.implementation.cache_tag
    assert (site / f".kite-skills-bytecode-{tag}").is_file()
    wanted = [
        site / "mcp" / "server" / "lowlevel" / "__pycache__" / f"server.{tag}.pyc",
        # not loaded by this first start, but by every warm one (kite_skills/zipapp_start.py)
        site / "kite_skills" / "__pycache__" / f"preamble.{tag}.pyc",
        # loaded once the server runs (anyio's event loop), after its start-up imports
        site / "anyio" / "_backends" / "__pycache__" / f"_asyncio.{tag}.pyc",
    ]
    deadline = time.monotonic() + 120  # a detached, niced process: give it time, assert no speed
    while not all(path.is_file() for path in wanted) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [path for path in wanted if not path.is_file()] == []
    assert not list(site.glob("kite_skills/cli*.py[co]"))  # nothing outside __pycache__


def test_nothing_extra_happens_when_python_writes_bytecode_itself(tmp_path: Path) -> None:
    site = _serve_once(tmp_path)
    assert not list(site.glob(".kite-skills-bytecode-*"))
    assert (site / "mcp" / "server" / "lowlevel" / "__pycache__").is_dir()


def test_nothing_is_written_outside_a_shiv_cache(tmp_path: Path) -> None:
    """kite_skills imported from a checkout (PYTHONPATH) is not the zipapp's cache."""
    site = _serve_once(tmp_path, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=str(ROOT))
    assert not list(site.glob(".kite-skills-bytecode-*"))
    assert not list(ROOT.glob(".kite-skills-bytecode-*"))
