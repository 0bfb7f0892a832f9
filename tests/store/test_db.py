"""Opening the file: location, permissions, migrations, WAL, and two processes sharing it."""

from __future__ import annotations

import sqlite3
import stat
import threading
from contextlib import closing
from pathlib import Path

import pytest

from kite_skills.errors import InvalidQuery, SchemaTooNew, StoreUnavailable
from kite_skills.store import (
    LATEST_VERSION,
    SkillSummary,
    Store,
    agent,
    default_db_path,
    human,
)
from kite_skills.store import db as store_db

from .helpers import archived, counts, draft, live


def _version(path: Path) -> list[int]:
    with closing(sqlite3.connect(path)) as conn:
        return [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY 1")]


def test_fresh_file_gets_every_migration(db_path: Path) -> None:
    with Store.open(db_path):
        pass
    assert _version(db_path) == list(range(1, LATEST_VERSION + 1))
    with closing(sqlite3.connect(db_path)) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert {"skills", "audit_log", "skills_fts", "schema_version"} <= tables


def test_reopen_keeps_data_and_does_not_migrate_again(db_path: Path) -> None:
    with Store.open(db_path) as store:
        live(store, "compare-funds")
    with Store.open(db_path) as store:
        assert [s.name for s in store.list_live()] == ["compare-funds"]
    assert _version(db_path) == list(range(1, LATEST_VERSION + 1))


def test_newer_schema_is_refused(db_path: Path) -> None:
    with Store.open(db_path) as store:
        draft(store, "keep-me")
    with closing(sqlite3.connect(db_path)) as conn, conn:
        conn.execute("INSERT INTO schema_version VALUES (?, 'later')", (LATEST_VERSION + 1,))
    with pytest.raises(SchemaTooNew) as info:
        Store.open(db_path)
    assert str(info.value) == (
        f"the skill store {db_path} has schema version {LATEST_VERSION + 1}, but this "
        f"kite-skills understands only up to version {LATEST_VERSION}: it was written by a "
        "newer kite-skills; upgrade kite-skills, or choose another file with --db or "
        "KITE_SKILLS_DB"
    )
    assert counts(db_path) == (1, 1)  # untouched


def test_migrations_are_numbered_and_complete() -> None:
    found = store_db.migrations()
    assert [v for v, _ in found] == list(range(1, LATEST_VERSION + 1))
    statements = list(store_db._statements(found[0][1]))
    assert any("CREATE TRIGGER skills_fts_update" in s for s in statements)


def test_failed_migration_leaves_nothing_behind(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = store_db.migrations()
    monkeypatch.setattr(
        store_db, "migrations", lambda: [(1, good[0][1] + "\nCREATE TABLE broken (;\n")]
    )
    with pytest.raises(StoreUnavailable):
        Store.open(db_path)
    with closing(sqlite3.connect(db_path)) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "skills" not in tables


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("hello, this is not SQLite " * 100)
    with pytest.raises(StoreUnavailable) as info:
        Store.open(path)
    assert str(info.value) == (
        f"{path} is not a kite-skills store: it is not an SQLite database (or it is "
        "encrypted) — choose another file with --db or KITE_SKILLS_DB"
    )
    assert info.value.reason == "not-a-database"


def test_directory_that_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreUnavailable, match="cannot create the skill store"):
        Store.open(blocker / "sub" / "skills.db")


def test_missing_fts5_is_a_clear_error() -> None:
    class NoFts:
        def execute(self, sql: str) -> None:
            raise sqlite3.OperationalError("no such module: fts5")

    with pytest.raises(StoreUnavailable) as info:
        store_db._check_fts5(NoFts())  # type: ignore[arg-type]
    assert "has no FTS5, which the skill store needs for search" in str(info.value)
    assert info.value.reason == "no-fts5"


def test_permissions(tmp_path: Path) -> None:
    path = tmp_path / "new" / "deeper" / "skills.db"
    with Store.open(path) as store:
        draft(store, "x")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        for f in path.parent.iterdir():  # -wal and -shm follow the database file
            assert stat.S_IMODE(f.stat().st_mode) & 0o077 == 0, f
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.parent.parent.stat().st_mode) == 0o700


