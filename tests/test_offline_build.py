"""An air-gapped build: download a wheelhouse, then build from it with no index at all.

The offline build runs in a copy of this tree in another folder, so it also proves that
the same sources give the same zipapp bytes (the sha256 that ./build.sh wrote).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tracked_files() -> list[str]:
    listing = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return [line for line in listing.stdout.splitlines() if (ROOT / line).is_file()]


def test_offline_build_from_a_wheelhouse_gives_the_same_bytes(tmp_path: Path) -> None:
    wheelhouse = tmp_path / "wheels"
    download = subprocess.run(
        [str(ROOT / "build.sh"), "--wheelhouse", str(wheelhouse)],
        capture_output=True,
        text=True,
    )
    assert download.returncode == 0, download.stderr
    assert any(p.name.startswith("mcp-2.3.0") for p in wheelhouse.iterdir())

    copy = tmp_path / "elsewhere"
    for relative in tracked_files():
        (copy / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / relative, copy / relative)
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "", "PIP_CONFIG_FILE": os.devnull}
    build = subprocess.run(
        [str(copy / "build.sh"), "--offline", str(wheelhouse)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert build.returncode == 0, build.stderr
    ours = (ROOT / "dist" / "kite-skills.pyz.sha256").read_text().split()[0]
    theirs = (copy / "dist" / "kite-skills.pyz.sha256").read_text().split()[0]
    assert theirs == ours
