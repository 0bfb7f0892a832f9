"""The store: one SQLite file, its migrations, and the read side.

Writes live in :mod:`kite_skills.store.agent` (what an MCP client may do) and
:mod:`kite_skills.store.human` (what a person may do); both go through :meth:`Store.transaction`,
one ``BEGIN IMMEDIATE`` transaction per action, state change and audit row together.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import os
import re
import shlex
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self

from kite_skills import invocation, os_dirs
from kite_skills.display import decoded, quoted
from kite_skills.errors import (
    InvalidQuery,
    InvalidSkill,
    SchemaTooNew,
    SkillNotLive,
    StoreUnavailable,
    UnknownSkill,
    UnreadableSkill,
)
from kite_skills.skill_rules import NAME_CHARS, is_skill_name

from . import _failures, _search, _sql, receipts
from ._validate import (
    DEFAULT_LIMIT,
    LINE_FORBIDDEN,
    MAX_AUDIT_LIMIT,
    check_limit,
    check_name,
    check_query,
)
from .lifecycle import ARCHIVED, DRAFT, LIVE, VIAS, sends_back, waiting_audit_actions
from .records import (
    AuditEntry,
    Author,
    PastText,
    ReadReceipt,
    Revision,
    Skill,
    SkillSummary,
    Waiting,
)

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS: Final = 5000
_MIGRATION_RE: Final = re.compile(r"(\d{4})_[a-z0-9_]+\.sql")
MEMORY: Final = ":memory:"
APP: Final = "kite-skills"
DB_NAME: Final = "skills.db"

Clock = Callable[[], datetime]
Mark = tuple[int, int, int]
"""What :meth:`Store.mark` answers: equal marks, nothing committed in between."""


def default_db_path(env: Mapping[str, str], platform: str | None = None) -> Path:
    """Where the store lives: ``KITE_SKILLS_DB`` if set, else the per-user data directory
    of ``platform`` (a ``sys.platform`` value; the running one by default):

    - Linux and others: ``$XDG_DATA_HOME/kite-skills/skills.db``
      (``~/.local/share/kite-skills/skills.db``);
    - macOS: ``~/Library/Application Support/kite-skills/skills.db``;
    - Windows: ``%LOCALAPPDATA%\\kite-skills\\skills.db``.

    Reads only ``env`` (the CLI passes ``os.environ``); a leading ``~`` means the home
    directory (``HOME``, or ``USERPROFILE`` on Windows).
    """
    platform = platform or sys.platform
    explicit = env.get("KITE_SKILLS_DB", "").strip()
    if explicit:
        if explicit == "~" or explicit.startswith(("~/", "~\\")):
            return os_dirs.home(env, platform) / explicit[2:]
        return Path(explicit)
    return os_dirs.data_dir(env, platform) / APP / DB_NAME


@functools.cache
def migrations() -> tuple[tuple[int, str], ...]:
    """The bundled migrations as ``(version, sql)``, numbered 1..N without gaps. Read once: they
    ship with the program, and every Store.open listed and read their folder again."""
    folder = resources.files("kite_skills.store").joinpath("migrations")
    found: list[tuple[int, str]] = []
    for entry in folder.iterdir():
        match = _MIGRATION_RE.fullmatch(entry.name)
        if match:
            found.append((int(match.group(1)), entry.read_text(encoding="utf-8")))
    found.sort()
    if [v for v, _ in found] != list(range(1, len(found) + 1)):
        raise AssertionError(f"migrations are not numbered 1..N: {[v for v, _ in found]}")
    return tuple(found)


LATEST_VERSION: Final = len(migrations())


def _statements(script: str) -> Iterator[str]:
    """Split a migration script into complete statements (triggers included)."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending
            pending = ""
    if pending.strip() and not all(
        ln.strip().startswith("--") or not ln.strip() for ln in pending.splitlines()
    ):
        raise AssertionError(f"incomplete statement at the end of a migration: {pending!r}")


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _text(raw: bytes) -> str:
    """The connection's text factory: UTF-8, with bytes that are not valid UTF-8 kept as lone
    surrogates (``surrogateescape``) so one bad row is found by :func:`valid_text` and named,
    instead of failing a whole query."""
    return raw.decode("utf-8", "surrogateescape")


