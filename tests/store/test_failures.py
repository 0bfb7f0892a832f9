"""Issue 9 items 4, 5 and 6: a store that cannot be used says why and what to do; a row another
tool wrote as bytes that are not UTF-8 is named, never a raw exception; a store file deleted
or replaced under a running process is noticed before anything is written into it.

Read-only cases need a user the file permissions bind: when the tests run as root they
switch the effective user to ``nobody`` around the call (root ignores permissions)."""

from __future__ import annotations

import logging
import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from kite_skills.errors import (
    InvalidSkill,
    SchemaTooNew,
    StoreError,
    StoreUnavailable,
    UnreadableSkill,
)
from kite_skills.store import LATEST_VERSION, Store, agent, human
from kite_skills.store import db as store_db

from .helpers import BODY, NOBODY, draft, live, poke, unprivileged


def _give_away(folder: Path) -> None:
    """Make the unprivileged user own ``folder`` and everything in it, as a person would."""
    if os.geteuid() == 0:
        for path in [folder, *folder.rglob("*")]:
            os.chown(path, NOBODY, NOBODY)


def _store_in(folder: Path) -> Path:
    folder.mkdir(mode=0o755)
    path = folder / "skills.db"
    with Store.open(path) as store:
        live(store, "compare-funds")
    _give_away(folder)
    return path


def _not_busy(message: str) -> None:
    assert "busy" not in message and "FTS5" not in message, message


# ---- item 5: each failure named for what it is ---------------------------------------------


def test_read_only_folder_is_named_not_fts5(shared: Path) -> None:
    path = _store_in(shared / "ro")
    path.parent.chmod(0o555)
    with unprivileged(), pytest.raises(StoreUnavailable) as info:
        Store.open(path)
    assert info.value.reason == "read-only"
    assert str(info.value) == (
        f"the skill store {path} is read-only: its folder {path.parent} is not writable, and "
        "SQLite must create skills.db-wal and skills.db-shm beside it — make the folder "
        f"writable (chmod u+w {path.parent}), or choose another file with --db or "
        "KITE_SKILLS_DB"
    )


def test_read_only_file_still_reads_and_refuses_writes_saying_why(shared: Path) -> None:
    path = _store_in(shared / "rofile")
    path.chmod(0o444)
    with unprivileged():
        store = Store.open(path)
        try:
            assert [s.name for s in store.list_live()] == ["compare-funds"]
            with pytest.raises(StoreUnavailable) as info:
                agent.save(store, "new-one", "desc", BODY, who="bot")
        finally:
            store.close()
    assert info.value.reason == "read-only"
    assert str(info.value) == (
        f"the skill store {path} is read-only: the file is not writable; nothing changed — "
        f"make it writable (chmod u+w {path}), or choose another file with --db or "
        "KITE_SKILLS_DB"
    )


def test_folder_where_the_file_cannot_be_created(shared: Path) -> None:
    folder = shared / "locked"
    folder.mkdir(mode=0o555)
    with unprivileged(), pytest.raises(StoreUnavailable) as info:
        Store.open(folder / "skills.db")
    assert info.value.reason == "read-only"
    assert str(info.value).startswith(
        f"cannot create the skill store {folder / 'skills.db'}: Permission denied — check "
        f"that you may write to {folder}"
    )


def test_path_is_a_directory(tmp_path: Path) -> None:
    with pytest.raises(StoreUnavailable) as info:
        Store.open(tmp_path)
    assert info.value.reason == "is-a-directory"
    assert str(info.value) == (
        f"the skill store path {tmp_path} is a directory, not a file — give a file path such "
        f"as {tmp_path / 'skills.db'}, or choose another file with --db or KITE_SKILLS_DB"
    )


def test_corrupt_header_is_not_a_database(db_path: Path) -> None:
    with Store.open(db_path) as store:
        draft(store, "x")
    with db_path.open("r+b") as f:
        f.write(b"this is no longer SQLite format 3")
    with pytest.raises(StoreUnavailable) as info:
        Store.open(db_path)
    assert info.value.reason == "not-a-database"
    _not_busy(str(info.value))


