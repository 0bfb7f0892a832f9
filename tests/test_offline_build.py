"""An air-gapped build: a wheelhouse (every platform, every target CPython), then a build from
it with no index at all.

``./build.sh --wheelhouse`` copies the wheels from the build's own cache (.build/wheels),
downloading only what it lacks: the download from the index is the build's (./build.sh test
builds every platform's file first, from a fresh clone's empty cache). The offline build sees
only the new folder, so a wheel missing from it fails the build.

The offline build runs in a copy of this tree in another folder, so it also proves that
the same sources give the same zipapp bytes (the sha256 that ./build.sh wrote). By default
it builds this machine's file; with KITE_SKILLS_SLOW=1 it builds every platform's file and
compares all of them (./build.sh test has built them all online): a few minutes. The build
is the suite's one rebuild (tests/rebuild.py), which tests/test_release.py reads as well.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from kite_skills.launcher.preamble import PLATFORMS

from .rebuild import SLOW, Rebuild, offline_build

pytestmark = pytest.mark.zipapp  # ./build.sh --wheelhouse and the built dist/kite-skills.pyz

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".build" / "wheels"


def pins(*files: str) -> set[tuple[str, str]]:
    """(normalized name, version) of every pin in requirements/FILES."""
    found = set()
    for name in files:
        for line in (ROOT / "requirements" / name).read_text().splitlines():
            pin = line.split("#")[0].split(";")[0].strip()
            if pin:
                project, version = pin.split("==")
                found.add((re.sub(r"[-_.]+", "_", project).lower(), version))
    return found


def pinned(wheel: str) -> tuple[str, str]:
    project, version = wheel.split("-")[:2]
    return re.sub(r"[-_.]+", "_", project).lower(), version


def digest(dist: Path, name: str) -> str:
    return (dist / f"{name}.sha256").read_text().split()[0]


def test_the_wheelhouse_holds_every_platforms_binaries(wheelhouse: Path) -> None:
    names = [p.name for p in wheelhouse.iterdir()]
    assert any(n.startswith("mcp-2.3.0") for n in names)
    for tag in ("manylinux", "macosx", "win_amd64"):
        for python in ("cp311", "cp312", "cp313", "cp314"):
            assert any(
                n.startswith("pydantic_core-") and f"-{python}-" in n and tag in n for n in names
            )
    assert any("aarch64" in n for n in names) and any("arm64" in n for n in names)
    assert any(n.startswith("pywin32-") for n in names)


def test_the_wheelhouse_holds_the_build_tools_and_only_pinned_versions(wheelhouse: Path) -> None:
    """What the offline build's venv installs (requirements/build.txt: pip, setuptools, shiv,
    installer, packaging) is there, and nothing of a version the lock does not pin (the
    build's cache keeps what older locks fetched)."""
    held = {pinned(p.name) for p in wheelhouse.iterdir()}
    assert all(p.name.endswith(".whl") for p in wheelhouse.iterdir())
    assert pins("build.txt") <= held
    assert held == pins("runtime.txt", "build.txt")


def export(cache: Path, into: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "zipapps.py"), "export", str(cache), str(into)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_cache_that_lost_a_pinned_wheel_gives_no_wheelhouse(tmp_path: Path) -> None:
    """``--wheelhouse`` copies from .build/wheels: a wheel missing there (deleted after it was
    fetched) stops it, naming the pin, instead of leaving a wheelhouse that fails later on
    the machine with no network. A wheel of a version no longer pinned is left behind."""
    wheels = sorted(CACHE.glob("*.whl"))
    if not any(w.name.startswith("pydantic_core-") for w in wheels):
        pytest.fail(f"{CACHE} has no pydantic_core wheels — run ./build.sh --all first")
    cache = tmp_path / "cache"
    cache.mkdir()
    for wheel in wheels:
        (cache / wheel.name).symlink_to(wheel)
    stale = "mcp-0.9.0-py3-none-any.whl"
    (cache / stale).write_bytes(b"")
    whole = export(cache, tmp_path / "whole")
    assert whole.returncode == 0, whole.stderr
    assert not (tmp_path / "whole" / stale).exists()
    assert {pinned(p.name) for p in (tmp_path / "whole").iterdir()} == pins(
        "runtime.txt", "build.txt"
    )
    for wheel in cache.glob("pydantic_core-*.whl"):
        wheel.unlink()
    broken = export(cache, tmp_path / "broken")
    assert broken.returncode == 1
    assert "has no wheel of pydantic_core==" in broken.stderr, broken.stderr


def test_a_wheelhouse_without_a_build_tool_stops_the_build_saying_to_make_it_again(
    wheelhouse: Path, tmp_path: Path
) -> None:
    """A wheelhouse made by an older commit lacks a tool this one pins (installer came in
    after the first wheelhouses): the offline build stops at its venv and says what to do."""
    older = tmp_path / "wheels"
    older.mkdir()
    for wheel in wheelhouse.iterdir():
        if not wheel.name.startswith("installer-"):
            (older / wheel.name).symlink_to(wheel)
    result = offline_build(older, tmp_path / "checkout")
    assert result.returncode == 1
    assert "No matching distribution found for installer==" in result.stderr, result.stderr
    last = result.stderr.splitlines()[-1]
    assert last.startswith("build.sh: pip could not install the build tools into "), last
    assert last.endswith("(requirements/build.txt): make it again"), last
    assert not (tmp_path / "checkout" / "dist").exists()


def test_offline_build_from_a_wheelhouse_gives_the_same_bytes(offline_rebuild: Rebuild) -> None:
    host = (ROOT / "dist" / "kite-skills.pyz").resolve()
    copy = offline_rebuild.dist
    assert digest(copy, "kite-skills.pyz") == digest(ROOT / "dist", "kite-skills.pyz")
    assert (copy / "kite-skills.pyz").read_bytes() == host.read_bytes()
    if SLOW:  # ./build.sh --all in two folders, one of them offline: every file the same
        for name in PLATFORMS:
            pyz = f"kite-skills-{name}.pyz"
            assert digest(copy, pyz) == digest(ROOT / "dist", pyz), pyz