def _rows_decoded_by_sqlite(conn: sqlite3.Connection, sql: str) -> list[Any]:
    """Every row of ``sql``, its text decoded by sqlite3's own UTF-8 decoder rather than by
    :func:`_text`, a Python call per value (100,000 live skills' names and versions: about
    65 ms, against 100 ms). That decoder fails the whole query on one value that is not valid
    UTF-8; the rows are then read again through :func:`_text`. Call it holding the store's
    lock: the connection's text factory is changed while the rows are read."""
    conn.text_factory = str
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError as exc:
        if not str(exc).startswith("Could not decode to UTF-8"):
            raise
    finally:
        conn.text_factory = _text
    return conn.execute(sql).fetchall()


def valid_text(value: object) -> str | None:
    """``value`` as text when it is valid UTF-8 text (a BLOB holding UTF-8 counts), else None."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(value, str):
        return None
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value


def _unreadable(name: object, fields: list[str], kite: str) -> UnreadableSkill:
    shown = decoded(name)
    fix = (
        f"a person can delete it with '{kite} skills delete {shown}' or rewrite it with sqlite3"
        if valid_text(name) is not None and is_skill_name(shown)
        else "a person can remove the row with sqlite3 (its name is not valid either)"
    )
    return UnreadableSkill.bad_utf8(shown, fields, fix)


MAX_LOOKUP_CHARS: Final = 1024  # a refused name is still looked up, up to this length


def refused_name(name: str, kite: str) -> UnreadableSkill:
    """A row another tool wrote under a name kite-skills never accepts ("Bad Name")."""
    fix = (
        f"a person can delete it with: {kite} skills delete {shlex.quote(name)}"
        if LINE_FORBIDDEN.search(name) is None and len(name) <= MAX_LOOKUP_CHARS
        else "a person can remove the row with sqlite3 (its name holds characters a "
        "terminal would hide)"
    )
    return UnreadableSkill(
        name,
        f"skill {quoted(name)} has a name kite-skills does not accept ({NAME_CHARS}) — it was "
        f"written by another tool, not kite-skills; {fix}",
    )


_SKILL_FIELDS: Final = (
    "name",
    "description",
    "body",
    "status",
    "created_at",
    "updated_at",
    "published_at",
    "proposed description",
    "proposed body",
    "proposed_at",
    "proposed_by",
    "written_via",
    "written_by",
)


def _skill(row: tuple, kite: str) -> Skill:  # type: ignore[type-arg]
    """A row as a :class:`Skill`; ``UnreadableSkill`` when any text in it is not UTF-8 (its
    message names the command ``kite`` that starts kite-skills here)."""
    checked: list[Any] = [None if v is None else valid_text(v) for v in row]
    bad = [
        f
        for f, v, c in zip(_SKILL_FIELDS, row, checked, strict=True)
        if v is not None and c is None
    ]
    if bad:
        raise _unreadable(row[0], bad, kite)
    if not is_skill_name(checked[0]):
        raise refused_name(checked[0], kite)
    (name, description, body, status, created, updated, published, p_desc, p_body, p_at, p_by) = (
        checked[:11]
    )
    proposed = (
        Revision(description=p_desc, body=p_body, proposed_at=p_at, proposed_by=p_by or "")
        if p_body is not None
        else None
    )
    author = Author(checked[11] or "", checked[12] or "")
    return Skill(name, description, body, status, created, updated, published, proposed, author)


class Store:
    """A handle on one store file. Safe to share between threads (one lock guards the
    connection). Use :meth:`open`; close it with :meth:`close` or a ``with`` block."""

    def __init__(
        self, conn: sqlite3.Connection, path: str, clock: Clock, command: str = invocation.NAME
    ) -> None:
        self._conn = conn
        self.command = command
        """What a person types to start kite-skills here (``kite_skills.invocation``), as the
        store's messages name it: ``{kite} dashboard``."""
        self._path = path
        self._clock = clock
        self._lock = threading.RLock()
        self._closed = False
        self._identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the open file
        self._version_base = 0  # grows when the file is replaced, so data_version changes
        self._reported: set[str] = set()  # unreadable skills (and "moved") already logged
        self._last_version = 0

    # ---- opening -------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: Clock | None = None,
        command: str = invocation.NAME,
    ) -> Store:
        """Open (creating if needed) the store at ``path`` and bring its schema up to date.
        ``command`` starts kite-skills on this machine: the store's messages name it.

        Creates a missing parent directory with mode 0o700 and a new file with mode 0o600.
        Raises ``SchemaTooNew`` for a file written by a newer kite-skills and
        ``StoreUnavailable`` when the file cannot be opened or SQLite lacks FTS5.
        """
        where = os.fspath(path)
        _require_fts5()
        if where != MEMORY:
            _prepare_file(Path(where))
        try:
            conn = sqlite3.connect(
                where,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise _failures.unavailable(exc, where, opening=True) from exc
        conn.text_factory = _text
        store = cls(conn, where, clock or _utc_now, command)
        try:
            store._setup()
            if where != MEMORY:
                store._identity = _identity(os.stat(where))
        except BaseException:
            conn.close()
            raise
        return store

    def _setup(self) -> None:
        conn = self._conn
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            if self._path != MEMORY:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    log.warning("skill store %s is in %s mode, not WAL", self._path, mode)
            self._migrate()
        except sqlite3.Error as exc:
            raise _failures.unavailable(exc, self._path, opening=True) from exc
        except OSError as exc:  # os.stat after a successful open: the file went away
            raise StoreUnavailable(
                f"cannot open the skill store {self._path}: {exc.strerror or exc}",
                "cannot-open",
            ) from exc

    def _migrate(self) -> None:
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version ("
                " version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
            )
            current = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version")
            version = int(current.fetchone()[0])
            if version > LATEST_VERSION:
                raise SchemaTooNew(
                    f"the skill store {self._path} has schema version {version}, but this "
                    f"kite-skills understands only up to version {LATEST_VERSION}: it was "
                    f"written by a newer kite-skills; upgrade kite-skills, or {_failures.ELSEWHERE}"
                )
            for number, script in migrations()[version:]:
                log.info("migrating skill store %s to schema version %d", self._path, number)
                for statement in _statements(script):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_version (version, applied_at) VALUES (?, ?)",
                    (number, self.now()),
                )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def path(self) -> str:
        return self._path

    def now(self) -> str:
        """The store clock as ISO-8601 UTC, e.g. ``2026-05-01T09:30:00.000000Z``."""
        return self._clock().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    # ---- connection access ---------------------------------------------------------------

    @contextlib.contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._check_open()
            self._follow_file()
            try:
                yield self._conn
            except _STORE_FAILURES as exc:
                raise self._unavailable(exc) from exc

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction, for the writers (:mod:`.agent`, :mod:`.human`,
        through the lifecycle engine): committed when the block ends, rolled back on any
        exception, so a state change and its audit row are written together or not at all.

        Before it starts and again before it commits, the path must still name the file this
        store opened: a write is never acknowledged into a file that was deleted or replaced
        (see :meth:`_follow_file`)."""
        with self._lock:
            self._check_open()
            self._follow_file()
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
            except _STORE_FAILURES as exc:
                raise self._unavailable(exc) from exc
            try:
                yield conn
                if not self._same_file():
                    raise StoreUnavailable(
                        f"the skill store {self._path} was deleted or replaced while saving; "
                        "nothing was saved — try again",
                        "moved",
                    )
            except BaseException as exc:
                self._rollback(conn)
                if isinstance(exc, _STORE_FAILURES):
                    raise self._unavailable(exc) from exc
                raise
            try:
                conn.execute("COMMIT")
            except _STORE_FAILURES as exc:
                self._rollback(conn)
                raise self._unavailable(exc) from exc

    @staticmethod
    def _rollback(conn: sqlite3.Connection) -> None:
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:  # SQLite already rolled back (disk full, I/O error)
                log.debug("rollback failed", exc_info=True)

    def _check_open(self) -> None:
        if self._closed:
            raise StoreUnavailable(
                "the skill store is closed; open it again with Store.open", "closed"
            )

    def _unavailable(self, exc: sqlite3.Error) -> StoreUnavailable:
        return _failures.unavailable(exc, self._path, opening=False)

    # ---- the file under the path ---------------------------------------------------------

    def _stat(self) -> os.stat_result | None:
        try:
            return os.stat(self._path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreUnavailable(
                f"cannot reach the skill store {self._path}: {exc.strerror or exc} — check "
                f"the file and its folder, or {_failures.ELSEWHERE}",
                "cannot-open",
            ) from exc

    def _same_file(self) -> bool:
        if self._identity is None:  # in memory
            return True
        found = self._stat()
        return found is not None and _identity(found) == self._identity

    def _follow_file(self) -> None:
        """Make sure the path still names the file this store has open.

        Deleted or moved away: refuse (``StoreUnavailable``, reason ``moved``): anything
        written now would go into a file nobody can open again. Replaced by another file
        (restored from a backup, synced from another machine): reopen the path and go on
        with the new file; :meth:`data_version` changes so that watchers reload.
        """
        if self._identity is None:
            return
        found = self._stat()
        if found is None:
            raise StoreUnavailable(
                f"the skill store {self._path} was deleted or moved away while kite-skills "
                "had it open; nothing was read or saved — put the file back, or restart "
                "kite-skills to start a new, empty store there",
                "moved",
            )
        if _identity(found) == self._identity:
            return
        log.warning("the skill store %s was replaced by another file; reopening it", self._path)
        # First empty our WAL into the old file: the -wal and -shm files beside the path are
        # found by name, and the new file must not inherit frames of the old one (SQLite does
        # not remove them when it notices that its file was replaced). If the new file cannot
        # be opened, the next call tries again (the identity still differs).
        with contextlib.suppress(sqlite3.Error):
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self._conn.close()
        fresh = Store.open(self._path, clock=self._clock)
        self._conn = fresh._conn
        self._identity = fresh._identity
        self._version_base += 1 << 32
        self._reported.discard("moved")

    # ---- reads ---------------------------------------------------------------------------

    def data_version(self) -> int:
        """Changes when *another* connection (another process) commits to the file, or when
        the file was replaced by another one (``PRAGMA data_version`` underneath). Poll it to
        notice outside writes."""
        try:
            with self._read() as conn:
                version = self._version_base + int(
                    conn.execute("PRAGMA data_version").fetchone()[0]
                )
        except StoreUnavailable as exc:
            if exc.reason != "moved":
                raise
            # Nothing can commit to a deleted file: its version stands still, and the reads
            # and writes that follow say what happened. When a file appears at the path
            # again, the next call reopens it and the version moves on.
            self._report_once("moved", str(exc))
            return self._last_version
        self._last_version = version
        return version

    def _report(self, error: UnreadableSkill) -> None:
        """Log a skill skipped in a listing, once per skill for this handle."""
        self._report_once(error.name, f"{error}; it is left out of listings and search")

    def _report_once(self, key: str, message: str) -> None:
        if key not in self._reported:
            self._reported.add(key)
            log.warning("%s", message)

    def _summaries(self, rows: list[tuple[object, object]]) -> list[SkillSummary]:
        found = []
        for name, description in rows:
            good_name, good_description = valid_text(name), valid_text(description)
            if good_name is None or good_description is None:
                fields = (("name", good_name), ("description", good_description))
                self._report(_unreadable(name, [f for f, ok in fields if ok is None], self.command))
                continue
            if not is_skill_name(good_name):
                self._report(refused_name(good_name, self.command))
                continue
            found.append(SkillSummary(good_name, good_description))
        return found

    def list_live(self, limit: int = DEFAULT_LIMIT) -> list[SkillSummary]:
        """Live skills sorted by name (names and descriptions only); ``limit`` 1–100.
        A skill whose text is not valid UTF-8 is left out and logged once."""
        check_limit(limit)
        with self._read() as conn:
            rows = conn.execute(_sql.LIST_LIVE, (limit,)).fetchall()
        return self._summaries(rows)

    def search(self, q: str, limit: int = DEFAULT_LIMIT) -> list[SkillSummary]:
        """Live skills matching any word of ``q`` in name, description or body, best first.

        Words are stemmed (``funds`` finds ``fund``); skills with more and rarer matching words
        rank first, and a match in the name counts more than one in the description, which
        counts more than one in the body (bm25; see :mod:`._search` for how it stays fast).
        Any text is accepted: each word is searched literally (FTS operators are not parsed)
        and the last word also matches as a prefix. Empty or blank ``q`` lists live skills, as
        :meth:`list_live` does; text with no letters or digits returns ``[]``. ``limit``
        1–100; ``q`` at most 1000 characters.
        """
        check_query(q)
        check_limit(limit)
        if not q.strip():
            return self.list_live(limit)
        phrases = _sql.fts_phrases(q)
        if not phrases:
            return []
        with self._read() as conn:
            rows = _search.ranked(conn, phrases, limit)
        return self._summaries(rows)

    def read_live(self, name: str) -> Skill:
        """The live skill ``name``. Raises ``InvalidSkill`` for a malformed name,
        ``UnknownSkill`` for no such skill, ``SkillNotLive`` for a draft or archived one."""
        skill = self._find(name)
        if skill is None:
            raise UnknownSkill(name, f"no live skill named '{name}'; find one with the skills tool")
        if skill.status == DRAFT:
            raise SkillNotLive(
                name,
                DRAFT,
                f"'{name}' is a draft, not live: a person must publish it first — ask the "
                "person to open their kite-skills dashboard (they can start it with: "
                f"{self.command} dashboard) and publish '{name}' there",
            )
        if skill.status == ARCHIVED:
            raise SkillNotLive(
                name,
                ARCHIVED,
                f"'{name}' is archived (taken out of service), not live: it can be put back "
                "with skillPublish",
            )
        assert skill.status == LIVE
        return skill

    def get(self, name: str) -> Skill:
        """The skill ``name`` in any state, with any proposed revision (for people)."""
        skill = self._find(name)
        if skill is None:
            raise self.unknown(name)
        return skill

    def unknown(self, name: str) -> UnknownSkill:
        """What a person is told who named no skill: the names that look like ``name``
        (:mod:`kite_skills.suggest`; drafts included, so never for an agent), and where to
        list them."""
        from kite_skills.suggest import did_you_mean, similar

        with self._read() as conn:
            names = [decoded(row[0]) for row in conn.execute(_sql.ALL_NAMES)]
        offer = did_you_mean([quoted(n) for n in similar(name, names)])
        listing = f"'{self.command} skills list'"
        if offer:
            return UnknownSkill(
                name, f"no skill named '{name}'; {offer} (list them with {listing})"
            )
        return UnknownSkill(name, f"no skill named '{name}'; list them with {listing}")

    def _find(self, name: str) -> Skill | None:
        try:
            check_name(name)
        except InvalidSkill:
            # Another tool may have written a row under this name: name it (UnreadableSkill).
            if not isinstance(name, str) or len(name) > MAX_LOOKUP_CHARS:
                raise
            with self._read() as conn:
                row = conn.execute(_sql.SELECT_SKILL, (name,)).fetchone()
            if row is None:
                raise
            _skill(row, self.command)
            raise
        with self._read() as conn:
            row = conn.execute(_sql.SELECT_SKILL, (name,)).fetchone()
        return _skill(row, self.command) if row is not None else None

    def list_all(self) -> list[Skill]:
        """Every skill in every state, sorted by name (for people). A skill whose text is
        not valid UTF-8 is left out and logged once (``get`` names it)."""
        return self._all(None)

    def live_versions(self) -> dict[str, str]:
        """Each live skill's name and ``updated_at``, by name: what the MCP server watches to
        announce changes. Reads no text, so one unreadable description or body cannot stop it,
        and only a covering index, so it stays cheap with 100,000 skills."""
        with self._read() as conn:
            return dict(_rows_decoded_by_sqlite(conn, _sql.LIVE_VERSIONS))

    def live_summaries(self) -> list[SkillSummary]:
        """Every live skill's name and description, sorted by name, with no limit (what MCP
        lists as prompts): reads no body. A skill whose name or description is not valid
        UTF-8 is left out and logged once. Kept between calls by
        :class:`~kite_skills.store.live.LiveSkills`, which knows when it changed."""
        with self._read() as conn:
            rows = conn.execute(_sql.LIVE_SUMMARIES).fetchall()
        return self._summaries(rows)

    def live_descriptions(self, names: Sequence[str]) -> dict[str, str]:
        """The descriptions of those of ``names`` that are live, by name (no body read; a row
        not valid UTF-8 is left out and logged once): what changed skills now say, without
        reading every live skill's description."""
        found: dict[str, str] = {}
        with self._read() as conn:
            for start in range(0, len(names), _sql.NAMES_PER_QUERY):
                chunk = list(names[start : start + _sql.NAMES_PER_QUERY])
                query = _sql.LIVE_SUMMARIES_NAMED.format(", ".join("?" * len(chunk)))
                rows = conn.execute(query, chunk).fetchall()
                found.update((s.name, s.description) for s in self._summaries(rows))
        return found

    def mark(self) -> Mark:
        """What differs whenever anything may have been committed to the file since it was
        taken: the file under the path (replaced: another mark), commits by other connections
        (``PRAGMA data_version``) and this connection's own changes (``total_changes``). One
        PRAGMA, no row read. A replaced file is reopened first, and a failure raises
        ``StoreUnavailable``, as every read does."""
        with self._read() as conn:
            return self._mark(conn)

    def mark_without_waiting(self) -> Mark | None:
        """:meth:`mark` for an event loop, which must never wait on a write: None at once when
        another thread is using the store, and None when the path no longer names the open
        file, the store is closed or the PRAGMA fails (the caller then reads the usual way,
        off the loop)."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            if self._closed or not self._same_file():
                return None
            return self._mark(self._conn)
        except (*_STORE_FAILURES, StoreUnavailable):
            return None
        finally:
            self._lock.release()

    def _mark(self, conn: sqlite3.Connection) -> Mark:
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        return (self._version_base, version, conn.total_changes)

    def live_skills(self) -> list[Skill]:
        """Every live skill with its text, sorted by name (what MCP serves as resources).
        A skill whose text is not valid UTF-8 is left out and logged once."""
        return self._all(LIVE)

    def unreadable(self) -> list[str]:
        """Names (``\\xNN`` for bad bytes) of skills whose text is not valid UTF-8 or whose
        name kite-skills does not accept (rows another tool wrote)."""
        return [error.name for error in self.unreadable_skills()]

    def unreadable_skills(self) -> list[UnreadableSkill]:
        """The rows :meth:`unreadable` names, each as the error that says what to do."""
        with self._read() as conn:
            rows = conn.execute(_sql.SELECT_ALL).fetchall()
        found = []
        for row in rows:
            try:
                _skill(row, self.command)
            except UnreadableSkill as exc:
                found.append(exc)
        return found

    def list_all_and_unreadable(self) -> tuple[list[Skill], list[UnreadableSkill]]:
        """:meth:`list_all` and :meth:`unreadable_skills` from one read (the dashboard's
        index lists both)."""
        return self._all_and_unreadable(None)

    def _all(self, status: str | None) -> list[Skill]:
        return self._all_and_unreadable(status)[0]

    def _all_and_unreadable(self, status: str | None) -> tuple[list[Skill], list[UnreadableSkill]]:
        with self._read() as conn:
            rows = conn.execute(_sql.SELECT_ALL).fetchall()
        found, unreadable = [], []
        for row in rows:
            if status is not None and row[3] != status:
                continue
            try:
                found.append(_skill(row, self.command))
            except UnreadableSkill as exc:
                self._report(exc)
                unreadable.append(exc)
        return found, unreadable

    def proposer(self, skill: Skill) -> tuple[Author, str]:
        """Who wrote ``skill``'s waiting text, and when: the proposal's author; else the
        text's recorded writer (what ``skills show`` says too: a person who edited an agent's
        draft wrote it), since the audit row that wrote this revision; for a text written
        before writers were recorded, the newest audit row that left text waiting."""
        if skill.proposed is not None:
            return skill.proposed.author, skill.proposed.proposed_at
        entries = self.audit(limit=20, name=skill.name)
        if skill.written_by.via:
            wrote = (e.at for e in entries if e.revision == skill.revision)
            return skill.written_by, next(wrote, skill.updated_at)
        waiting = waiting_audit_actions()
        for entry in entries:
            if entry.action in waiting:
                return entry.author, entry.at
        return skill.written_by, skill.updated_at

    def waiting(self, skills: Iterable[Skill] | None = None) -> list[Waiting]:
        """What waits for a person among ``skills`` (None: every readable skill), newest
        first, each with who wrote it: the one answer every door shows."""
        found = []
        for skill in self.list_all() if skills is None else skills:
            if not skill.waiting:
                continue
            by, at = self.proposer(skill)
            kind = "revision" if skill.proposed is not None else "draft"
            newest = self.audit(limit=1, name=skill.name) if kind == "draft" else []
            if newest and sends_back(newest[0].action):  # the agent's turn, with a reason
                kind, by, at = "sent-back", newest[0].author, newest[0].at
            found.append(Waiting(skill, kind, by, at))
        found.sort(key=lambda w: w.at, reverse=True)
        return found

    def audit(
        self, limit: int = 50, name: str | None = None, via: str | None = None
    ) -> list[AuditEntry]:
        """The newest ``limit`` audit rows (1–10000), newest first: optionally only one
        skill's, and only those made one way (``via``, one of :data:`~.lifecycle.VIAS`)."""
        check_limit(limit, MAX_AUDIT_LIMIT)
        if via is not None and via not in VIAS:
            raise InvalidQuery(f"via must be one of {', '.join(VIAS)}, not {quoted(via)}")
        query = {
            (False, False): _sql.AUDIT_ALL,
            (True, False): _sql.AUDIT_FOR,
            (False, True): _sql.AUDIT_VIA,
            (True, True): _sql.AUDIT_FOR_VIA,
        }[name is not None, via is not None]
        args = [check_name(name)] if name is not None else []
        args += [via] if via is not None else []
        with self._read() as conn:
            rows = conn.execute(query, (*args, limit)).fetchall()
        return [_audit_entry(row) for row in rows]

    def revisions_held(self, name: str) -> set[str]:
        """Every revision id ``name`` has held or been proposed as, as far as the audit log
        knows (rows written since issue 23), plus its current and proposed texts."""
        skill = self.get(name)
        with self._read() as conn:
            rows = conn.execute(_sql.AUDIT_REVISIONS, (name,)).fetchall()
        held = {str(row[0]) for row in rows}
        held.add(skill.revision)
        if skill.proposed is not None:
            held.add(skill.proposed.revision)
        return held

    def history(self, name: str, limit: int = 200) -> list[PastText]:
        """Every text ``name`` has had, newest first (up to ``limit``, 1–10000): the texts it
        held and the revisions agents proposed, whatever became of them. Kept since schema
        version 6; a store migrated then starts with each skill's text of that moment. The
        history outlives a deleted skill, as the audit log does."""
        check_name(name)
        check_limit(limit, MAX_AUDIT_LIMIT)
        with self._read() as conn:
            rows = conn.execute(_sql.HISTORY_FOR, (name, limit)).fetchall()
        return [_past_text(row) for row in rows]

    def history_text(self, name: str, text_id: int) -> PastText:
        """One text of ``name``'s history by its id (``UnknownSkill`` when it has none)."""
        check_name(name)
        with self._read() as conn:
            row = conn.execute(_sql.HISTORY_ONE, (name, text_id)).fetchone()
        if row is None:
            raise UnknownSkill(
                name,
                f"'{name}' has no text #{text_id} in its history; see its history with "
                f"'{self.command} skills history {name}' (or History on its dashboard page)",
            )
        return _past_text(row)

    def reads(self, kind: str | None = None, item: str | None = None) -> list[ReadReceipt]:
        """Read receipts, newest first: every one kept (``kind`` None), or one skill's or
        recipe's (``kind`` ``skill``/``recipe`` and ``item``)."""
        with self._read() as conn:
            if kind is None:
                rows = conn.execute(_sql.READS_ALL, (MAX_AUDIT_LIMIT,)).fetchall()
            else:
                rows = conn.execute(_sql.READS_FOR, (kind, item)).fetchall()
        return [ReadReceipt(*(decoded(v) for v in row)) for row in rows]

    def read_receipts_on(self) -> bool:
        """Whether the server records read receipts (the person's setting; on by default)."""
        with self._read() as conn:
            return receipts.recording(conn)

    def integrity_check(self) -> list[str]:
        """``PRAGMA integrity_check`` plus the FTS index check; ``[]`` when all is well."""
        with self._read() as conn:
            problems = [r[0] for r in conn.execute("PRAGMA integrity_check") if r[0] != "ok"]
            try:
                conn.execute("INSERT INTO skills_fts (skills_fts) VALUES ('integrity-check')")
            except sqlite3.DatabaseError as exc:
                problems.append(f"full-text index: {exc}")
        return problems


