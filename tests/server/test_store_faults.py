"""Issue 9 items 4 and 6 over the server's stdio wire (in process): a row another tool wrote as
bytes that are not UTF-8, and a store file deleted or replaced while the server runs. The server
keeps serving, answers a tool error naming the problem, and never acknowledges a save it did not
keep."""

from __future__ import annotations

import sqlite3
import threading
from contextlib import closing
from pathlib import Path
from typing import Any

from kite_skills.store import Store, human

from .harness import RawPeer


def _call(raw: RawPeer, tool: str, **arguments: Any) -> tuple[bool, str]:
    reply = raw.request("tools/call", {"name": tool, "arguments": arguments})
    assert "error" not in reply, reply
    result = reply["result"]
    text = " ".join(c["text"] for c in result["content"] if c["type"] == "text")
    return bool(result.get("isError")), text


def _import(db: Path, *names: str) -> None:
    with Store.open(db) as store:
        human.import_skills(
            store, [(n, f"About {n}", f"# {n}\n\nSteps.\n") for n in names], via="cli", who="pat"
        )


def _wait_for_list_changed(raw: RawPeer) -> None:
    """Read until the watcher announces a change of the live set: proof that it read the
    store again and is still running. A guard kills a server that never announces it."""
    guard = threading.Timer(60, raw.process.kill)
    guard.start()
    try:
        while raw.receive().get("method") != "notifications/resources/list_changed":
            pass
    finally:
        guard.cancel()


def _listed(raw: RawPeer) -> set[str]:
    reply = raw.request("resources/list")
    return {r["name"] for r in reply["result"]["resources"] if r["uri"].startswith("user-")}


def test_a_row_that_is_not_utf8_is_named_and_the_server_keeps_serving(
    raw: RawPeer, db: Path
) -> None:
    _import(db, "good-one", "bad-one")
    raw.initialize({})
    assert _listed(raw) == {"good-one", "bad-one"}
    with closing(sqlite3.connect(db)) as conn, conn:  # another tool writes raw bytes
        conn.execute("UPDATE skills SET body = CAST(? AS TEXT) WHERE name = 'bad-one'", (b"\xff",))
    _import(db, "another")  # then a real change from another process
    _wait_for_list_changed(raw)  # the watcher read the live set again and kept going
    assert _listed(raw) == {"good-one", "another"}  # the unreadable one is left out
    failed, text = _call(raw, "skillRead", name="bad-one")
    assert failed and text.startswith(
        "skill 'bad-one' has text that is not valid UTF-8 (in its body) — it was written by "
        "another tool"
    ), text
    failed, text = _call(raw, "skills")
    assert not failed and "good-one" in text
    assert raw.request("resources/read", {"uri": "skill://orders/SKILL.md"})["result"]
    code, stderr = raw.close()
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr
    assert "skill 'bad-one' has text that is not valid UTF-8" in stderr  # logged once
    assert len([line for line in stderr.splitlines() if "bad-one" in line]) == 1, stderr


def test_a_deleted_store_refuses_saves_and_a_replaced_one_is_followed(
    raw: RawPeer, db: Path, tmp_path: Path
) -> None:
    raw.initialize({})
    assert _call(raw, "skillSave", name="first", description="d", body="# b\n")[0] is False
    assert _listed(raw) == set()
    for leftover in db.parent.glob(db.name + "*"):
        leftover.unlink()  # the person deletes the store under the running server
    failed, text = _call(raw, "skillSave", name="lost", description="d", body="# b\n")
    assert failed, text
    assert text.endswith(  # after the tool's own words ("skillSave could not …: ")
        f"the skill store {db} was deleted or moved away while kite-skills had it open; "
        "nothing was read or saved — put the file back, or restart kite-skills to start a "
        "new, empty store there"
    )
    assert not db.exists()  # and nothing was created behind the person's back

    backup = tmp_path / "backup.db"
    _import(backup, "restored")
    backup.replace(db)  # a backup put in its place
    _wait_for_list_changed(raw)  # the watcher followed the path to the new file
    assert _listed(raw) == {"restored"}
    failed, text = _call(raw, "skillSave", name="after", description="d", body="# b\n")
    assert not failed, text
    code, stderr = raw.close()
    assert code == 0, stderr
    assert "Traceback" not in stderr, stderr
    with Store.open(db) as store:
        assert sorted(s.name for s in store.list_all()) == ["after", "restored"]