def _corrupt_a_page(db_path: Path) -> None:
    with Store.open(db_path) as store:
        for i in range(40):
            draft(store, f"skill-{i}", body="# Steps\n" + "words " * 400)
    with closing(sqlite3.connect(db_path)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    with db_path.open("r+b") as f:
        f.seek(page * 3)
        f.write(b"\xff" * page)


def test_a_damaged_page_is_named_on_every_read(db_path: Path) -> None:
    _corrupt_a_page(db_path)
    with Store.open(db_path) as store:
        for read in (store.list_all, store.live_skills, lambda: store.get("skill-7")):
            with pytest.raises(StoreUnavailable) as info:
                read()
            assert info.value.reason == "corrupt", info.value
            assert str(info.value).startswith(
                f"the skill store {db_path} is damaged (database disk image is malformed); "
                "nothing changed — restore it from a backup"
            )


def test_future_schema_is_one_class_the_server_can_catch(db_path: Path) -> None:
    with Store.open(db_path):
        pass
    with closing(sqlite3.connect(db_path)) as conn, conn:
        conn.execute("INSERT INTO schema_version VALUES (?, 'later')", (LATEST_VERSION + 1,))
    with pytest.raises(StoreUnavailable) as info:
        Store.open(db_path)
    assert isinstance(info.value, SchemaTooNew)
    assert info.value.reason == "schema-too-new"


def test_busy_is_said_only_when_another_process_holds_the_lock(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_db, "BUSY_TIMEOUT_MS", 50)
    with Store.open(db_path) as store, closing(sqlite3.connect(db_path)) as other:
        other.execute("BEGIN EXCLUSIVE")
        with pytest.raises(StoreUnavailable) as info:
            draft(store, "x")
        other.execute("ROLLBACK")
        draft(store, "x")  # and it works once the other one is done
    assert info.value.reason == "busy"
    assert str(info.value).startswith(
        f"the skill store {db_path} is locked: another process is busy with it and did not "
        "finish within the wait; nothing changed — try again in a moment (SQLITE_BUSY"
    )


def test_disk_full(db_path: Path) -> None:
    with Store.open(db_path) as store:
        pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
        store._conn.execute(f"PRAGMA max_page_count = {pages + 1}")  # the disk "fills up"
        with pytest.raises(StoreUnavailable) as info:
            for i in range(20):
                draft(store, f"big-{i}", body="# Big\n" + "x" * 60_000)
        assert info.value.reason == "disk-full"
        assert str(info.value) == (
            f"the disk holding the skill store {db_path} is full; nothing changed — free some "
            "space and try again, or choose another file with --db or KITE_SKILLS_DB"
        )
        assert store.integrity_check() == []


# ---- item 4: text that is not UTF-8 ----------------------------------------------------------


@pytest.fixture
def bad_rows(store: Store, db_path: Path) -> Store:
    live(store, "good-one", description="A fund check")
    live(store, "bad-live", description="Broken live one")
    draft(store, "bad-draft")
    live(store, "bad-blob")
    poke(db_path, "UPDATE skills SET body = CAST(? AS TEXT) WHERE name = 'bad-live'", b"ok \xff")
    poke(
        db_path, "UPDATE skills SET description = CAST(? AS TEXT) WHERE name = 'bad-draft'", b"\xfe"
    )
    poke(db_path, "UPDATE skills SET body = ? WHERE name = 'bad-blob'", b"\x80 raw bytes")
    poke(db_path, "UPDATE audit_log SET who = CAST(? AS TEXT) WHERE id = 1", b"bot \xff")
    return store


def test_reading_a_bad_row_names_the_skill(bad_rows: Store) -> None:
    with pytest.raises(UnreadableSkill) as info:
        bad_rows.read_live("bad-live")
    assert str(info.value) == (
        "skill 'bad-live' has text that is not valid UTF-8 (in its body) — it was written by "
        "another tool, not kite-skills; a person can delete it with 'kite-skills skills "
        "delete bad-live' or rewrite it with sqlite3"
    )
    with pytest.raises(UnreadableSkill, match=r"'bad-draft' .* \(in its description\)"):
        bad_rows.get("bad-draft")
    with pytest.raises(UnreadableSkill, match=r"'bad-blob' .* \(in its body\)"):
        bad_rows.read_live("bad-blob")
    assert bad_rows.read_live("good-one").description == "A fund check"


def test_listings_skip_bad_rows_and_say_so_once(
    bad_rows: Store, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="kite_skills.store.db")
    for _ in range(3):  # the watcher reads the live set again and again
        assert [s.name for s in bad_rows.live_skills()] == ["good-one"]
        assert [s.name for s in bad_rows.list_all()] == ["good-one"]
        assert isinstance(bad_rows.data_version(), int)
    warned = sorted(r.getMessage() for r in caplog.records)
    assert [m.split("'")[1] for m in warned] == ["bad-blob", "bad-draft", "bad-live"], warned
    assert all(m.endswith("; it is left out of listings and search") for m in warned)
    assert sorted(bad_rows.unreadable()) == ["bad-blob", "bad-draft", "bad-live"]


def test_a_bad_name_is_shown_escaped_and_never_offered_to_the_cli(
    store: Store, db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    live(store, "fine")
    poke(
        db_path,
        "INSERT INTO skills (name, description, body, status, created_at, updated_at)"
        " VALUES (CAST(? AS TEXT), 'd', 'b', 'draft', 't', 't')",
        b"bad-\xffname",
    )
    caplog.set_level(logging.WARNING, logger="kite_skills.store.db")
    assert [s.name for s in store.list_all()] == ["fine"]
    assert store.unreadable() == ["bad-\\xffname"]
    assert caplog.records[0].getMessage() == (
        "skill 'bad-\\xffname' has text that is not valid UTF-8 (in its name) — it was "
        "written by another tool, not kite-skills; a person can remove the row with sqlite3 "
        "(its name is not valid either); it is left out of listings and search"
    )


def test_search_and_list_skip_a_bad_description(bad_rows: Store, db_path: Path) -> None:
    poke(
        db_path,
        "UPDATE skills SET description = CAST(? AS TEXT) WHERE name = 'good-one'",
        b"f\xffund",
    )
    live(bad_rows, "fund-two", description="Another fund")
    found = [s.name for s in bad_rows.search("fund")]
    assert "fund-two" in found and "good-one" not in found
    assert [s.name for s in bad_rows.list_live()] == ["bad-blob", "bad-live", "fund-two"]


def test_the_audit_log_shows_bad_bytes_escaped(bad_rows: Store) -> None:
    first = bad_rows.audit(limit=10_000)[-1]
    assert first.who == "bot \\xff"


def test_writes_still_work_around_bad_rows(bad_rows: Store) -> None:
    agent.save(bad_rows, "bad-draft", "Fixed", "# Fixed\n", who="bot")  # an agent's own draft
    assert bad_rows.get("bad-draft").description == "Fixed"
    agent.save(bad_rows, "bad-live", "Proposal", "# New\n", who="bot")
    human.delete(bad_rows, "bad-blob", via="cli", who="alice")
    with pytest.raises(UnreadableSkill, match="give both a new description and a new body"):
        human.edit(
            bad_rows, "bad-live", rev="0" * 32, description="Only this", via="cli", who="alice"
        )
    assert bad_rows.integrity_check() == []


# ---- item 6: the file deleted or replaced under a running process -------------------------------


def test_a_deleted_store_refuses_writes_and_creates_nothing(db_path: Path) -> None:
    with Store.open(db_path) as store:
        draft(store, "before")
        version = store.data_version()
        for leftover in db_path.parent.glob("skills.db*"):
            leftover.unlink()  # the person removes the file (and its -wal/-shm)
        with pytest.raises(StoreUnavailable) as info:
            draft(store, "lost")
        assert info.value.reason == "moved"
        assert str(info.value) == (
            f"the skill store {db_path} was deleted or moved away while kite-skills had it "
            "open; nothing was read or saved — put the file back, or restart kite-skills to "
            "start a new, empty store there"
        )
        with pytest.raises(StoreUnavailable, match="deleted or moved away"):
            store.list_all()
        # The watcher's poll neither fails nor moves: nothing can commit to a deleted file.
        assert store.data_version() == version
    assert not db_path.exists()


def test_a_replaced_store_is_reopened_and_the_write_lands_in_the_new_file(
    db_path: Path, tmp_path: Path
) -> None:
    replacement = tmp_path / "backup.db"
    with Store.open(replacement) as other:
        live(other, "from-backup")
    with Store.open(db_path) as store:
        draft(store, "old-file-only")
        version = store.data_version()
        os.replace(replacement, db_path)  # e.g. a backup restored over it
        assert store.data_version() != version  # watchers reload
        agent.save(store, "after-replace", "desc", BODY, who="bot")
        assert [s.name for s in store.list_live()] == ["from-backup"]
    with Store.open(db_path) as fresh:
        assert sorted(s.name for s in fresh.list_all()) == ["after-replace", "from-backup"]
        assert fresh.integrity_check() == []


def test_a_file_replaced_during_a_write_is_not_acknowledged(db_path: Path, tmp_path: Path) -> None:
    replacement = tmp_path / "other.db"
    with Store.open(replacement):
        pass
    with Store.open(db_path) as store:
        with pytest.raises(StoreUnavailable) as info, store.transaction() as conn:
            conn.execute(
                "INSERT INTO audit_log (at, skill, action, via, who)"
                " VALUES ('t', 'x', 'a', 'cli', 'p')"
            )
            os.replace(replacement, db_path)
        assert info.value.reason == "moved"
        assert "was deleted or replaced while saving; nothing was saved" in str(info.value)
        assert store.audit(name="x") == []


def test_every_store_failure_is_a_store_error() -> None:
    assert issubclass(StoreUnavailable, StoreError) and issubclass(UnreadableSkill, StoreError)


def test_a_name_the_store_refuses_is_named_skipped_and_can_be_deleted(
    store: Store, db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A row another tool wrote under a name kite-skills never accepts ("Bad Name"): listings
    skip it and name it once, reading it says what to do, and a person can delete it."""
    live(store, "fine")
    poke(
        db_path,
        "INSERT INTO skills (name, description, body, status, created_at, updated_at)"
        " VALUES (?, 'd', 'b', 'draft', 't', 't')",
        "Bad Name",
    )
    caplog.set_level(logging.WARNING, logger="kite_skills.store.db")
    assert [s.name for s in store.list_all()] == ["fine"]
    assert store.unreadable() == ["Bad Name"]
    expected = (
        "skill 'Bad Name' has a name kite-skills does not accept (1–64 lowercase letters, "
        "digits and single hyphens) — it was written by another tool, not kite-skills; a "
        "person can delete it with: kite-skills skills delete 'Bad Name'"
    )
    assert caplog.records[0].getMessage() == expected + "; it is left out of listings and search"
    with pytest.raises(UnreadableSkill) as info:
        store.get("Bad Name")
    assert str(info.value) == expected
    with pytest.raises(InvalidSkill):
        store.get("Other Name")  # no such row: the name is simply refused
    done = human.delete(store, "Bad Name", via="cli", who="alice")
    assert done.changed and done.from_status == "draft"
    assert store.unreadable() == []
    assert store.audit(limit=1)[0].skill == "Bad Name"
    with pytest.raises(InvalidSkill):
        human.delete(store, "Bad Name", via="cli", who="alice")  # gone: refused as before
    with pytest.raises(InvalidSkill):
        human.archive(store, "fine x", via="cli", who="alice")
