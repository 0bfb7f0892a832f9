"""Each SQLite failure mapped to its real cause, in words a person can act on.

SQLite reports a failure as a result code (``SQLITE_READONLY_DIRECTORY``, ``SQLITE_FULL`` …);
Python 3.11+ exposes it as ``sqlite_errorname`` on the exception. The message says what is
wrong with the store file and what to do about it; "another process is busy" is said only for
``SQLITE_BUSY`` and ``SQLITE_LOCKED``, the only codes that mean it.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Final

from kite_skills.errors import StoreUnavailable

ELSEWHERE: Final = "choose another file with --db or KITE_SKILLS_DB"


def code_name(exc: BaseException) -> str:
    """``SQLITE_READONLY_DIRECTORY`` and the like; ``""`` when SQLite gave no code."""
    name = getattr(exc, "sqlite_errorname", None)
    return name if isinstance(name, str) else ""


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK, effective_ids=os.access in os.supports_effective_ids)


def unavailable(exc: sqlite3.Error, path: str, *, opening: bool) -> StoreUnavailable:
    """The :class:`StoreUnavailable` for ``exc``, raised while opening (``opening``) or using
    the store at ``path``. Chain it: ``raise unavailable(exc, …) from exc``."""
    name = code_name(exc)
    detail = f"{name}: {exc}" if name else str(exc)
    where = Path(path)
    folder = where.parent
    after = "" if opening else "; nothing changed"
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return StoreUnavailable(
            f"the skill store {path} is locked: another process is busy with it and did not "
            f"finish within the wait{after} — try again in a moment ({detail})",
            "busy",
        )
    if name == "SQLITE_READONLY_DBMOVED":
        return StoreUnavailable(
            f"the skill store {path} was moved or deleted while kite-skills had it open"
            f"{after} — put the file back, or restart kite-skills",
            "moved",
        )
    if name.startswith("SQLITE_READONLY"):
        if name in ("SQLITE_READONLY_DIRECTORY", "SQLITE_READONLY_CANTINIT") or (
            _writable(where) and not _writable(folder)
        ):
            cause = (
                f"its folder {folder} is not writable, and SQLite must create "
                f"{where.name}-wal and {where.name}-shm beside it"
            )
            fix = f"make the folder writable (chmod u+w {folder})"
        elif where.exists() and not _writable(where):
            cause = "the file is not writable"
            fix = f"make it writable (chmod u+w {path})"
        else:
            cause = "the file or the disk holding it is read-only"
            fix = "check the file, its folder and how the disk is mounted"
        return StoreUnavailable(
            f"the skill store {path} is read-only: {cause}{after} — {fix}, or {ELSEWHERE}",
            "read-only",
        )
    if name.startswith("SQLITE_FULL"):
        return StoreUnavailable(
            f"the disk holding the skill store {path} is full{after} — free some space and "
            f"try again, or {ELSEWHERE}",
            "disk-full",
        )
    if name.startswith("SQLITE_CORRUPT"):
        return StoreUnavailable(
            f"the skill store {path} is damaged ({exc}){after} — restore it from a backup, "
            "or move it aside (sqlite3's '.recover' may save its contents) and let "
            f"kite-skills start a new one, or {ELSEWHERE}",
            "corrupt",
        )
    if name.startswith("SQLITE_NOTADB"):
        return StoreUnavailable(
            f"{path} is not a kite-skills store: it is not an SQLite database (or it is "
            f"encrypted){after} — {ELSEWHERE}",
            "not-a-database",
        )
    if name.startswith("SQLITE_CANTOPEN") or name.startswith("SQLITE_PERM"):
        if where.is_dir():
            return is_a_directory(path)
        return StoreUnavailable(
            f"cannot open the skill store {path} ({detail}){after} — check that the file "
            f"and its folder exist and that you may read and write them, or {ELSEWHERE}",
            "cannot-open",
        )
    if name.startswith("SQLITE_IOERR"):
        return StoreUnavailable(
            f"the disk reported an error while using the skill store {path} ({detail})"
            f"{after} — check the disk (and free space), then try again, or {ELSEWHERE}",
            "io-error",
        )
    return StoreUnavailable(
        f"the skill store {path} could not complete the operation ({detail}){after} — "
        f"check the file, or {ELSEWHERE}",
        "other",
    )


def is_a_directory(path: str) -> StoreUnavailable:
    return StoreUnavailable(
        f"the skill store path {path} is a directory, not a file — give a file path such as "
        f"{Path(path) / 'skills.db'}, or {ELSEWHERE}",
        "is-a-directory",
    )
