"""Issue 24: a failing store or a row written by another tool gives the person the store's
own message on a page (never a bare 500 and a traceback); audit fields written by another
tool are shown escaped like everything else. (Store work off the event loop: test_serve.)"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from kite_skills.dashboard.app import build_app
from kite_skills.dashboard.security import Door
from kite_skills.store import Store

from .conftest import BASE, ORIGIN, csrf_of


@pytest.fixture
def person(store: Store, door: Door) -> Iterator[TestClient]:
    """Signed in, and seeing what a browser would: server errors as responses."""
    app = build_app(store, door)
    with TestClient(app, base_url=BASE, follow_redirects=False, raise_server_exceptions=False) as c:
        assert c.get(f"/skills?token={door.issue()}").status_code == 303
        c.headers["origin"] = ORIGIN
        yield c


def _poke(db: Path, sql: str, *params: object) -> None:
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(sql, params)


def test_a_busy_store_shows_its_message(person: TestClient, db: Path) -> None:
    csrf = csrf_of(person.get("/skills/new").text)
    with closing(sqlite3.connect(db, isolation_level=None)) as other:
        other.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
        page = person.post(
            "/skills/new", data={"csrf": csrf, "name": "x", "description": "d", "body": "# b\n"}
        )
        other.execute("ROLLBACK")
    assert page.status_code == 503
    assert "is locked: another process is busy with it" in page.text
    assert "Traceback" not in page.text and "Internal Server Error" not in page.text


def test_a_moved_store_shows_its_message(person: TestClient, db: Path) -> None:
    os.rename(db, db.with_suffix(".moved"))
    page = person.get("/skills")
    assert page.status_code == 503, page.text
    assert "was deleted or moved away while kite-skills had it open" in page.text
    assert "put the file back, or restart kite-skills" in page.text
    assert "Traceback" not in page.text


def test_a_row_under_a_refused_name_is_listed_marked_and_the_index_serves(
    person: TestClient, db: Path
) -> None:
    _poke(
        db,
        "INSERT INTO skills (name, description, body, status, created_at, updated_at)"
        " VALUES (?, 'd', 'b', 'draft', 't', 't')",
        "Bad <b>Name</b>\u202e",
    )
    page = person.get("/skills")
    assert page.status_code == 200, page.text
    assert "compare-funds" in page.text  # the rest of the store is served
    assert 'id="unreadable"' in page.text
    assert "Bad &lt;b&gt;Name&lt;/b&gt;" in page.text and "\\u202e" in page.text
    assert "\u202e" not in page.text and "<b>Name" not in page.text
    assert "Could not be read" in page.text and "written by another tool" in page.text


def test_audit_fields_written_by_another_tool_are_shown_escaped(
    person: TestClient, db: Path
) -> None:
    _poke(
        db,
        "INSERT INTO audit_log (at, skill, action, from_status, to_status, via, who, detail)"
        " VALUES ('2026-01-01T00:00:00Z', 'compare-funds', ?, ?, ?, 'cli', 'x', 'y')",
        "<script>alert(1)</script>\u202epublish",
        "live\u2066",
        "\x1b[2Kdraft",
    )
    for path in ("/skills/log", "/skills/compare-funds"):
        page = person.get(path)
        assert page.status_code == 200, path
        assert "&lt;script&gt;" in page.text and "<script>" not in page.text, path
        for raw in ("\u202e", "\u2066", "\x1b"):
            assert raw not in page.text, (path, raw)
        for escape in ("\\u202e", "\\u2066", "\\x1b"):
            assert escape in page.text, (path, escape)
