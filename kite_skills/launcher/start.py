"""The zipapp's start (``first`` runs it from the archive, as ``kite_skills.launcher.start``,
once the Python can read it).

Most starts find this CPython's files unpacked already. Those do here what shiv's bootstrap
would (this file's site-packages on sys.path, its ``.pth`` files read, the entry point run),
without reading the archive's index a second and third time (zipimport has it: this module
came from it) and without compiling the preamble and shiv's bootstrap from the archive, where
no bytecode can be cached; the preamble's checks run from the unpacked copy, whose bytecode
is. About 20 ms of a warm start. Every other start, and any SHIV_* setting but SHIV_ROOT,
goes the long way: the preamble, run from the archive, checks the machine and unpacks, then
shiv's bootstrap runs.

Standard library only: nothing from the bundle can be imported before site-packages is found.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
import zipimport
from collections.abc import Callable, Mapping
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only for mypy: Python 3.7 and 3.8, told which to use, cannot subscript it
    Loader = Callable[[zipimport.zipimporter, str], ModuleType]
    """``first.load``: a launcher module run from the archive under its own name."""
# In site-packages: every file this CPython ("cp312") uses is there.
UNPACKED = ".kite-skills-unpacked-{tag}"
PROGRAM = "kite-skills"  # extractions are <PROGRAM>_<build id>
IN_USE_SUFFIX = ".kite-skills-in-use"  # as preamble.py's
SITE_DIRECTORIES = ("site-packages", "dist-packages")


def shiv_root(environment: Mapping[str, Any], environ: Mapping[str, str]) -> Path:
    """Where shiv unpacks, computed as shiv's bootstrap does."""
    root = environ.get("SHIV_ROOT") or environment.get("root")
    if root:
        if root.startswith("$"):
            root = environ.get(root[1:], root[1:])
        return Path(root).expanduser()
    return Path("~/.shiv").expanduser()


def extraction_of(archive: str, environment: Mapping[str, Any], root: Path) -> Path:
    """The directory this archive is unpacked into, below ``root``: named for its build id
    (a hash of its content), not for the file's name as shiv's own would be, so that the same
    bytes under two names (kite-skills.pyz, kite-skills-linux-x86_64.pyz) share one
    extraction instead of removing each other's on alternate starts."""
    return root / f"{PROGRAM}_{environment['build_id']}"


def own_root_example() -> Path:
    """A folder to suggest for SHIV_ROOT: in the person's home, never the shared temporary
    folder (where another user could create it first)."""
    local = os.environ.get("LOCALAPPDATA") if sys.platform == "win32" else None
    try:
        home = Path.home()
    except (RuntimeError, KeyError):  # no HOME and no password entry
        home = Path("~")
    return (Path(local) if local else home / ".cache") / "kite-skills-shiv"


def _foreign(path: Path, st: os.stat_result, me: int, *, above: bool) -> str | None:
    """Why another user could change what is in ``path``, or None when nobody else can.

    ``path`` itself must be writable by nobody else; a folder ``above`` it only by nobody
    outside its group (many systems give each user a group of their own, and make home
    folders group-writable) or be sticky, as /tmp is: then nobody may rename what is in it."""
    if st.st_uid not in (me, 0):  # root can change anything anyway
        return f"is owned by another user (uid {st.st_uid})"
    writable = st.st_mode & (0o002 if above else 0o022)
    if writable and not (above and st.st_mode & stat.S_ISVTX):
        return f"can be written by other users (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def unsafe_problem(root: Path, extraction: Path) -> str | None:
    """The one-line message when another user could have put code into the cache that this
    start would run, else None (POSIX; on Windows the profile's folders are the user's).

    ``root`` and every folder above it must belong to this user (or root) and be writable by
    nobody else (see :func:`_foreign` for the folders above), and no symbolic link on the way
    may be another user's; an ``extraction`` that is there
    must be a folder of this user's that nobody else can write. What does not exist yet is
    made by this start, 0700."""
    if not hasattr(os, "getuid"):
        return None
    me = os.getuid()
    given = Path(os.path.abspath(root))
    for part in (given, *given.parents):  # a link its owner could point elsewhere later
        try:
            st = os.lstat(part)
        except OSError:
            continue
        if stat.S_ISLNK(st.st_mode) and st.st_uid not in (me, 0):
            return (
                f"kite-skills: the cache folder {root} goes through {part}, a symbolic link "
                f"another user (uid {st.st_uid}) could point elsewhere — set SHIV_ROOT to a "
                f"folder of your own, e.g. SHIV_ROOT={own_root_example()} (in an MCP "
                'client\'s config, under "env")'
            )
    real = Path(os.path.realpath(root))
    for folder in (real, *real.parents):
        try:
            st = os.stat(folder)
        except OSError:
            continue  # missing (made later) or unreadable (unwritable_problem says what)
        why = _foreign(folder, st, me, above=folder != real)
        if why is None:
            continue
        shown = root if folder == real else folder
        fix = f"make it yours alone ('chmod go-w {shown}') or " if "written" in why else ""
        return (
            f"kite-skills: the cache folder {shown} {why}, who could put code there that "
            f"kite-skills would run — {fix}set SHIV_ROOT to a folder of your own, e.g. "
            f'SHIV_ROOT={own_root_example()} (in an MCP client\'s config, under "env")'
        )
    try:
        st = os.lstat(extraction)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        return None  # a file or a link in the way: the unpack replaces it, never follows it
    why = _foreign(extraction, st, me, above=False)
    if why is None:
        return None
    return (
        f"kite-skills: the unpacked copy {extraction} {why}, who could have put code there "
        f"that kite-skills would run — remove it (rm -rf '{extraction}') and start again: "
        "it is unpacked afresh"
    )


