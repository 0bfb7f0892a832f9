"""Read receipts: which MCP client last read each live skill and catalog recipe, and when.

This module is the one writer of the receipts (issue 40): the agent's reads are recorded
through :class:`ReceiptWriter`, which only :meth:`AgentView.receipt_writer
<kite_skills.store.AgentView.receipt_writer>` hands out, and the person's setting (on, or off
and forgotten) is :func:`set_recording`, which the person's desk runs in its transaction.

The MCP server records them through :class:`ReceiptWriter`, on its own SQLite connection and
off the request path (see :mod:`kite_skills.server.receipts`); people read them with
:meth:`Store.reads <kite_skills.store.Store.reads>`. One row per (item, client), at most
:data:`MAX_CLIENTS_PER_ITEM` per item and :data:`MAX_CLIENTS_PER_CONNECTION` names per MCP
connection, so the table stays small and one connection cannot push out the others' receipts,
whatever clients call themselves. Nothing is recorded while the person's ``read_receipts``
setting is ``off`` (:func:`kite_skills.store.human.set_read_receipts`).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from typing import Final

from .records import ReadReceipt

MAX_CLIENTS_PER_ITEM: Final = 10
MAX_CLIENTS_PER_CONNECTION: Final = 3
"""The client names one MCP connection may leave receipts under (the server keeps the first
ones it meets; :mod:`kite_skills.server.receipts`): a 2026-07-28 request names its client
itself, so without this one connection inventing names would push every other client's
receipt of an item out. Fewer than :data:`MAX_CLIENTS_PER_ITEM`, so one connection never
fills an item's rows."""
MAX_CLIENT_CHARS: Final = 200
MAX_ITEM_CHARS: Final = 300
BUSY_TIMEOUT_S: Final = 0.2
"""How long a write waits for a busy store before it gives up (the receipts are dropped and
the failure logged): a receipt is never worth holding a reader up."""

_UPSERT: Final = (
    "INSERT INTO read_receipts (kind, item, client, via, at) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (kind, item, client) DO UPDATE SET via = excluded.via, at = excluded.at"
)
_PRUNE: Final = (
    "DELETE FROM read_receipts WHERE kind = ? AND item = ? AND client NOT IN ("
    "SELECT client FROM read_receipts WHERE kind = ? AND item = ? ORDER BY at DESC LIMIT ?)"
)
_SETTING: Final = "SELECT value FROM settings WHERE key = 'read_receipts'"
_SET: Final = (
    "INSERT INTO settings (key, value) VALUES ('read_receipts', ?)"
    " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)
_FORGET: Final = "DELETE FROM read_receipts"
KINDS: Final = ("skill", "recipe")


def recording(conn: sqlite3.Connection) -> bool:
    """Whether receipts are recorded: the person's setting, on unless they turned it off."""
    row = conn.execute(_SETTING).fetchone()
    return row is None or row[0] != "off"


def set_recording(conn: sqlite3.Connection, on: bool) -> None:
    """The person's setting, in their write transaction ``conn``: on, or off, which also
    forgets the receipts kept so far."""
    conn.execute(_SET, ("on" if on else "off",))
    if not on:
        conn.execute(_FORGET)


class ReceiptWriter:
    """Writes the agent's read receipts to an existing store file (opened and migrated by
    :meth:`Store.open <kite_skills.store.Store.open>` first): get one from
    :meth:`AgentView.receipt_writer <kite_skills.store.AgentView.receipt_writer>`. Use from one
    thread."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = os.fspath(path)
        self._conn: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(self._path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            # A receipt is not worth an fsync: in WAL mode NORMAL syncs at checkpoints only
            # (a power cut may lose the newest receipts, never the store's consistency).
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA cache_size = -64")  # KiB: a few small rows; keep RSS flat
            self._conn = conn
        return self._conn

    def record(self, reads: Sequence[ReadReceipt]) -> int:
        """Keep ``reads`` in one transaction (the newest per item and client wins); returns
        how many were kept: 0 when the setting is off. Raises ``sqlite3.Error`` when the
        store is busy or broken (nothing is kept; the caller logs it and carries on)."""
        if not reads:
            return 0
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            if not recording(conn):
                conn.execute("ROLLBACK")
                return 0
            items = set()
            for read in reads:
                if read.kind not in KINDS:
                    raise ValueError(f"read receipt kind must be one of {KINDS}, not {read.kind!r}")
                item = read.item[:MAX_ITEM_CHARS]
                client = read.client[:MAX_CLIENT_CHARS] or "unknown client"
                conn.execute(_UPSERT, (read.kind, item, client, read.via, read.at))
                items.add((read.kind, item))
            for kind, item in items:
                conn.execute(_PRUNE, (kind, item, kind, item, MAX_CLIENTS_PER_ITEM))
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return len(reads)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