def test_existing_directory_is_left_alone(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    with Store.open(tmp_path / "skills.db"):
        pass
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755


def test_default_db_path() -> None:
    assert default_db_path({"KITE_SKILLS_DB": "/x/y.db", "XDG_DATA_HOME": "/d"}) == Path("/x/y.db")
    assert default_db_path({"KITE_SKILLS_DB": "~/s.db", "HOME": "/h"}) == Path("/h/s.db")
    assert default_db_path({"XDG_DATA_HOME": "/d", "HOME": "/h"}) == Path(
        "/d/kite-skills/skills.db"
    )
    assert default_db_path({"HOME": "/h"}) == Path("/h/.local/share/kite-skills/skills.db")
    assert default_db_path({"XDG_DATA_HOME": "relative", "HOME": "/h"}) == Path(
        "/h/.local/share/kite-skills/skills.db"
    )
    assert default_db_path({"KITE_SKILLS_DB": "  ", "HOME": "/h"}).name == "skills.db"
    assert default_db_path({}).is_absolute()


def test_live_summaries_are_every_live_skill_by_name_without_a_limit(db_path: Path) -> None:
    many = [(f"fund-{i:03d}", f"Fund number {i}", f"# Fund {i}\n") for i in range(150, 0, -1)]
    with Store.open(db_path) as store:
        human.import_skills(store, many, via="cli", who="alice")
        draft(store, "a-draft")
        archived(store, "an-archived")
        live(store, "zeta", description="Last by name")
    with Store.open(db_path) as store:  # a real file, read afresh
        found = store.live_summaries()
        assert [s.name for s in found] == sorted([n for n, _, _ in many] + ["zeta"])
        assert found[0] == SkillSummary("fund-001", "Fund number 1")
        assert found[-1] == SkillSummary("zeta", "Last by name")
        assert [(s.name, s.description) for s in found] == [
            (s.name, s.description) for s in store.live_skills()
        ]


def test_live_summaries_follow_every_write_to_the_file(db_path: Path) -> None:
    def names(store: Store) -> list[str]:
        return [s.name for s in store.live_summaries()]

    with Store.open(db_path) as store, Store.open(db_path) as other:
        live(store, "alpha")
        assert names(store) == ["alpha"]
        names(store).clear()  # a caller's list is its own
        assert names(store) == ["alpha"]
        live(store, "beta")  # this connection
        assert names(store) == ["alpha", "beta"]
        human.archive(other, "alpha", via="cli", who="alice")  # another connection
        assert names(store) == ["beta"]
        with closing(sqlite3.connect(db_path)) as conn, conn:  # another tool
            conn.execute("UPDATE skills SET description = 'Changed' WHERE name = 'beta'")
        assert store.live_summaries() == [SkillSummary("beta", "Changed")]
        agent.save(store, "beta", "Proposed", "# New\n", who="bot")  # a revision: not live yet
        assert store.live_summaries() == [SkillSummary("beta", "Changed")]
        human.accept_revision(
            store, "beta", rev=store.get("beta").proposed.revision, via="cli", who="alice"
        )
        assert store.live_summaries() == [SkillSummary("beta", "Proposed")]


def test_two_connections_see_each_others_writes(db_path: Path) -> None:
    with Store.open(db_path) as server, Store.open(db_path) as dashboard:
        before = server.data_version()
        assert server.data_version() == before  # reading alone changes nothing
        draft(server, "compare-funds")
        assert server.data_version() == before  # its own writes do not count
        human.publish(
            dashboard,
            "compare-funds",
            rev=dashboard.get("compare-funds").revision,
            via="dashboard",
            who="alice",
        )
        after = server.data_version()
        assert after != before
        assert [s.name for s in server.list_live()] == ["compare-funds"]
        dashboard.list_live()
        assert server.data_version() == after
        agent.unpublish(server, "compare-funds", who="bot")
        assert dashboard.get("compare-funds").status == "archived"


def test_a_write_waits_for_another_writer(db_path: Path) -> None:
    with Store.open(db_path) as a, Store.open(db_path) as b:
        draft(a, "first")
        done = threading.Event()
        with a.transaction():
            t = threading.Thread(target=lambda: (draft(b, "second"), done.set()))
            t.start()
            assert not done.wait(0.2)  # blocked by a's transaction, not failed
        t.join(5)
        assert done.is_set()
        assert {s.name for s in a.list_all()} == {"first", "second"}


def test_shared_between_threads(store: Store) -> None:
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for j in range(10):
                draft(store, f"t{i}-{j}")
                store.search("fund")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(store.list_all()) == 40


def test_closed_store(db_path: Path) -> None:
    store = Store.open(db_path)
    store.close()
    store.close()  # twice is fine
    with pytest.raises(StoreUnavailable, match="the skill store is closed"):
        store.list_live()


def test_a_failed_write_rolls_back(store: Store, db_path: Path) -> None:
    draft(store, "x")
    with pytest.raises(RuntimeError), store.transaction() as conn:
        conn.execute("DELETE FROM skills")
        raise RuntimeError("boom")
    assert counts(db_path) == (1, 1)


def test_timestamps_are_utc_iso(store: Store) -> None:
    draft(store, "x")
    skill = store.get("x")
    assert skill.created_at.endswith("Z") and "T" in skill.created_at
    assert store.audit()[0].at == skill.created_at


def test_audit_filters_and_limits(store: Store) -> None:
    live(store, "a")
    draft(store, "b")
    assert [e.action for e in store.audit(name="a")] == ["publish", "create"]
    assert len(store.audit(limit=1)) == 1
    assert store.audit(name="zzz") == []


def test_audit_filters_by_via_over_the_whole_log(store: Store) -> None:
    live(store, "a")  # create (mcp), publish (cli)
    for i in range(30):
        draft(store, f"n{i}")  # 30 newer rows, all made over MCP
    assert [(e.skill, e.action) for e in store.audit(limit=5, via="cli")] == [("a", "publish")]
    assert [e.action for e in store.audit(name="a", via="mcp")] == ["create"]
    assert len(store.audit(limit=5, via="mcp")) == 5
    assert store.audit(via="dashboard") == []
    with pytest.raises(InvalidQuery, match="via must be one of mcp, dashboard, cli, not 'web'"):
        store.audit(via="web")
