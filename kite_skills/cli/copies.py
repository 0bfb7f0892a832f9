"""The zipapp's unpacked copies: what ``doctor`` says of them, ``kite-skills prune`` (remove
those no configured entry uses) and ``kite-skills uninstall`` (the launcher and every copy,
keeping the store unless asked).

A zipapp unpacks itself on its first start into ``<root>/kite-skills_<build id>`` (root:
``SHIV_ROOT``, else ``~/.shiv``; docs/building.md, "shiv's cache"), one copy per build: an
upgrade leaves the old one behind. A copy is in use when this file runs from it, or when a
client's entry starts a file of that build (with that entry's ``SHIV_ROOT``). A copy is
removed under the same exclusive lock the launcher's own pruning takes, so one a running
server holds is left alone.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import invocation, os_dirs
from ..errors import KiteError
from ..launcher import build_info, preamble, start
from . import doctor, install
from .db import add_db_option, db_path

PROGRAM = "kite-skills"  # extractions are <PROGRAM>_<build id> (launcher/start.py)


@dataclass(frozen=True)
class Copy:
    """One unpacked copy: its folder and its size in bytes."""

    path: Path
    size: int

    @property
    def megabytes(self) -> str:
        return f"{self.size / 1e6:.1f} MB"


def _size(folder: Path) -> int:
    total = 0
    for path in folder.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink():
                total += path.stat().st_size
        except OSError:
            continue
    return total


def default_root() -> Path:
    """Where a start in this environment unpacks (the launcher's rule: ``SHIV_ROOT``, else
    ``~/.shiv``)."""
    return start.shiv_root({}, os.environ)


def current_copy() -> Path | None:
    """The copy this program runs from (None: not a zipapp build)."""
    if build_info.current() is None:
        return None
    return Path(__file__).resolve().parents[3]  # <copy>/site-packages/kite_skills/cli/


def copies(root: Path) -> list[Copy]:
    """Every copy of kite-skills unpacked in ``root``, oldest first."""
    try:
        folders = [
            p
            for p in root.iterdir()
            if (match := preamble.EXTRACTION.fullmatch(p.name))
            and match["name"] == PROGRAM
            and p.is_dir()
            and not p.is_symlink()
        ]
    except OSError:
        return []
    folders.sort(key=lambda p: p.stat().st_mtime)
    return [Copy(p, _size(p)) for p in folders]


def _build_id(file: str) -> str | None:
    try:
        with zipfile.ZipFile(file) as archive:
            found = json.loads(archive.read("environment.json")).get("build_id")
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return None
    return found if isinstance(found, str) else None


def _entry_root(entry: doctor.Entry) -> Path:
    """Where the client's start of ``entry`` unpacks: its own ``SHIV_ROOT``, else ours."""
    env = entry.value.get("env")
    value = env.get("SHIV_ROOT") if isinstance(env, dict) else None
    if isinstance(value, str) and value:
        return start.shiv_root({}, {**os.environ, "SHIV_ROOT": value})
    return default_root()


def used(entries: Iterable[doctor.Entry]) -> set[Path]:
    """The copies in use: this program's, and those the entries' files unpack into."""
    found = {p for p in [current_copy()] if p is not None}
    for entry in entries:
        words = entry.words
        file = words[1] if len(words) > 1 and words[1].endswith(".pyz") else None
        build = _build_id(file) if file else None
        if build:
            found.add(_entry_root(entry) / f"{PROGRAM}_{build}")
    return {Path(os.path.realpath(p)) for p in found}


def roots(entries: Iterable[doctor.Entry]) -> list[Path]:
    """Every folder copies may be in: the default one, this program's, the entries'."""
    found = [default_root()]
    here = current_copy()
    found += [here.parent] if here is not None else []
    found += [_entry_root(e) for e in entries]
    unique: dict[str, Path] = {}
    for root in found:
        unique.setdefault(os.path.realpath(root), root)
    return list(unique.values())


def unused(entries: list[doctor.Entry]) -> tuple[list[Copy], list[Copy]]:
    """(the copies in use, those no configured entry and not this program uses)."""
    in_use = used(entries)
    kept: list[Copy] = []
    spare: list[Copy] = []
    for root in roots(entries):
        for copy in copies(root):
            (kept if Path(os.path.realpath(copy.path)) in in_use else spare).append(copy)
    return kept, spare


def _total(found: list[Copy]) -> str:
    return f"{sum(c.size for c in found) / 1e6:.1f} MB"


def doctor_lines(entries: list[doctor.Entry]) -> list[doctor.Finding]:
    """Print the unpacked copies' line of ``doctor``; a finding when some are unused."""
    kept, spare = unused(entries)
    if not kept and not spare:
        return []
    print(
        f"unpacked:      {len(kept) + len(spare)} cop{'ies' if len(kept) + len(spare) > 1 else 'y'}"
        f", {_total(kept + spare)} ({len(kept)} in use, {_total(kept)})"
    )
    for copy in spare:
        print(f"               unused: {copy.path} ({copy.megabytes})")
    if not spare:
        return []
    here = invocation.current()
    return [
        doctor.Finding(
            f"{len(spare)} unpacked cop{'ies' if len(spare) > 1 else 'y'} of older files "
            f"({_total(spare)}) that no configured entry uses — remove "
            f"{'them' if len(spare) > 1 else 'it'}: {here.run('prune', '--yes')} (without "
            "--yes it only lists them)"
        )
    ]