def _audit_entry(row: tuple[Any, ...]) -> AuditEntry:
    """An audit row; text that is not valid UTF-8 (written by another tool) shown as ``\\xNN``."""
    at, skill, action, from_status, to_status, via, who, detail = (decoded(v) for v in row[1:9])
    return AuditEntry(
        int(row[0]),
        at,
        skill,
        action,
        from_status if row[4] is not None else None,
        to_status if row[5] is not None else None,
        via,
        who,
        detail,
        decoded(row[9]) if row[9] is not None else None,
    )


def _past_text(row: tuple[Any, ...]) -> PastText:
    """A history row; text that is not valid UTF-8 (another tool wrote it) shown as ``\\xNN``."""

    def text(value: object) -> str:
        good = valid_text(value)
        return good if good is not None else decoded(value)

    decided = Author(decoded(row[12]), decoded(row[13])) if row[11] is not None else None
    return PastText(
        id=int(row[0]),
        skill=decoded(row[1]),
        kind=decoded(row[2]),
        action=decoded(row[3]),
        status=decoded(row[4]),
        description=text(row[5]),
        body=text(row[6]),
        at=decoded(row[7]),
        written_by=Author(decoded(row[8]), decoded(row[9])),
        live_at=None if row[10] is None else decoded(row[10]),
        decided_at=None if row[11] is None else decoded(row[11]),
        decided_by=decided,
        reason=None if row[14] is None else decoded(row[14]),
    )


