"""shiv's cache with the real zipapp: an unusable cache directory is one line, and old
extractions of this program go away once nothing runs them (two builds at once)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .server.harness import RawPeer, server_env, zipapp

pytestmark = pytest.mark.zipapp


def version(pyz: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(pyz), "--version"], capture_output=True, text=True, env=env, timeout=60
    )


def assert_one_line_about(result: subprocess.CompletedProcess[str], root: Path) -> None:
    assert result.returncode == 1
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()  # not shiv's traceback
    assert line.startswith(f"kite-skills: cannot unpack into {root} ("), line
    assert "that directory must be writable: set SHIV_ROOT to a writable directory" in line


def test_unwritable_shiv_root_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    root = blocker / "shiv"
    assert_one_line_about(version(zipapp(), server_env(root, tmp_path / "s.db")), root)


def test_unwritable_home_without_shiv_root_is_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home-is-a-file"
    home.write_text("")
    env = server_env(tmp_path, tmp_path / "s.db")
    del env["SHIV_ROOT"]
    env["HOME"] = str(home)
    assert_one_line_about(version(zipapp(), env), home / ".shiv")


def another_build(source: Path, target: Path) -> str:
    """The same program with another build id: to shiv's cache, a different build."""
    target.parent.mkdir(parents=True)
    data = source.read_bytes()
    start = data.index(b"PK\x03\x04")
    with zipfile.ZipFile(source) as old, target.open("wb") as fd:
        fd.write(data[:start])
        with zipfile.ZipFile(fd, "w") as new:
            for info in old.infolist():
                body = old.read(info)
                if info.filename == "environment.json":
                    environment = json.loads(body)
                    environment["build_id"] = "0" * 63 + "1"
                    body = json.dumps(environment).encode()
                new.writestr(info, body)
    return "0" * 63 + "1"


def build_id(pyz: Path) -> str:
    with zipfile.ZipFile(pyz) as archive:
        return str(json.loads(archive.read("environment.json"))["build_id"])


def serving(pyz: Path, root: Path, db: Path) -> RawPeer:
    peer = RawPeer(pyz, root, db)
    assert peer.initialize({})["result"]["serverInfo"]["name"]
    return peer


def test_two_builds_running_keep_their_extractions_then_the_old_one_goes(
    tmp_path: Path,
) -> None:
    root = tmp_path / "shiv"
    new = tmp_path / "new" / "kite-skills.pyz"
    new.parent.mkdir()
    new.write_bytes(zipapp().read_bytes())
    old = tmp_path / "old" / "kite-skills.pyz"
    old_dir = root / f"kite-skills.pyz_{another_build(zipapp(), old)}"
    new_dir = root / f"kite-skills.pyz_{build_id(new)}"
    foreign = root / ("other.pyz_" + "9" * 64) / "site-packages"
    foreign.mkdir(parents=True)

    first = serving(old, root, tmp_path / "a.db")
    second = serving(new, root, tmp_path / "b.db")
    try:
        assert old_dir.is_dir() and new_dir.is_dir(), "the second start removed a running build"
    finally:
        for peer in (first, second):
            code, err = peer.close()
            assert code == 0, err
    assert old_dir.is_dir() and new_dir.is_dir()

    kept = server_env(root, tmp_path / "s.db", KITE_SKILLS_KEEP_CACHE="1")
    assert version(new, kept).returncode == 0
    assert old_dir.is_dir(), "KITE_SKILLS_KEEP_CACHE=1 removed an extraction"

    assert version(new, server_env(root, tmp_path / "s.db")).returncode == 0
    assert not old_dir.exists(), "the third start left the old build's extraction"
    assert new_dir.is_dir() and foreign.is_dir()
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == sorted(
        [new_dir.name, foreign.parent.name]
    )
