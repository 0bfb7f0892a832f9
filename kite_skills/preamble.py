"""Runs first inside the zipapp, before shiv unpacks anything (build.sh puts this file at
the archive's root and calls it from ``__main__.py`` ahead of shiv's bootstrap).

It answers, on one stderr line and exit 1 (stdout is the MCP wire), what this machine
needs when the file cannot run here: the Python versions the file accepts, or, on another
OS or architecture, which ``dist/`` file to use instead; and which directory must be
writable when shiv cannot unpack. Then it keeps shiv's cache bounded: it holds a shared
lock on the extraction it uses and removes other, idle extractions of this program.

Standard library only: nothing from the bundle can be imported yet.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

# build.sh replaces this line with the platform and interpreters the file was built for,
# e.g. {"platform": "linux-x86_64", "pythons": ["3.11", "3.12", "3.13", "3.14"]}.
TARGET: dict[str, Any] | None = None

# Every file build.sh makes: name -> (sys.platform, the platform.machine() values it fits).
PLATFORMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "linux-x86_64": ("linux", ("x86_64", "amd64")),
    "linux-aarch64": ("linux", ("aarch64", "arm64")),
    "macos-arm64": ("darwin", ("arm64", "aarch64")),
    "macos-x86_64": ("darwin", ("x86_64",)),
    "windows-amd64": ("win32", ("amd64", "x86_64")),
}
OS_NAMES = {"linux": "Linux", "darwin": "macOS", "win32": "Windows"}
KEEP_CACHE = "KITE_SKILLS_KEEP_CACHE"
EXTRACTION = re.compile(r"(?P<name>.+)_(?P<build_id>[0-9a-f]{64})")
IN_USE_SUFFIX = ".kite-skills-in-use"


def platform_for(os_name: str, machine: str) -> str | None:
    """The name of the file built for this OS and architecture, if there is one."""
    for name, (want_os, machines) in PLATFORMS.items():
        if os_name == want_os and machine.lower() in machines:
            return name
    return None


def _describe(os_name: str, machine: str) -> str:
    return f"{OS_NAMES.get(os_name, os_name)} {machine}"


def interpreter_problem(
    target: dict[str, Any],
    implementation: str,
    version: tuple[int, int],
    os_name: str,
    machine: str,
    archive: str = "kite-skills.pyz",
) -> str | None:
    """The one-line message when this interpreter cannot run the file, or None when it can."""
    built = target["platform"]
    pythons: list[str] = target["pythons"]
    accepted = (
        f"CPython {pythons[0]}–{pythons[-1]}" if len(pythons) > 1 else f"CPython {pythons[0]}"
    )
    want_os, _ = PLATFORMS[built]
    here = platform_for(os_name, machine)
    if here != built:
        where = _describe(want_os, PLATFORMS[built][1][0])
        if here is None:
            advice = (
                f"no kite-skills file is built for {_describe(os_name, machine)}; "
                "install the wheel with pipx instead (README: 'A command on PATH')"
            )
        else:
            advice = f"use dist/kite-skills-{here}.pyz instead"
        return (
            f"kite-skills: {archive} is built for {where} ({accepted}), "
            f"but this is {_describe(os_name, machine)} — {advice}"
        )
    have = f"{version[0]}.{version[1]}"
    if implementation == "cpython" and have in pythons:
        return None
    command = "py -3.13" if os_name == "win32" else "python3.13"
    return (
        f"kite-skills: {archive} runs on {accepted}, but it was started with "
        f"{platform.python_implementation() if implementation != 'cpython' else 'Python'} {have} "
        f"({sys.executable}) — start it with one of those, e.g. '{command} {archive}', and put "
        "that interpreter's full path as the command in your MCP client's config"
    )


def shiv_root(environment: dict[str, Any], environ: dict[str, str] | os._Environ[str]) -> Path:
    """Where shiv unpacks, computed as shiv's bootstrap does."""
    root = environ.get("SHIV_ROOT") or environment.get("root")
    if root:
        if root.startswith("$"):
            root = environ.get(root[1:], root[1:])
        return Path(root).expanduser()
    return Path("~/.shiv").expanduser()


def unwritable_problem(root: Path, extraction: Path) -> str | None:
    """The one-line message when shiv would fail to unpack into ``root``, else None."""
    if (extraction / "site-packages").is_dir():
        return None  # already unpacked: shiv needs no write
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=root):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        example = Path(tempfile.gettempdir()) / "kite-skills-shiv"
        return (
            f"kite-skills: cannot unpack into {root} ({reason}) — that directory must be "
            f"writable: set SHIV_ROOT to a writable directory, e.g. SHIV_ROOT={example} "
            '(in an MCP client\'s config, under "env")'
        )
    return None


def _lock(path: Path, shared: bool) -> int | None:
    """A lock on ``path`` (created if missing), or None when it cannot be had now.

    Shared locks wait; exclusive ones do not. The file is re-checked after locking, so a
    lock on a file that a pruner unlinked meanwhile is never mistaken for a live one."""
    import fcntl

    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except OSError:
            same = False
        if same:
            return fd
        os.close(fd)
        if not shared:
            return None


def hold_and_prune(root: Path, extraction: Path, prune: bool) -> int | None:
    """Take a shared lock on ``extraction`` for this process's lifetime, then remove every
    other extraction of this program in ``root`` that no running process holds.

    Ours are directories ``<name>_<64 hex>`` holding ``site-packages/kite_skills`` with an
    in-use lock file beside them; nothing else in ``root`` is touched. The lock's file
    descriptor is returned and never closed: the OS releases it when the process ends."""
    if sys.platform == "win32" or not root.is_dir():
        return None
    held = _lock(root / f".{extraction.name}{IN_USE_SUFFIX}", shared=True)
    if held is None or not prune:
        return held
    for entry in sorted(root.iterdir()):
        if entry.name == extraction.name or not EXTRACTION.fullmatch(entry.name):
            continue
        marker = root / f".{entry.name}{IN_USE_SUFFIX}"
        if not (entry / "site-packages" / "kite_skills").is_dir() or not marker.is_file():
            continue
        fd = _lock(marker, shared=False)
        if fd is None:
            continue  # another process uses it
        try:
            shutil.rmtree(entry, ignore_errors=True)
            shutil.rmtree(root / f"{entry.name}.tmp", ignore_errors=True)
            for leftover in (root / f".{entry.name}_lock", marker):
                leftover.unlink(missing_ok=True)
        finally:
            os.close(fd)
    return held


def main() -> None:
    """Check the interpreter and the cache directory; exit 1 with one line if unfit."""
    archive = sys.argv[0]
    target = TARGET
    if target is not None:
        message = interpreter_problem(
            target,
            sys.implementation.name,
            (sys.version_info[0], sys.version_info[1]),
            sys.platform,
            platform.machine(),
            Path(archive).name,
        )
        if message:
            print(message, file=sys.stderr)  # noqa: T201
            sys.exit(1)
    with zipfile.ZipFile(archive) as zf:
        environment = json.loads(zf.read("environment.json"))
    root = shiv_root(environment, os.environ)
    extraction = root / f"{Path(archive).resolve().name}_{environment['build_id']}"
    message = unwritable_problem(root, extraction)
    if message:
        print(message, file=sys.stderr)  # noqa: T201
        sys.exit(1)
    held = hold_and_prune(root, extraction, prune=os.environ.get(KEEP_CACHE) != "1")
    if held is not None:
        _HELD.append(held)


_HELD: list[int] = []  # the in-use lock, open until the process ends