def remove_copy(copy: Path, mine: bool = False) -> bool:
    """Remove an unpacked copy under the launcher's exclusive lock: False when a running
    kite-skills holds it (it is left as it is). ``mine``: the copy this program runs from,
    whose shared lock it holds itself."""
    root = copy.parent
    marker = root / f".{copy.name}{preamble.IN_USE_SUFFIX}"
    lock = sys.platform != "win32" and not mine
    fd = preamble._lock(marker, shared=False) if lock else None
    if lock and fd is None:
        return False
    try:
        shutil.rmtree(copy)
        shutil.rmtree(root / f"{copy.name}.tmp", ignore_errors=True)
        for leftover in (root / f".{copy.name}_lock", marker):
            leftover.unlink(missing_ok=True)
    except OSError as exc:
        raise KiteError(f"cannot remove {copy}: {exc.strerror}") from exc
    finally:
        if fd is not None:
            os.close(fd)
    return True


def _remove_all(found: list[Copy], yes: bool) -> None:
    for copy in found:
        if not yes:
            print(f"would remove {copy.path} ({copy.megabytes})")
        elif remove_copy(copy.path, mine=copy.path == current_copy()):
            print(f"removed {copy.path} ({copy.megabytes})")
        else:
            print(f"kept {copy.path}: a running kite-skills uses it")


def _run_prune(args: argparse.Namespace, entries: Callable[[], list[doctor.Entry]]) -> int:
    kept, spare = unused(entries())
    if not spare:
        print(f"kite-skills: no unused unpacked copies ({len(kept)} in use); nothing to remove")
        return 0
    _remove_all(spare, args.yes)
    for copy in kept:
        print(f"in use, kept: {copy.path} ({copy.megabytes})")
    if not args.yes:
        print(
            f"kite-skills: a dry run: {len(spare)} unused, {_total(spare)} — remove them: "
            f"{invocation.current().run('prune', '--yes')}"
        )
    return 0


def _store_files(db: Path) -> list[Path]:
    return [p for p in (db, *(Path(f"{db}{s}") for s in ("-wal", "-shm"))) if p.exists()]


def _run_uninstall(
    args: argparse.Namespace,
    entries: Callable[[], list[doctor.Entry]],
    client_names: Mapping[str, str],
) -> int:
    here = invocation.current()
    found = entries()
    folder = os_dirs.bin_dir(os.environ, sys.platform)
    launcher = folder / install.launcher_name(sys.platform)
    if args.yes:
        path, there = install.uninstall(folder, sys.platform)
        print(f"removed {path}" if there else f"no launcher at {path}")
    elif launcher.exists():
        print(f"would remove {launcher} (if 'install-command' wrote it)")
    kept, spare = unused(found)
    _remove_all(kept + spare, args.yes)
    db = db_path(args)
    if args.delete_store:
        for file in _store_files(db):
            if args.yes:
                file.unlink()
                print(f"deleted {file}")
            else:
                print(f"would delete {file} (your skills and their history)")
    else:
        if _store_files(db):
            print(f"your skills' store stays: {db} (to delete it too: add --delete-store)")
        else:
            print(f"no store at {db}")
    for entry in found:
        client = client_names[entry.client]
        sandbox = ["--sandbox"] if entry.name == "kite-sandbox" else []
        print(
            f"still in {entry.client}'s config: '{entry.name}' — "
            f"{here.run('setup', client, *sandbox, '--remove')}"
        )
    if not args.yes:
        print(f"kite-skills: a dry run; to do it: {here.run('uninstall', '--yes')}")
    return 0


def register(
    subparsers: argparse._SubParsersAction,  # type: ignore[type-arg]
    entries: Callable[[], list[doctor.Entry]],
    client_names: Mapping[str, str],
) -> None:
    """Add ``prune`` and ``uninstall``; ``entries`` reads every client's entries of ours,
    ``client_names`` maps each client's title to its name on the command line."""
    prune = subparsers.add_parser(
        "prune",
        help="remove the unpacked copies of older files that no client's entry uses (lists "
        "them unless --yes)",
        epilog="Example: kite-skills prune --yes",
    )
    prune.add_argument("--yes", action="store_true", help="remove them (default: only list)")
    prune.set_defaults(run=lambda args: _run_prune(args, entries))
    uninstall = subparsers.add_parser(
        "uninstall",
        help="remove the 'kite-skills' launcher and every unpacked copy, keeping your store "
        "(lists what it would do unless --yes)",
        epilog="Example: kite-skills uninstall --yes   (then delete the .pyz file yourself)",
    )
    uninstall.add_argument("--yes", action="store_true", help="do it (default: only list)")
    uninstall.add_argument(
        "--delete-store",
        action="store_true",
        help="delete the store as well (your skills and their whole history)",
    )
    add_db_option(uninstall)
    uninstall.set_defaults(run=lambda args: _run_uninstall(args, entries, client_names))
