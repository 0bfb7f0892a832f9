"""Read receipts, recorded off the request path: which client read which live skill or catalog
recipe (``help``, ``resources/read``, ``skillRead``, ``prompts/get``), and when.

A read calls :meth:`ReadReceipts.note`, which only puts the receipt on a queue and never
waits. One worker thread writes whatever is queued in one transaction on its own connection
(:meth:`kite_skills.store.AgentView.receipt_writer`); a busy or broken store drops those
receipts and logs one line to stderr, and the reads are never failed or slowed by it. The
person turns recording off with ``kite-skills settings read-receipts off``.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Final

from ..display import error_line, quoted
from ..mcpkit import Context
from ..store import AgentView, ReadReceipt
from ..store.receipts import MAX_CLIENTS_PER_CONNECTION, ReceiptWriter
from .negotiation import client_label

log = logging.getLogger("kite_skills.server")

BATCH_SECONDS: Final = 0.2
"""After each write the worker waits this long, so a client reading in a tight loop costs at
most five small commits a second (each rereads nothing the reads need)."""
IDLE_SECONDS: Final = 30.0
"""The worker (and its connection) goes away after this long without a read; the next read
starts another."""
MAX_QUEUED: Final = 1000
"""Receipts waiting to be written; beyond this (the store stuck for long) new ones are
dropped: a receipt is never worth memory or a wait."""
_STOP: Final = object()


class ReadReceipts:
    """Records read receipts for one store (nothing when there is none, or it is in memory),
    for the one connection a server serves: under at most
    :data:`~kite_skills.store.receipts.MAX_CLIENTS_PER_CONNECTION` client names, the first
    it meets."""

    def __init__(self, view: AgentView | None) -> None:
        self._view = view if view is not None and view.keeps_receipts else None
        self._queue: queue.Queue[object] = queue.Queue(MAX_QUEUED)
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()
        self._failing = False
        self._clients: set[str] = set()
        self._told_of_clients = False

    def note(self, ctx: Context, kind: str, item: str, via: str) -> None:
        """Queue a receipt: ``kind`` ``skill`` or ``recipe``, ``via`` the method or tool."""
        if self._view is None:
            return
        client = client_label(ctx)
        with self._start:
            if client not in self._clients:
                if len(self._clients) >= MAX_CLIENTS_PER_CONNECTION:
                    self._tell_of_clients(client)
                    return
                self._clients.add(client)
        receipt = ReadReceipt(kind, item, client, via, self._view.now())
        try:
            self._queue.put_nowait(receipt)
        except queue.Full:
            log.debug("read receipt dropped: the queue is full")
        if self._thread is None:  # after the put: a worker leaving when idle looks again
            self._start_worker()

    def _tell_of_clients(self, client: str) -> None:
        if not self._told_of_clients:
            log.warning(
                "read receipts under %s are not recorded: this connection already named %d "
                "clients, the most it may (its reads are served as before)",
                quoted(client, 60),
                MAX_CLIENTS_PER_CONNECTION,
            )
            self._told_of_clients = True

    def _start_worker(self) -> None:
        with self._start:
            if self._thread is None:
                thread = threading.Thread(target=self._work, name="read-receipts", daemon=True)
                thread.start()
                self._thread = thread

    def close(self, timeout: float = 2.0) -> None:
        """Write what is queued (waiting at most ``timeout`` seconds) and stop the worker."""
        thread = self._thread
        if thread is None:
            return
        try:
            self._queue.put(_STOP, timeout=timeout)
        except queue.Full:
            return
        thread.join(timeout)

    def _work(self) -> None:
        assert self._view is not None
        writer = self._view.receipt_writer()
        try:
            while True:
                try:
                    batch = [self._queue.get(timeout=IDLE_SECONDS)]
                except queue.Empty:
                    with self._start:  # idle: leave, unless a receipt came in meanwhile
                        if self._queue.empty():
                            self._thread = None
                            return
                    continue
                while True:
                    try:
                        batch.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                stop = _STOP in batch
                self._write([r for r in batch if isinstance(r, ReadReceipt)], writer)
                if stop:
                    with self._start:
                        self._thread = None
                    return
                time.sleep(BATCH_SECONDS)
        finally:
            writer.close()

    def _write(self, batch: list[ReadReceipt], writer: ReceiptWriter) -> None:
        try:
            writer.record(batch)
        except Exception as exc:  # busy, full disk, moved: never the reader's problem
            if not self._failing:
                log.warning(
                    "read receipts not recorded (%s); reads go on, and recording is tried "
                    "again with the next read",
                    error_line(exc),
                )
            self._failing = True
            return
        if self._failing:
            log.info("read receipts are recorded again")
            self._failing = False