def is_folder(path: Path) -> bool:
    """Whether ``path`` is a folder itself (not a link to one)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def hold(root: Path, extraction: Path) -> int | None:
    """A shared lock on ``extraction``'s in-use file, held for the process's lifetime (None on
    Windows, or when ``root`` is not there yet). Taken before a warm start looks at the
    extraction, so that a prune (preamble.py, an exclusive lock) is either done
    with it, and the start sees it gone and unpacks again, or leaves it alone. The file is
    re-checked after locking: a lock on a file a pruner unlinked meanwhile is not kept."""
    if sys.platform == "win32":
        return None
    import fcntl

    path = root / f".{extraction.name}{IN_USE_SUFFIX}"
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            if os.stat(path).st_ino == os.fstat(fd).st_ino:
                return fd
        except OSError:
            os.close(fd)
            return None
        os.close(fd)


def refuse(message: str) -> None:
    print(message, file=sys.stderr)  # noqa: T201
    sys.exit(1)


def asks_shiv(environ: Mapping[str, str]) -> bool:
    """Whether a SHIV_* setting other than SHIV_ROOT asks shiv's bootstrap for something."""
    return any(name.startswith("SHIV_") and name != "SHIV_ROOT" for name in environ)


def add_site_packages(site_packages: Path) -> None:
    """Put ``site_packages`` on sys.path as shiv's bootstrap does: ``site.addsitedir`` (which
    reads its ``.pth`` files), with what it added moved ahead of the interpreter's own
    site-packages."""
    import site

    length = len(sys.path)
    sites = [i for i, part in enumerate(sys.path) if Path(part).stem in SITE_DIRECTORIES]
    index = (sites[0] if sites else None) or length  # shiv's `or`: index 0 counts as none
    site.addsitedir(str(site_packages))
    sys.path = sys.path[:index] + sys.path[length:] + sys.path[index:length]


def handing_ctrl_c_back(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, called with Python's own Ctrl-C handler back in place.

    Until the program runs, Ctrl-C ends the start at once with exit code 130 (the archive's
    ``__main__.py`` sets that first: tools/zipapps.py's ``MAIN``); the program (``cli.main``,
    or shiv's interactive interpreter) handles it its own way."""

    def with_ctrl_c(*args: Any, **kwargs: Any) -> Any:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        return function(*args, **kwargs)

    return with_ctrl_c


def main(launcher: zipimport.zipimporter, load: Loader) -> None:
    """Start kite-skills from the archive ``launcher`` reads (a zipimporter of its
    ``site-packages/kite_skills/launcher/``); ``load`` runs the other launcher modules from
    there before anything is unpacked."""
    archive = sys.argv[0]
    environment = json.loads(launcher.get_data("environment.json"))
    root = shiv_root(environment, os.environ)
    extraction = extraction_of(archive, environment, root)
    site_packages = extraction / "site-packages"
    unpacked = site_packages / UNPACKED.format(tag=f"cp{sys.version_info[0]}{sys.version_info[1]}")
    problem = unsafe_problem(root, extraction)
    if problem:
        refuse(problem)
    held = hold(root, extraction)
    if asks_shiv(os.environ) or not is_folder(extraction) or not unpacked.is_file():
        facts = load(launcher, "build_info").current()  # the archive's: nothing is unpacked
        check: Callable[[Path, Path], str | None] = unsafe_problem
        load(launcher, "preamble").main(
            facts, archive, environment, root, extraction, unpacked, check
        )
        # A server start (no arguments: cli.main) whose files the preamble unpacked (shiv's
        # bootstrap replaces the extraction when SHIV_* asks it to: nothing may write there).
        if not sys.argv[1:] and not asks_shiv(os.environ) and unpacked.is_file():
            load(launcher, "compile_ahead").start(site_packages, held)
        import _bootstrap  # type: ignore[import-not-found]  # shiv's, at the archive's root

        # shiv's bootstrap would name the extraction for the file: it uses this one.
        _bootstrap.cache_path = lambda archive, root_dir, build_id: extraction
        _bootstrap.run = handing_ctrl_c_back(_bootstrap.run)
        _bootstrap.execute_interpreter = handing_ctrl_c_back(_bootstrap.execute_interpreter)
        _bootstrap.bootstrap()
        return
    add_site_packages(site_packages)
    from kite_skills.launcher import build_info, preamble  # unpacked: their bytecode is cached

    preamble.refuse_unfit(build_info.current(), archive)
    if held is not None and os.environ.get(preamble.KEEP_CACHE) != "1":
        preamble.prune_others(root, extraction)
    module, _, name = environment["entry_point"].partition(":")
    entry = getattr(import_module(module), name)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # see handing_ctrl_c_back
    sys.exit(entry())
