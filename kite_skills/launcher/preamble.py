"""Runs inside the zipapp before shiv unpacks anything: on a start that finds this CPython's
files not yet unpacked (``start`` runs this module from the archive and calls ``main`` ahead of
shiv's bootstrap), and on every other start from the unpacked copy (``refuse_unfit``,
``prune_others``).

It answers, on one stderr line and exit 1 (stdout is the MCP wire), what this machine
needs when the file cannot run here: the Python versions the file accepts and where to get
one (:func:`where_to_get`), or, on another OS or architecture, which download to use
instead (the names tools/zipapps.py gives the files); and which directory must be
writable when shiv cannot unpack. On a first start it unpacks the archive itself, in shiv's
layout and under shiv's lock, leaving out the compiled binaries built for the other CPythons
(shiv's bootstrap then finds the work done). Then it keeps shiv's cache bounded: it holds a
shared lock on the extraction it uses and removes other, idle extractions of this program.

Standard library only: nothing from the bundle can be imported yet. The build's facts it
checks against come from ``build_info``.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only a type: run from the archive, this module imports nothing of ours
    from kite_skills.launcher.build_info import BuildInfo

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
# A member only one CPython uses: an extension module tagged with its version
# (x.cpython-312-darwin.so, x.cp312-win_amd64.pyd) or the Windows file's per-version tree.
PER_INTERPRETER = re.compile(
    r"site-packages/(?:_per_version/cp3(?P<tree>\d+)/.*"
    r"|.*\.(?:cpython-|cp)3(?P<tag>\d+)-[^/]*\.(?:so|pyd))"
)


def platform_for(os_name: str, machine: str) -> str | None:
    """The name of the file built for this OS and architecture, if there is one."""
    for name, (want_os, machines) in PLATFORMS.items():
        if os_name == want_os and machine.lower() in machines:
            return name
    return None


def _describe(os_name: str, machine: str) -> str:
    return f"{OS_NAMES.get(os_name, os_name)} {machine}"


def download_name(platform: str) -> str:
    """The file a person downloads for ``platform`` (a key of PLATFORMS), as
    tools/zipapps.py names it."""
    return f"kite-skills-{platform}.pyz"


def where_to_get(os_name: str, version: str) -> str:
    """Where a person gets a CPython ``version`` ("3.13") on ``os_name``: python.org, and
    Homebrew (not on Windows) and uv."""
    brew = "" if os_name == "win32" else f", Homebrew ('brew install python@{version}')"
    return f"python.org/downloads{brew} or uv ('uv python install {version}')"


def interpreter_problem(
    target: BuildInfo,
    implementation: str,
    version: tuple[int, int],
    os_name: str,
    machine: str,
    archive: str = "kite-skills.pyz",
) -> str | None:
    """The one-line message when this interpreter cannot run the file, or None when it can."""
    built = target.platform
    pythons = target.pythons
    accepted = target.accepted
    want_os, _ = PLATFORMS[built]
    here = platform_for(os_name, machine)
    if here != built:
        where = _describe(want_os, PLATFORMS[built][1][0])
        if here is None:
            advice = (
                f"no kite-skills file is built for {_describe(os_name, machine)}; install "
                "its wheel (kite_skills-…-py3-none-any.whl) with 'pipx install' or "
                "'uv tool install' instead"
            )
        else:
            advice = f"download {download_name(here)} instead (from the same place as this file)"
        return (
            f"kite-skills: {archive} is built for {where} ({accepted}), "
            f"but this is {_describe(os_name, machine)} — {advice}"
        )
    have = f"{version[0]}.{version[1]}"
    if implementation == "cpython" and have in pythons:
        return None
    suggested = "3.13" if "3.13" in pythons else pythons[-1]
    command = f"py -{suggested}" if os_name == "win32" else f"python{suggested}"
    return (
        f"kite-skills: {archive} runs on {accepted}, but it was started with "
        f"{_implementation_name() if implementation != 'cpython' else 'Python'} {have} "
        f"({sys.executable}) — start it with one of those, e.g. '{command} {archive}', and put "
        "that interpreter's full path as the command in your MCP client's config; none "
        f"installed? get CPython {suggested} from {where_to_get(os_name, suggested)}"
    )


def own_root_example() -> Path:
    """A folder to suggest for SHIV_ROOT: in the person's home, never the shared temporary
    folder (where another user could create it first). As in start.py."""
    local = os.environ.get("LOCALAPPDATA") if sys.platform == "win32" else None
    try:
        home = Path.home()
    except (RuntimeError, KeyError):  # no HOME and no password entry
        home = Path("~")
    return (Path(local) if local else home / ".cache") / "kite-skills-shiv"


def unwritable_problem(root: Path, unpacked: Path) -> str | None:
    """The one-line message when unpacking into ``root`` would fail, else None (also when
    the marker ``unpacked`` says this interpreter's files are all there). A missing ``root``
    is made, 0700."""
    if unpacked.is_file():
        return None  # already unpacked: nothing to write
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=root):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return (
            f"kite-skills: cannot unpack into {root} ({reason}) — that directory must be "
            "writable: set SHIV_ROOT to a writable directory of your own, e.g. "
            f'SHIV_ROOT={own_root_example()} (in an MCP client\'s config, under "env")'
        )
    return None


def interpreter_of(member: str) -> str | None:
    """The CPython a member of the archive is for ("cp312"), or None when all use it."""
    match = PER_INTERPRETER.fullmatch(member)
    if match is None:
        return None
    return f"cp3{match.group('tree') or match.group('tag')}"


def _write(archive: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path, partial: str) -> None:
    """Write one member to ``dest``; with a ``partial`` suffix, through a file of that name
    renamed into place, so that no process ever sees half of it (and a failed write removes
    it)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    written = dest.with_name(dest.name + partial)
    try:
        with archive.open(info) as source, open(written, "wb") as target:
            shutil.copyfileobj(source, target, 1 << 20)
        mode = info.external_attr >> 16
        if mode:
            os.chmod(written, mode)  # as shiv does: the permissions the file was built with
        if partial:
            os.replace(written, dest)
    except BaseException:
        if partial:
            Path(written).unlink(missing_ok=True)
        raise


def _write_all(
    archive: zipfile.ZipFile, members: list[zipfile.ZipInfo], under: Path, partial: str
) -> None:
    """Write ``members`` below ``under`` on a few threads, largest first: zlib and lzma
    inflate without holding the GIL, so the largest binary inflates on one core while the
    many small files are written on another. The first failure stops the rest."""
    from concurrent.futures import ThreadPoolExecutor

    ordered = sorted(members, key=lambda info: -info.file_size)
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [
            pool.submit(_write, archive, info, under / info.filename, partial) for info in ordered
        ]
        try:
            for future in futures:
                future.result()  # each result is None; this raises the first failure
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def _remove(path: Path) -> None:
    """Remove what is at ``path``: a link or a file itself (never what a link leads to), or a
    folder with everything in it."""
    if is_folder(path):
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def is_folder(path: Path) -> bool:
    """Whether ``path`` is a folder itself (not a link to one)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


class UnpackFailed(Exception):
    """Writing the unpacked copy failed (a full disk, a quota, a file size limit, …); what
    was written is removed. Its message is the one line a person sees."""


NO_ROOM = frozenset(
    getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EFBIG") if hasattr(errno, name)
)


def _failed(exc: OSError, extraction: Path, members: list[zipfile.ZipInfo]) -> UnpackFailed:
    reason = exc.strerror or type(exc).__name__
    root = extraction.parent
    if exc.errno in NO_ROOM:
        needed = sum(info.file_size for info in members) / 1e6
        advice = (
            f"it needs about {needed:.0f} MB there: free some space, or set SHIV_ROOT to a "
            f"folder of your own on a disk with room, e.g. SHIV_ROOT={own_root_example()}"
        )
    else:
        advice = (
            "that directory must be writable: set SHIV_ROOT to a writable directory of your "
            f"own, e.g. SHIV_ROOT={own_root_example()}"
        )
    return UnpackFailed(
        f"kite-skills: cannot unpack into {root} ({reason}) — {advice} "
        '(in an MCP client\'s config, under "env"); nothing half-written was left'
    )


def unpack(archive: zipfile.ZipFile, extraction: Path, tag: str, marker: str) -> None:
    """Unpack what CPython ``tag`` ("cp312") runs into ``extraction``, as shiv would.

    shiv's protocol: under its lock file ``.<name>_lock``, everything is written to
    ``<name>.tmp`` and renamed to ``<name>`` at the end, so an interrupted start leaves no
    tree that a later one uses; shiv's bootstrap unpacks only when ``<name>/site-packages``
    is missing. The binaries built for the other CPythons are left out (a third of the
    bytes). When another CPython unpacked this extraction first, this one's files are added
    beside the others, each renamed into place; the file ``marker`` in site-packages says
    they are all there, and is written last. Whatever else is at ``extraction`` (a file, a
    link, a folder without site-packages) is removed first, never followed. A failed write
    (a full disk) removes what it wrote and raises :class:`UnpackFailed`, and so does a folder
    where the lock file goes."""
    site_packages = extraction / "site-packages"
    if is_folder(extraction) and (site_packages / marker).exists():
        return
    lock = extraction.parent / f".{extraction.name}_lock"
    if lock.is_dir():  # shiv's lock cannot open it (and on Windows would wait for ever)
        raise UnpackFailed(
            f"kite-skills: cannot unpack into {extraction.parent} (a folder is where its lock "
            f"file goes) — remove the folder {lock}, or set SHIV_ROOT to a writable directory "
            f"of your own, e.g. SHIV_ROOT={own_root_example()} (in an MCP client's config, "
            'under "env")'
        )
    from _bootstrap.filelock import FileLock  # shiv's own lock, the one its bootstrap takes

    wanted = [
        info
        for info in archive.infolist()
        if info.filename.startswith("site-packages/")
        and not info.is_dir()
        and interpreter_of(info.filename) in (None, tag)
    ]
    extraction.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(lock):
        if is_folder(extraction) and (site_packages / marker).exists():
            return  # another process finished while this one waited for the lock
        if is_folder(extraction) and is_folder(site_packages):
            partial = f".{os.getpid()}.partial"
            missing = [i for i in wanted if not (extraction / i.filename).exists()]
            try:
                _write_all(archive, missing, extraction, partial)
            except OSError as exc:
                raise _failed(exc, extraction, missing) from exc
            (site_packages / marker).touch()
            return
        staging = extraction.parent / f"{extraction.name}.tmp"
        shutil.rmtree(staging, ignore_errors=True)  # what an interrupted start left
        try:
            staging.mkdir(mode=0o700)  # nobody else may write into what this start runs
            _write_all(archive, wanted, staging, "")
            (staging / "site-packages" / marker).touch()
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise _failed(exc, extraction, wanted) from exc
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        if os.path.lexists(extraction):
            _remove(extraction)  # something in the way that holds no extraction
        os.rename(staging, extraction)


def lzma_problem(archive: str) -> str | None:
    """The one-line message when this Python cannot unpack the archive's compiled binaries
    (stored with LZMA, see tools/zipapps.py), else None."""
    try:
        import lzma  # noqa: F401
    except ImportError:
        return (
            f"kite-skills: this Python ({sys.executable}) has no lzma module, which unpacking "
            f"{archive} needs — start it with a CPython that has one (python.org's, your OS's "
            "python3, Homebrew's and uv's all do; pyenv builds it once liblzma's headers are "
            "installed, e.g. Debian's liblzma-dev), and put that interpreter's full path as "
            "the command in your MCP client's config"
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


def hold(root: Path, extraction: Path) -> int | None:
    """Take a shared lock on ``extraction`` for this process's lifetime (None on Windows, or
    when ``root`` is missing). A start takes it before it unpacks, so no prune removes an
    extraction that a start is still filling. The lock's file descriptor is returned and never
    closed: the OS releases it when the process ends."""
    if sys.platform == "win32" or not root.is_dir():
        return None
    return _lock(root / f".{extraction.name}{IN_USE_SUFFIX}", shared=True)


def prune_others(root: Path, extraction: Path) -> None:
    """Remove every other extraction of this program in ``root`` that no running process
    holds (see :func:`hold`).

    Ours are directories ``<name>_<64 hex>`` holding ``site-packages/kite_skills`` with an
    in-use lock file beside them; nothing else in ``root`` is touched."""
    for entry in sorted(root.iterdir()):
        if entry.name == extraction.name or not EXTRACTION.fullmatch(entry.name):
            continue
        marker = root / f".{entry.name}{IN_USE_SUFFIX}"
        if not (entry / "site-packages" / "kite_skills").is_dir() or not marker.is_file():
            continue
        fd = _lock(marker, shared=False)
        if fd is None:
            continue  # another process uses it, or is filling it
        try:
            shutil.rmtree(entry, ignore_errors=True)
            shutil.rmtree(root / f"{entry.name}.tmp", ignore_errors=True)
            for leftover in (root / f".{entry.name}_lock", marker):
                leftover.unlink(missing_ok=True)
        finally:
            os.close(fd)


def hold_and_prune(root: Path, extraction: Path, prune: bool) -> int | None:
    """:func:`hold` ``extraction``, then (with ``prune``) :func:`prune_others`."""
    held = hold(root, extraction)
    if held is not None and prune:
        prune_others(root, extraction)
    return held


def _implementation_name() -> str:
    import platform

    return platform.python_implementation()


def machine() -> str:
    """What ``platform.machine()`` answers, without importing ``platform`` where ``os.uname``
    has it (every OS but Windows)."""
    if hasattr(os, "uname"):
        return os.uname().machine
    import platform

    return platform.machine()


def refuse_unfit(target: BuildInfo | None, archive: str) -> None:
    """Exit 1 with one stderr line when this interpreter or machine cannot run the file built
    for ``target`` (None: not a built file, nothing to check)."""
    if target is None:
        return
    message = interpreter_problem(
        target,
        sys.implementation.name,
        (sys.version_info[0], sys.version_info[1]),
        sys.platform,
        machine(),
        Path(archive).name,
    )
    if message:
        print(message, file=sys.stderr)  # noqa: T201
        sys.exit(1)


def main(
    target: BuildInfo | None,
    archive: str,
    environment: dict[str, Any],
    root: Path,
    extraction: Path,
    unpacked: Path,
    unsafe: Callable[[Path, Path], str | None] | None = None,
) -> None:
    """Check the interpreter and the cache directory (exit 1 with one line if unfit: also
    when ``unsafe`` finds that another user could write there), hold the extraction, unpack
    what this CPython runs unless the marker file ``unpacked`` is there, then prune the
    others."""
    refuse_unfit(target, archive)
    message = unwritable_problem(root, unpacked)
    if not message and unsafe is not None:
        message = unsafe(root, extraction)  # again now that root exists: who made it?
    if not message and not unpacked.is_file():
        message = lzma_problem(Path(archive).name)
    if message:
        print(message, file=sys.stderr)  # noqa: T201
        sys.exit(1)
    held = hold(root, extraction)  # before unpacking: a prune elsewhere leaves it alone
    force = os.environ.get("SHIV_FORCE_EXTRACT", environment.get("always_write_cache"))
    if str(force).lower() not in ("yes", "true", "t", "1"):  # shiv's reading of it
        with zipfile.ZipFile(archive) as zf:
            tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
            try:
                unpack(zf, extraction, tag, unpacked.name)
            except UnpackFailed as exc:
                print(exc, file=sys.stderr)  # noqa: T201
                sys.exit(1)
    else:  # shiv's bootstrap unpacks into <name>.tmp: made here, so that only we can write it
        staging = extraction.parent / f"{extraction.name}.tmp"
        staging.mkdir(mode=0o700, exist_ok=True)
        staging.chmod(0o700)
    if held is not None and os.environ.get(KEEP_CACHE) != "1":
        prune_others(root, extraction)
