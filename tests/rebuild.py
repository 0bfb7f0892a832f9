"""The one rebuild the suite makes (tests/test_offline_build.py and tests/test_release.py share
it through the session fixtures ``wheelhouse`` and ``offline_rebuild`` in tests/conftest.py):
``./build.sh --wheelhouse`` into a new folder, then ``./build.sh --offline`` from it in a copy
of this tree in another folder, a checkout as one made under umask 002 at another time would
be, with another time zone and SOURCE_DATE_EPOCH and no package index. The tests compare its
bytes with the suite's own build in dist/.

``--wheelhouse`` copies the wheels from the build's cache .build/wheels, downloading first
only what the cache lacks: under ./build.sh test the build before pytest has just filled it
from the index, so the online download is exercised there, once, and not repeated here. The
offline build reads nothing but the new folder, so it still fails if the copy lacks a wheel
it needs.

This machine's file is built; with ``KITE_SKILLS_SLOW=1`` every platform's (a few minutes).
Under pytest-xdist the workers share it (:func:`once`): the first to ask makes it, under a
file lock in the run's temporary folder, and the others wait for it and read it."""

from __future__ import annotations

import fcntl
import json
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kite_skills.launcher.preamble import platform_for

ROOT = Path(__file__).resolve().parents[1]
SLOW = os.environ.get("KITE_SKILLS_SLOW") == "1"
CHECKOUT_UMASK = 0o002
CHECKOUT_TIME = 1_700_000_000.0


@dataclass(frozen=True)
class Outcome:
    """How a command ran: its exit code and the end of its stderr."""

    returncode: int
    stderr: str


@dataclass(frozen=True)
class Rebuild:
    """What ``./build.sh --offline`` made in ``checkout`` (its ``dist/``), and how it ran."""

    checkout: Path
    outcome: Outcome

    @property
    def dist(self) -> Path:
        return self.checkout / "dist"


def shared_folder(tmp_path_factory: object) -> Path:
    """The run's temporary folder every xdist worker sees (each has its own below it)."""
    base: Path = tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once(
    shared: Path, name: str, make: Callable[[Path], subprocess.CompletedProcess[str]]
) -> tuple[Path, Outcome]:
    """``make(shared/name)`` run once for every worker of this run: the first to ask runs it
    under a lock, the others wait and get its folder and outcome."""
    folder = shared / name
    record = shared / f"{name}.json"
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not record.exists():
            folder.mkdir(parents=True, exist_ok=True)
            done = make(folder)
            record.write_text(json.dumps([done.returncode, done.stderr[-3000:]]))
        code, stderr = json.loads(record.read_text())
    return folder, Outcome(code, stderr)


def host() -> str:
    name = platform_for(sys.platform, platform.machine())
    assert name is not None, f"no zipapp is built for {sys.platform} {platform.machine()}"
    return name


def download_wheelhouse(wheels: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROOT / "build.sh"), "--wheelhouse", str(wheels)],
        capture_output=True,
        text=True,
        timeout=1800,
    )


def copy_tree(destination: Path, umask: int, mtime: float) -> None:
    """This tree's files (tracked or new, not ignored) as a checkout under ``umask`` made at
    ``mtime`` would have them."""
    listing = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    for relative in listing.stdout.splitlines():
        source = ROOT / relative
        if not source.is_file():
            continue
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        executable = source.stat().st_mode & 0o111
        target.chmod((0o777 if executable else 0o666) & ~umask)
        os.utime(target, (mtime, mtime))


def offline_build(wheelhouse: Path, checkout: Path) -> subprocess.CompletedProcess[str]:
    """Copy this tree to ``checkout`` and build it there from ``wheelhouse`` alone."""
    copy_tree(checkout, CHECKOUT_UMASK, CHECKOUT_TIME)
    platforms = [] if SLOW else [host()]
    env = {
        **os.environ,
        "TZ": "Asia/Kolkata",
        "SOURCE_DATE_EPOCH": "1",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": "",
        "PIP_CONFIG_FILE": os.devnull,
    }
    return subprocess.run(
        ["bash", "-c", 'umask 002 && exec ./build.sh --offline "$@"', "-", wheelhouse, *platforms],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
