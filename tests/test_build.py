"""The built zipapp as a user meets it: from another directory with a private SHIV_ROOT,
its version, the wrong-interpreter preamble and its checksum. Start-up time is measured by
bench/startup.py, never asserted here.

Nothing here rebuilds: ./build.sh builds once and passes KITE_SKILLS_PYZ."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from kite_skills import __version__
from kite_skills.preamble import interpreter_problem

from .server.harness import server_env, zipapp

pytestmark = pytest.mark.zipapp

PYTHON312 = Path("/root/.pyenv/versions/3.12.1/bin/python3.12")


@pytest.fixture(scope="module")
def shiv_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
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


def test_checksum_file_matches() -> None:
    pyz = zipapp()
    line = (pyz.parent / (pyz.name + ".sha256")).read_text()
    digest, name = line.split()
    assert name == pyz.name
    assert digest == hashlib.sha256(pyz.read_bytes()).hexdigest()


def test_interpreter_problem() -> None:
    built = ("3.11", "linux", "x86_64")
    assert interpreter_problem(built, (3, 11), "linux", "x86_64") is None
    for version, os_name, machine, have in [
        ((3, 12), "linux", "x86_64", "Python 3.12 on linux x86_64"),
        ((3, 10), "linux", "x86_64", "Python 3.10"),
        ((3, 11), "darwin", "x86_64", "on darwin"),
        ((3, 11), "linux", "aarch64", "aarch64"),
    ]:
        message = interpreter_problem(built, version, os_name, machine)
        assert message is not None
        assert "\n" not in message
        assert message.startswith("kite-skills: this zipapp needs CPython 3.11 on linux x86_64")
        assert have in message
        assert "python3.11 kite-skills.pyz" in message and "./build.sh" in message


@pytest.mark.skipif(not PYTHON312.exists(), reason=f"{PYTHON312} is not on this machine")
def test_wrong_interpreter_gets_one_line(tmp_path: Path) -> None:
    run = run_zipapp(["--version"], tmp_path / "shiv", tmp_path, python=str(PYTHON312))
    assert run.returncode == 1
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert "CPython 3.11" in lines[0] and "Python 3.12" in lines[0]
    assert "Traceback" not in run.stderr
