"""Issue 9 item 5 at the command line: a store that cannot be used ends the command with one
line naming the real cause and the fix (exit 1, no traceback), never "busy" or "FTS5"."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from kite_skills import invocation
from kite_skills.cli import main
from kite_skills.store import LATEST_VERSION, Store, agent

from .store.helpers import NOBODY, unprivileged


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("kite-skills: error: ")
    assert "busy" not in lines[0] and "FTS5" not in lines[0] and "Traceback" not in lines[0]
    return lines[0].removeprefix("kite-skills: error: ")


def test_path_is_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["skills", "--db", str(tmp_path), "list"]) == 1
    assert _error(capsys).startswith(f"the skill store path {tmp_path} is a directory")


def test_read_only_folder(shared: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = shared / "ro"
    folder.mkdir()
    with Store.open(folder / "skills.db") as store:
        agent.save(store, "x", "d", "# b\n", who="bot")
    if os.geteuid() == 0:
        for path in [folder, *folder.iterdir()]:
            os.chown(path, NOBODY, NOBODY)
    folder.chmod(0o555)
    with unprivileged():
        code = main(["skills", "--db", str(folder / "skills.db"), "list"])
    assert code == 1
    message = _error(capsys)
    assert message.startswith(f"the skill store {folder / 'skills.db'} is read-only: its folder")
    assert f"chmod u+w {folder}" in message


def test_not_a_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("my shopping list\n" * 200)
    assert main(["skills", "--db", str(path), "show", "x"]) == 1
    assert _error(capsys).startswith(f"{path} is not a kite-skills store")


def test_future_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "skills.db"
    with Store.open(path):
        pass
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("INSERT INTO schema_version VALUES (?, 'later')", (LATEST_VERSION + 1,))
    assert main(["skills", "--db", str(path), "log"]) == 1
    assert "written by a newer kite-skills; upgrade kite-skills" in _error(capsys)


def test_a_row_under_a_name_the_store_refuses_can_be_deleted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 24: the hint names a command that works."""
    path = tmp_path / "skills.db"
    with Store.open(path) as store:
        agent.save(store, "fine", "d", "# b\n", who="bot")
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(
            "INSERT INTO skills (name, description, body, status, created_at, updated_at)"
            " VALUES ('Bad Name', 'd', 'b', 'draft', 't', 't')"
        )
    assert main(["skills", "--db", str(path), "show", "Bad Name"]) == 1
    kite = invocation.current().command  # as this program was started (issue 40)
    assert _error(capsys).endswith(f"delete it with: {kite} skills delete 'Bad Name'")
    assert main(["skills", "--db", str(path), "delete", "Bad Name", "--yes"]) == 0
    assert "Bad Name" in capsys.readouterr().out
    with Store.open(path) as store:
        assert store.unreadable() == [] and [s.name for s in store.list_all()] == ["fine"]
