"""The built zipapp as a user meets it: from another directory with a private SHIV_ROOT,
its version and its checksums (other interpreters and platforms: test_zipapps.py).
Start-up time is measured by bench/startup.py, never asserted here.

Nothing here rebuilds: ./build.sh builds once and passes KITE_SKILLS_PYZ."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from kite_skills import __version__

from .server.harness import server_env, zipapp

pytestmark = pytest.mark.zipapp


@pytest.fixture(scope="module")
def shiv_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Its own, not the suite's (tests/conftest.py): the first test proves the file unpacks
    into an empty private SHIV_ROOT."""
    return tmp_path_factory.mktemp("shiv")


def run_zipapp(
    args: list[str], shiv_root: Path, cwd: Path, python: str = sys.executable
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, str(zipapp()), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=server_env(shiv_root, cwd / "skills.db"),
        timeout=60,
    )


def test_help_from_another_directory(shiv_root: Path, tmp_path: Path) -> None:
    run = run_zipapp(["help", "/orders"], shiv_root, tmp_path)
    assert run.returncode == 0, run.stderr
    assert "/orders/reconcile" in run.stdout and "/orders/prepare" in run.stdout
    assert any(shiv_root.iterdir()), "the zipapp did not extract into the private SHIV_ROOT"
    assert "Traceback" not in run.stderr


def test_version(shiv_root: Path, tmp_path: Path) -> None:
    run = run_zipapp(["--version"], shiv_root, tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"kite-skills {__version__}"


def test_checksum_files_match() -> None:
    files = [zipapp(), *zipapp().parent.glob("kite-skills-*.pyz")]
    assert len(files) == 6  # the host's under its old name, and one per platform
    for pyz in files:
        line = (pyz.parent / (pyz.name + ".sha256")).read_text()
        digest, name = line.split()
        assert name == pyz.name
        assert digest == hashlib.sha256(pyz.read_bytes()).hexdigest()
