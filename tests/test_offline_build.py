"""An air-gapped build: download a wheelhouse (every platform, every target CPython), then
build from it with no index at all.

The offline build runs in a copy of this tree in another folder, so it also proves that
the same sources give the same zipapp bytes (the sha256 that ./build.sh wrote). By default
it builds this machine's file; with KITE_SKILLS_SLOW=1 it builds every platform's file and
compares all of them (./build.sh test has built them all online): a few minutes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kite_skills.launcher.preamble import PLATFORMS

pytestmark = pytest.mark.zipapp  # ./build.sh --wheelhouse and the built dist/kite-skills.pyz

ROOT = Path(__file__).resolve().parents[1]
SLOW = os.environ.get("KITE_SKILLS_SLOW") == "1"


def tracked_files() -> list[str]:
    listing = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return [line for line in listing.stdout.splitlines() if (ROOT / line).is_file()]


def digest(directory: Path, name: str) -> str:
    return (directory / "dist" / f"{name}.sha256").read_text().split()[0]


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wheels = tmp_path_factory.mktemp("wheels")
    download = subprocess.run(
        [str(ROOT / "build.sh"), "--wheelhouse", str(wheels)],
        capture_output=True,
        text=True,
    )
    assert download.returncode == 0, download.stderr
    return wheels


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


def offline_build(wheelhouse: Path, copy: Path, platforms: list[str]) -> None:
    for relative in tracked_files():
        (copy / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / relative, copy / relative)
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "", "PIP_CONFIG_FILE": os.devnull}
    build = subprocess.run(
        [str(copy / "build.sh"), "--offline", str(wheelhouse), *platforms],
        capture_output=True,
        text=True,
        env=env,
    )
    assert build.returncode == 0, build.stderr


def test_offline_build_from_a_wheelhouse_gives_the_same_bytes(
    wheelhouse: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "elsewhere"
    host = (ROOT / "dist" / "kite-skills.pyz").resolve()
    offline_build(wheelhouse, copy, [] if SLOW else [next(iter(_host()))])
    assert digest(copy, "kite-skills.pyz") == digest(ROOT, "kite-skills.pyz")
    assert (copy / "dist" / "kite-skills.pyz").read_bytes() == host.read_bytes()
    if SLOW:  # ./build.sh --all in two folders, one of them offline: every file the same
        for name in PLATFORMS:
            pyz = f"kite-skills-{name}.pyz"
            assert digest(copy, pyz) == digest(ROOT, pyz), pyz


def _host() -> set[str]:
    import platform
    import sys

    from kite_skills.launcher.preamble import platform_for

    name = platform_for(sys.platform, platform.machine())
    assert name is not None
    return {name}
