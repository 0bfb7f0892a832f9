"""The zipapp tests refuse a zipapp built from other sources than this tree (issue 9 §5):
after an edit without ./build.sh they would otherwise pass while testing old code."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from .server import harness
from .server.harness import PACKAGED, ROOT, stale_sources


def _tree_files() -> list[Path]:
    return [
        f
        for top in PACKAGED
        for f in sorted((ROOT / top).rglob("*"))
        if f.is_file() and "__pycache__" not in f.parts
    ]


def _zipapp(path: Path, skip: str = "", change: str = "", extra: str = "") -> Path:
    """A zip laid out like the shiv zipapp, holding this tree's package files."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("__main__.py", "")
        for file in _tree_files():
            rel = file.relative_to(ROOT).as_posix()
            if rel == skip:
                continue
            data = file.read_bytes() + (b"\n# edited\n" if rel == change else b"")
            archive.writestr(f"site-packages/{rel}", data)
        if extra:
            archive.writestr(f"site-packages/{extra}", "gone = True\n")
    return path


def test_a_zipapp_of_this_tree_is_fresh(tmp_path: Path) -> None:
    assert stale_sources(_zipapp(tmp_path / "same.pyz")) == []


def test_every_kind_of_difference_is_found(tmp_path: Path) -> None:
    pyz = _zipapp(
        tmp_path / "old.pyz",
        skip="kite_skills/store/_failures.py",
        change="kite_skills/server/app.py",
        extra="kite_skills/server/retired.py",
    )
    assert stale_sources(pyz) == [
        "kite_skills/server/app.py changed",
        "kite_skills/store/_failures.py is new",
        "kite_skills/server/retired.py was removed",
    ]


def test_the_zipapp_tests_refuse_a_stale_zipapp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pyz = _zipapp(tmp_path / "stale.pyz", change="skills_catalog/index.md")
    monkeypatch.setenv("KITE_SKILLS_PYZ", str(pyz))
    with pytest.raises(pytest.fail.Exception) as info:
        harness.checked_zipapp()
    assert str(info.value) == (
        f"{pyz} was not built from the sources in this tree (skills_catalog/index.md "
        "changed) — run ./build.sh to rebuild it; the zipapp tests would otherwise test old "
        "code"
    )


def test_a_test_not_marked_zipapp_that_asks_for_the_build_fails(
    request: pytest.FixtureRequest,
) -> None:
    """``pytest -m "not zipapp"`` must run without a build: asking for it unmarked fails."""
    with pytest.raises(pytest.fail.Exception) as info:
        harness.zipapp()
    assert str(info.value).startswith(
        f"{request.node.nodeid} uses the built zipapp but lacks @pytest.mark.zipapp"
    )
