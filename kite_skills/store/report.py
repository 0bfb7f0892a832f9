"""What a person's ``kite-skills doctor`` shows about a store file, read without changing it."""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
from dataclasses import dataclass
from pathlib import Path

from .lifecycle import STATES


@dataclass(frozen=True)
class StoreReport:
    """A store file as found: whether it exists, its schema version, skills per status.

    ``problem`` says why the file could not be read (then the other fields are empty)."""

    path: Path
    exists: bool
    schema_version: int | None = None
    counts: tuple[tuple[str, int], ...] = ()
    problem: str | None = None


KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)
MOVE_ASIDE = (
    "restore it from a backup, or move it aside (sqlite3's '.recover' may save its contents) "
    "and let kite-skills start a new one"
)


def _not_a_file(path: Path) -> StoreReport | None:
    """The report for ``path`` when it is not a regular file (a folder, a pipe, a link loop…),
    found with ``stat`` alone: opening a named pipe would wait for a writer forever."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return StoreReport(path, exists=False)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return StoreReport(
                path,
                exists=True,
                problem="a symbolic link that leads in a loop, never to a file — point it at "
                "the store file, or remove it",
            )
        return StoreReport(path, exists=True, problem=exc.strerror or type(exc).__name__)
    if stat.S_ISDIR(mode):
        return StoreReport(
            path,
            exists=True,
            problem=f"a folder, not a store file — name the file, e.g. {path / 'skills.db'}",
        )
    for test, kind in KINDS:
        if test(mode):
            return StoreReport(
                path, exists=True, problem=f"{kind}, not a store file — name a regular file"
            )
    return None


def describe(path: Path) -> StoreReport:
    """Read ``path`` read-only (never creating or migrating it) and report what it holds,
    after SQLite's integrity check: a damaged file is reported as damaged."""
    odd = _not_a_file(path)
    if odd is not None:
        return odd
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        return StoreReport(path, exists=True, problem=str(exc))
    try:
        found = [
            line
            for row in conn.execute("PRAGMA integrity_check(10)")
            for line in str(row[0]).splitlines()
            if not line.startswith("*** ")  # "*** in database main ***"
        ]
        if found != ["ok"]:
            more = f"; and {len(found) - 3} more" if len(found) > 3 else ""
            return StoreReport(
                path,
                exists=True,
                problem=f"damaged: SQLite's integrity check says: {'; '.join(found[:3])}{more} "
                f"— {MOVE_ASIDE}",
            )
        version = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version")
        schema = int(version.fetchone()[0])
        rows = dict(conn.execute("SELECT status, COUNT(*) FROM skills GROUP BY status"))
    except sqlite3.Error as exc:
        if getattr(exc, "sqlite_errorname", "").startswith("SQLITE_CORRUPT"):
            return StoreReport(path, exists=True, problem=f"damaged: {exc} — {MOVE_ASIDE}")
        return StoreReport(path, exists=True, problem=f"not a kite-skills store ({exc})")
    finally:
        conn.close()
    counts = tuple((state, int(rows.get(state, 0))) for state in STATES)
    return StoreReport(path, exists=True, schema_version=schema, counts=counts)
