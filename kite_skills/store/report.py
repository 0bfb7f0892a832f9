"""What a person's ``kite-skills doctor`` shows about a store file, read without changing it."""

from __future__ import annotations

import sqlite3
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


def describe(path: Path) -> StoreReport:
    """Read ``path`` read-only (never creating or migrating it) and report what it holds."""
    if not path.exists():
        return StoreReport(path, exists=False)
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        return StoreReport(path, exists=True, problem=str(exc))
    try:
        version = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version")
        schema = int(version.fetchone()[0])
        rows = dict(conn.execute("SELECT status, COUNT(*) FROM skills GROUP BY status"))
    except sqlite3.Error as exc:
        return StoreReport(path, exists=True, problem=f"not a kite-skills store ({exc})")
    finally:
        conn.close()
    counts = tuple((state, int(rows.get(state, 0))) for state in STATES)
    return StoreReport(path, exists=True, schema_version=schema, counts=counts)