def _identity(found: os.stat_result) -> tuple[int, int]:
    return (found.st_dev, found.st_ino)


def _prepare_file(path: Path) -> None:
    """Create missing parent directories (0o700) and the file (0o600)."""
    if path.is_dir():
        raise _failures.is_a_directory(os.fspath(path))
    try:
        os_dirs.make_private(path.parent)  # every directory we create is user-only
        if not path.exists():
            fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(fd)
            os.chmod(path, 0o600)
    except OSError as exc:
        reason = {errno.EROFS: "read-only", errno.EACCES: "read-only", errno.ENOSPC: "disk-full"}
        raise StoreUnavailable(
            f"cannot create the skill store {path}: {exc.strerror or exc} — check that you "
            f"may write to {path.parent}, or {_failures.ELSEWHERE}",
            reason.get(exc.errno or 0, "cannot-open"),
        ) from exc


_STORE_FAILURES: Final = (sqlite3.OperationalError, sqlite3.DatabaseError)
"""What a read or write maps to ``StoreUnavailable`` (IntegrityError and ProgrammingError, which
mean a bug in kite-skills, are re-raised as they are; see :meth:`Store._unavailable`)."""


@functools.cache
def _require_fts5() -> None:
    """Check once per process, on a private in-memory database (never the store file, whose
    own problems are reported as what they are), that this SQLite has FTS5."""
    conn = sqlite3.connect(MEMORY)
    try:
        _check_fts5(conn)
    finally:
        conn.close()


def _check_fts5(conn: sqlite3.Connection) -> None:
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.kite_fts5_probe USING fts5(x)")
    except sqlite3.OperationalError as exc:
        raise StoreUnavailable(
            f"this SQLite build ({sqlite3.sqlite_version}) has no FTS5, which the skill store "
            "needs for search; use a Python built against SQLite 3.9 or newer with FTS5",
            "no-fts5",
        ) from exc
