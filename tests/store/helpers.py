"""Shared helpers for the store tests."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

from kite_skills.store import SaveResult, Store, agent, human


def poke(db_path: Path, sql: str, *params: object) -> None:
    """Write through a plain connection, as another tool would."""
    with closing(sqlite3.connect(db_path)) as conn, conn:
        conn.execute(sql, params)


BODY = "# Steps\n\n1. Open the fund page.\n2. Compare the expense ratio.\n"


def draft(
    store: Store, name: str, description: str = "When comparing two funds", body: str = BODY
) -> SaveResult:
    return agent.save(store, name, description, body, who="agent-test 1.0")


def live(store: Store, name: str, **kw: str) -> None:
    draft(store, name, **kw)
    human.publish(store, name, rev=store.get(name).revision, via="cli", who="alice")


def archived(store: Store, name: str, **kw: str) -> None:
    live(store, name, **kw)
    human.archive(store, name, via="cli", who="alice")


def counts(path: Path) -> tuple[int, int]:
    """(skills rows, audit rows), read through a separate plain connection."""
    with closing(sqlite3.connect(path)) as conn:
        skills = conn.execute("SELECT COUNT(*) FROM skills").fetchone()[0]
        audit = conn.execute("SELECT COUNT(*) FROM audit_log").fetchone()[0]
    return skills, audit


def audit_rows(store: Store) -> list[tuple]:
    """Audit rows oldest first, without id and time."""
    return [
        (e.skill, e.action, e.from_status, e.to_status, e.via, e.who, e.detail)
        for e in reversed(store.audit(limit=10_000))
    ]


NOBODY = 65534


@contextlib.contextmanager
def unprivileged() -> Iterator[None]:
    """Run the block as a user whom file permissions bind (``nobody`` when we are root, since
    root ignores them); use it with the ``shared`` folder fixture."""
    if os.geteuid() != 0:
        yield
        return
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)
