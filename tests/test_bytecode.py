"""With PYTHONDONTWRITEBYTECODE=1 the zipapp's server still gets bytecode in its own shiv cache,
written once in the background, so later starts need not compile the MCP SDK again; on an OS
without os.nice (Windows) too, and a compiler that failed is tried again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kite_skills.launcher import build_info

from . import zipapp_guard

ROOT = Path(__file__).resolve().parents[1]


def _pyz() -> Path:
    zipapp_guard.require_mark("the built zipapp")
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
    (site,) = shiv_root.glob("kite-skills_*/site-packages")
    return site


@pytest.mark.zipapp
def test_bytecode_is_written_once_in_the_background_when_python_may_not(tmp_path: Path) -> None:
    site = _serve_once(tmp_path, PYTHONDONTWRITEBYTECODE="1")
    tag = sys.implementation.cache_tag
    wanted = [
        site / f".kite-skills-bytecode-server-{tag}",  # the compiler's done-marker, written last
        site / "mcp" / "server" / "lowlevel" / "__pycache__" / f"server.{tag}.pyc",
        # not loaded by this first start, but by every warm one (kite_skills/launcher/start.py)
        site / "kite_skills" / "launcher" / "__pycache__" / f"preamble.{tag}.pyc",
        site / "kite_skills" / "launcher" / "__pycache__" / f"build_info.{tag}.pyc",
        # loaded once the server runs (anyio's event loop), after its start-up imports
        site / "anyio" / "_backends" / "__pycache__" / f"_asyncio.{tag}.pyc",
    ]
    deadline = time.monotonic() + 120  # a detached, niced process: give it time, assert no speed
    while not all(path.is_file() for path in wanted) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [path for path in wanted if not path.is_file()] == []
    assert not list(site.glob("kite_skills/cli*.py[co]"))  # nothing outside __pycache__


@pytest.mark.zipapp
def test_the_sandbox_gets_bytecode_for_its_own_modules_after_the_server(tmp_path: Path) -> None:
    """The server's compiler covers what the server loads; the sandbox's simulation, which the
    server never loads, is compiled once the sandbox stops, or it would compile every start.
    Its bytecode is timestamp-checked, as the import system's, though SOURCE_DATE_EPOCH is
    set (py_compile's default then is hash-checked bytecode, whose source each start hashes)."""
    site = _serve_once(tmp_path, PYTHONDONTWRITEBYTECODE="1")
    tag = sys.implementation.cache_tag
    server_done = site / f".kite-skills-bytecode-server-{tag}"
    assert _eventually(server_done.is_file), "the server's compiler did not finish"
    simulation = site / "kite_skills" / "sandbox" / "sim" / "__pycache__" / f"engine.{tag}.pyc"
    assert not simulation.exists()
    subprocess.run(
        [sys.executable, str(_pyz()), "sandbox", "--journal", str(tmp_path / "j.jsonl")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=120,
        check=True,
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "SHIV_ROOT": str(tmp_path / "shiv"),
            "PYTHONDONTWRITEBYTECODE": "1",
            "SOURCE_DATE_EPOCH": "1",
        },
    )
    sandbox_done = site / f".kite-skills-bytecode-sandbox-{tag}"
    assert _eventually(lambda: sandbox_done.is_file() and simulation.is_file())
    assert simulation.read_bytes()[4:8] == b"\0\0\0\0"  # flags: checked by timestamp


@pytest.mark.zipapp
def test_nothing_extra_happens_when_python_writes_bytecode_itself(tmp_path: Path) -> None:
    site = _serve_once(tmp_path)
    assert not list(site.glob(".kite-skills-bytecode-*"))
    assert (site / "mcp" / "server" / "lowlevel" / "__pycache__").is_dir()


@pytest.mark.zipapp
def test_nothing_is_written_outside_a_shiv_cache(tmp_path: Path) -> None:
    """kite_skills imported from a checkout (PYTHONPATH) is not the zipapp's cache."""
    site = _serve_once(tmp_path, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=str(ROOT))
    assert not list(site.glob(".kite-skills-bytecode-*"))
    assert not list(ROOT.glob(".kite-skills-bytecode-*"))


# The background compiler without the zipapp: kite_skills copied into a site-packages folder,
# as the zipapp's cache holds it (with the build's facts beside the launcher).
WRITE_LATER = 'from kite_skills.launcher import bytecode\nbytecode.write_later("server")\n'


def _cache_with_kite_skills(tmp_path: Path) -> Path:
    site = tmp_path / "cache" / "site-packages"
    shutil.copytree(
        ROOT / "kite_skills", site / "kite_skills", ignore=shutil.ignore_patterns("__pycache__")
    )
    facts = build_info.BuildInfo("linux-x86_64", ("3.11", "3.12", "3.13", "3.14"), "0.1.0")
    (site / "kite_skills" / "launcher" / build_info.FILE).write_text(build_info.dumps(facts))
    return site


def _write_later(site: Path, *shadows: Path) -> None:
    """A server stopping with PYTHONDONTWRITEBYTECODE set (-B), ``shadows`` ahead on its path."""
    path = os.pathsep.join([*(str(s) for s in shadows), str(site)])
    subprocess.run(
        [sys.executable, "-B", "-c", WRITE_LATER],
        check=True,
        timeout=120,
        cwd=site.parent,  # -c puts the working directory first on sys.path: not the checkout
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": path},
    )


def _eventually(check: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + 120  # a detached, niced process: a bound, not a timing
    while not check() and time.monotonic() < deadline:
        time.sleep(0.1)
    return check()


def test_the_compiler_runs_where_the_os_has_no_nice(tmp_path: Path) -> None:
    """Windows has no os.nice: the compiler must not die on it (here it is taken away)."""
    site = _cache_with_kite_skills(tmp_path)
    no_nice = tmp_path / "no-nice"
    no_nice.mkdir()
    (no_nice / "sitecustomize.py").write_text("import os\ndel os.nice\n")
    _write_later(site, no_nice)
    tag = sys.implementation.cache_tag
    compiled = site / "kite_skills" / "launcher" / "__pycache__" / f"bytecode.{tag}.pyc"
    marker = site / f".kite-skills-bytecode-server-{tag}"
    assert _eventually(lambda: compiled.is_file() and marker.is_file()), "nothing was compiled"


def test_a_compiler_that_fails_leaves_no_marker_and_is_tried_again(tmp_path: Path) -> None:
    site = _cache_with_kite_skills(tmp_path)
    broken = tmp_path / "broken"
    broken.mkdir()
    started = tmp_path / "compiler-started"
    (broken / "py_compile.py").write_text(
        f"open({str(started)!r}, 'w').close()\nraise ImportError('a broken compiler')\n"
    )
    tag = sys.implementation.cache_tag
    marker = site / f".kite-skills-bytecode-server-{tag}"
    _write_later(site, broken)
    assert _eventually(started.is_file), "the compiler never started"
    assert not marker.exists(), "the done-marker was written though nothing was compiled"
    _write_later(site)  # the next server that stops tries again
    compiled = site / "kite_skills" / "launcher" / "__pycache__" / f"bytecode.{tag}.pyc"
    assert _eventually(lambda: compiled.is_file() and marker.is_file())
