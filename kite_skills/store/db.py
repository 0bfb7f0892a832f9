"""The store: one SQLite file, its migrations, and the read side.

Writes live in :mod:`kite_skills.store.agent` (what an MCP client may do) and
:mod:`kite_skills.store.human` (what a person may do); both go through :meth:`Store._write`,
one ``BEGIN IMMEDIATE`` transaction per action, state change and audit row together.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Final, Self

from kite_skills.errors import SchemaTooNew, SkillNotLive, StoreUnavailable, UnknownSkill

from . import _search, _sql
from ._validate import DEFAULT_LIMIT, MAX_AUDIT_LIMIT, check_limit, check_name, check_query
from .lifecycle import ARCHIVED, DRAFT, LIVE
from .records import AuditEntry, Revision, Skill, SkillSummary

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS: Final = 5000
_MIGRATION_RE: Final = re.compile(r"(\d{4})_[a-z0-9_]+\.sql")
MEMORY: Final = ":memory:"

Clock = Callable[[], datetime]


def default_db_path(env: Mapping[str, str]) -> Path:
    """Where the store lives: ``KITE_SKILLS_DB`` if set, else
    ``$XDG_DATA_HOME/kite-skills/skills.db`` (``~/.local/share/kite-skills/skills.db``).

    Reads only ``env`` (the CLI passes ``os.environ``); a leading ``~`` means ``env["HOME"]``.
    """
    explicit = env.get("KITE_SKILLS_DB", "").strip()
    if explicit:
        if explicit == "~" or explicit.startswith("~/"):
            return _home(env) / explicit[2:]
        return Path(explicit)
    data_home = env.get("XDG_DATA_HOME", "").strip()
    # The XDG spec says a relative XDG_DATA_HOME is invalid and must be ignored.
    base = Path(data_home) if data_home and os.path.isabs(data_home) else None
    if base is None:
        base = _home(env) / ".local" / "share"
    return base / "kite-skills" / "skills.db"


def _home(env: Mapping[str, str]) -> Path:
    home = env.get("HOME", "").strip()
    if home:
        return Path(home)
    import pwd

    return Path(pwd.getpwuid(os.getuid()).pw_dir)


def migrations() -> list[tuple[int, str]]:
    """The bundled migrations as ``(version, sql)``, numbered 1..N without gaps."""
    folder = resources.files("kite_skills.store").joinpath("migrations")
    found: list[tuple[int, str]] = []
    for entry in folder.iterdir():
        match = _MIGRATION_RE.fullmatch(entry.name)
        if match:
            found.append((int(match.group(1)), entry.read_text(encoding="utf-8")))
    found.sort()
    if [v for v, _ in found] != list(range(1, len(found) + 1)):
        raise AssertionError(f"migrations are not numbered 1..N: {[v for v, _ in found]}")
    return found


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


def _skill(row: tuple) -> Skill:  # type: ignore[type-arg]
    (name, description, body, status, created, updated, published, p_desc, p_body, p_at, p_by) = row
    proposed = (
        Revision(description=p_desc, body=p_body, proposed_at=p_at, proposed_by=p_by or "")
        if p_body is not None
        else None
    )
    return Skill(name, description, body, status, created, updated, published, proposed)


class Store:
    """A handle on one store file. Safe to share between threads (one lock guards the
    connection). Use :meth:`open`; close it with :meth:`close` or a ``with`` block."""

    def __init__(self, conn: sqlite3.Connection, path: str, clock: Clock) -> None:
        self._conn = conn
        self._path = path
        self._clock = clock
        self._lock = threading.RLock()
        self._closed = False

    # ---- opening -------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, clock: Clock | None = None) -> Store:
        """Open (creating if needed) the store at ``path`` and bring its schema up to date.

        Creates a missing parent directory with mode 0o700 and a new file with mode 0o600.
        Raises ``SchemaTooNew`` for a file written by a newer kite-skills and
        ``StoreUnavailable`` when the file cannot be opened or SQLite lacks FTS5.
        """
        where = os.fspath(path)
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
            raise StoreUnavailable(
                f"cannot open the skill store {where}: {exc}; check the path and its "
                "permissions, or choose another file with --db or KITE_SKILLS_DB"
            ) from exc
        store = cls(conn, where, clock or _utc_now)
        try:
            store._setup()
        except BaseException:
            conn.close()
            raise
        return store

    def _setup(self) -> None:
        conn = self._conn
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            _require_fts5(conn)
            if self._path != MEMORY:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    log.warning("skill store %s is in %s mode, not WAL", self._path, mode)
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise StoreUnavailable(
                f"cannot use the skill store {self._path}: {exc}; if it is not a kite-skills "
                "store, choose another file with --db or KITE_SKILLS_DB"
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
                    "written by a newer kite-skills; upgrade kite-skills, or choose another "
                    "file with --db or KITE_SKILLS_DB"
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
            try:
                yield self._conn
            except sqlite3.OperationalError as exc:
                raise self._unavailable(exc) from exc

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction; rolled back on any exception."""
        with self._lock:
            self._check_open()
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise self._unavailable(exc) from exc
            try:
                yield conn
            except BaseException as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.OperationalError):
                    raise self._unavailable(exc) from exc
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise self._unavailable(exc) from exc

    def _check_open(self) -> None:
        if self._closed:
            raise StoreUnavailable("the skill store is closed; open it again with Store.open")

    def _unavailable(self, exc: sqlite3.Error) -> StoreUnavailable:
        return StoreUnavailable(
            f"the skill store could not complete the operation ({exc}); nothing changed. "
            "If another kite-skills process is busy with it, try again in a moment"
        )

    # ---- reads ---------------------------------------------------------------------------

    def data_version(self) -> int:
        """``PRAGMA data_version``: changes when *another* connection (another process)
        commits to the file. Poll it to notice outside writes."""
        with self._read() as conn:
            return int(conn.execute("PRAGMA data_version").fetchone()[0])

    def list_live(self, limit: int = DEFAULT_LIMIT) -> list[SkillSummary]:
        """Live skills sorted by name (names and descriptions only); ``limit`` 1–100."""
        check_limit(limit)
        with self._read() as conn:
            rows = conn.execute(_sql.LIST_LIVE, (limit,)).fetchall()
        return [SkillSummary(name, description) for name, description in rows]

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
            return _search.ranked(conn, phrases, limit)

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
                f"'{name}' is a draft, not live: a person must publish it first "
                f"('kite-skills dashboard', /skills, or 'kite-skills skills publish {name}')",
            )
        if skill.status == ARCHIVED:
            raise SkillNotLive(
                name,
                ARCHIVED,
                f"'{name}' is archived (taken out of service), not live: it can be put back "
                f"with skillPublish or 'kite-skills skills restore {name}'",
            )
        assert skill.status == LIVE
        return skill

    def get(self, name: str) -> Skill:
        """The skill ``name`` in any state, with any proposed revision (for people)."""
        skill = self._find(name)
        if skill is None:
            raise UnknownSkill(name)
        return skill

    def _find(self, name: str) -> Skill | None:
        check_name(name)
        with self._read() as conn:
            row = conn.execute(_sql.SELECT_SKILL, (name,)).fetchone()
        return _skill(row) if row is not None else None

    def list_all(self) -> list[Skill]:
        """Every skill in every state, sorted by name (for people)."""
        with self._read() as conn:
            rows = conn.execute(_sql.SELECT_ALL).fetchall()
        return [_skill(row) for row in rows]

    def live_skills(self) -> list[Skill]:
        """Every live skill with its text, sorted by name (what MCP serves as resources)."""
        return [skill for skill in self.list_all() if skill.status == LIVE]

    def live_versions(self) -> dict[str, str]:
        """Each live skill's ``updated_at`` by name: what to compare to notice a change, read
        from an index alone (no text), so it stays cheap with 100,000 skills."""
        with self._read() as conn:
            return dict(conn.execute(_sql.LIVE_VERSIONS).fetchall())

    def audit(self, limit: int = 50, name: str | None = None) -> list[AuditEntry]:
        """The newest ``limit`` audit rows (1–10000), optionally for one skill, newest first."""
        check_limit(limit, MAX_AUDIT_LIMIT)
        with self._read() as conn:
            if name is None:
                rows = conn.execute(_sql.AUDIT_ALL, (limit,)).fetchall()
            else:
                rows = conn.execute(_sql.AUDIT_FOR, (check_name(name), limit)).fetchall()
        return [AuditEntry(*row) for row in rows]

    def integrity_check(self) -> list[str]:
        """``PRAGMA integrity_check`` plus the FTS index check; ``[]`` when all is well."""
        with self._read() as conn:
            problems = [r[0] for r in conn.execute("PRAGMA integrity_check") if r[0] != "ok"]
            try:
                conn.execute("INSERT INTO skills_fts (skills_fts) VALUES ('integrity-check')")
            except sqlite3.DatabaseError as exc:
                problems.append(f"full-text index: {exc}")
        return problems


def _prepare_file(path: Path) -> None:
    """Create missing parent directories (0o700) and the file (0o600)."""
    try:
        missing = [d for d in (path.parent, *path.parent.parents) if not d.exists()]
        for directory in reversed(missing):  # every directory we create is user-only
            try:
                directory.mkdir(mode=0o700)
            except FileExistsError:  # another process made it first
                continue
            os.chmod(directory, 0o700)
        if not path.exists():
            fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(fd)
            os.chmod(path, 0o600)
    except OSError as exc:
        raise StoreUnavailable(
            f"cannot create the skill store {path}: {exc.strerror or exc}; check the "
            "permissions, or choose another file with --db or KITE_SKILLS_DB"
        ) from exc


def _require_fts5(conn: sqlite3.Connection) -> None:
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.kite_fts5_probe USING fts5(x)")
        conn.execute("DROP TABLE temp.kite_fts5_probe")
    except sqlite3.OperationalError as exc:
        raise StoreUnavailable(
            f"this SQLite build ({sqlite3.sqlite_version}) has no FTS5, which the skill store "
            "needs for search; use a Python built against SQLite 3.9 or newer with FTS5"
        ) from exc
