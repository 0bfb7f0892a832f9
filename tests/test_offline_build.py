"""An air-gapped build: download a wheelhouse (every platform, every target CPython), then
build from it with no index at all.

The offline build runs in a copy of this tree in another folder, so it also proves that
the same sources give the same zipapp bytes (the sha256 that ./build.sh wrote). By default
it builds this machine's file; with KITE_SKILLS_SLOW=1 it builds every platform's file and
compares all of them (./build.sh test has built them all online): a few minutes. The build
is the suite's one rebuild (tests/rebuild.py), which tests/test_release.py reads as well.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kite_skills.launcher.preamble import PLATFORMS

from .rebuild import SLOW, Rebuild

pytestmark = pytest.mark.zipapp  # ./build.sh --wheelhouse and the built dist/kite-skills.pyz

ROOT = Path(__file__).resolve().parents[1]


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


def test_offline_build_from_a_wheelhouse_gives_the_same_bytes(offline_rebuild: Rebuild) -> None:
    host = (ROOT / "dist" / "kite-skills.pyz").resolve()
    copy = offline_rebuild.dist
    assert digest(copy, "kite-skills.pyz") == digest(ROOT / "dist", "kite-skills.pyz")
    assert (copy / "kite-skills.pyz").read_bytes() == host.read_bytes()
    if SLOW:  # ./build.sh --all in two folders, one of them offline: every file the same
        for name in PLATFORMS:
            pyz = f"kite-skills-{name}.pyz"
            assert digest(copy, pyz) == digest(ROOT / "dist", pyz), pyz
