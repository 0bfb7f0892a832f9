"""LiveSkills, the one judge of whether the live skills changed: the listing and its generation
(moved by every kind of change to the live skills and by nothing else), the never-waiting
"unchanged?" answer for an event loop, and the look's diff that the MCP server announces.
Real files, two connections where another process's write matters; no transport."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kite_skills.store import AgentView, LiveChange, LiveSkills, ReadReceipt, Store, agent, human

from .helpers import draft, live, poke

WAIT = 10.0  # seconds: a bound for a thread handshake, never a measured speed


@pytest.fixture
def other(db_path: Path, store: Store) -> Iterator[Store]:
    """A second connection on the same file: its commits look like another process's."""
    with Store.open(db_path) as opened:
        yield opened


def _edit(store: Store, name: str, **text: str) -> None:
    human.edit(store, name, rev=store.get(name).revision, via="cli", who="alice", **text)


def _receipt(view: AgentView) -> None:
    writer = view.receipt_writer()
    try:
        assert writer.record([ReadReceipt("skill", "alpha", "bot", "skillRead", view.now())]) == 1
    finally:
        writer.close()


def _accept(store: Store, name: str) -> None:
    agent.save(store, name, "Proposed", "# New\n", who="bot")
    proposed = store.get(name).proposed
    assert proposed is not None
    human.accept_revision(store, name, rev=proposed.revision, via="cli", who="alice")


# ---- the listing and its generation --------------------------------------------------------


def test_the_listing_is_every_live_skill_by_name_and_description(store: Store) -> None:
    live(store, "beta", description="Second")
    live(store, "alpha", description="First")
    draft(store, "a-draft")
    listing = LiveSkills(store).listing()
    assert [(s.name, s.description) for s in listing.skills] == [
        ("alpha", "First"),
        ("beta", "Second"),
    ]


@pytest.mark.parametrize(
    "kind",
    ["published", "archived", "deleted", "description", "body", "accepted revision"],
)
def test_every_kind_of_change_to_the_live_skills_moves_the_generation(
    store: Store, other: Store, kind: str
) -> None:
    live(store, "alpha")
    live(store, "beta")
    draft(store, "gamma")
    changes: dict[str, Callable[[], None]] = {
        "published": lambda: human.publish(
            other, "gamma", rev=other.get("gamma").revision, via="cli", who="alice"
        ),
        "archived": lambda: human.archive(other, "alpha", via="cli", who="alice"),
        "deleted": lambda: human.delete(other, "beta", via="cli", who="alice"),
        "description": lambda: _edit(other, "alpha", description="Better words"),
        "body": lambda: _edit(other, "alpha", body="# Steps\n\n1. Another step.\n"),
        "accepted revision": lambda: _accept(other, "alpha"),
    }
    skills = LiveSkills(store)
    listing_only = LiveSkills(store)  # as prompts/list alone sees them: names, descriptions
    skills.look()
    before = skills.listing().generation
    listed = listing_only.listing().generation
    changes[kind]()
    change = skills.look()
    after = skills.listing().generation
    assert after != before, kind
    assert change.changed, kind
    if kind != "body":  # a body is no part of a listing; the look sees its new version
        assert listing_only.listing().generation != listed, kind


def test_a_description_change_moves_the_generation_even_with_the_same_version(
    db_path: Path, tmp_path: Path
) -> None:
    """A stopped clock (or another tool's UPDATE) leaves ``updated_at`` as it was: the listing
    compares descriptions themselves."""
    stopped = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)
    with Store.open(db_path, clock=lambda: stopped) as store:
        live(store, "alpha")
        skills = LiveSkills(store)
        first = skills.listing()
        with closing(sqlite3.connect(db_path)) as conn, conn:
            conn.execute("UPDATE skills SET description = 'Changed' WHERE name = 'alpha'")
        second = skills.listing()
        assert second.generation != first.generation
        assert [s.description for s in second.skills] == ["Changed"]


@pytest.mark.parametrize(
    "kind", ["read receipt", "new draft", "agent's own draft", "proposed revision", "setting"]
)
def test_commits_beside_the_live_skills_keep_the_generation(
    store: Store, other: Store, kind: str
) -> None:
    live(store, "alpha")
    draft(store, "mine")
    view = AgentView(other)
    changes: dict[str, Callable[[], object]] = {
        "read receipt": lambda: _receipt(view),
        "new draft": lambda: view.save("brand-new", "New", "# New\n", who="bot"),
        "agent's own draft": lambda: view.save("mine", "Mine", "# Mine, longer\n", who="bot"),
        "proposed revision": lambda: view.save("alpha", "Proposed", "# Other\n", who="bot"),
        "setting": lambda: human.set_read_receipts(other, False),
    }
    skills = LiveSkills(store)
    skills.look()
    listed = skills.listing()
    changes[kind]()
    assert skills.unchanged() is None  # something was committed: look again
    assert skills.look() == LiveChange()
    again = skills.listing()
    assert again.generation == listed.generation, kind
    assert again.skills is listed.skills  # kept, not held twice
    assert skills.described(LiveChange()) is False


def test_a_listing_is_read_only_when_something_was_committed(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    live(store, "alpha")
    skills = LiveSkills(store)
    reads: list[int] = []
    real = store.live_summaries

    def counted() -> list[object]:
        reads.append(1)
        return list(real())

    monkeypatch.setattr(store, "live_summaries", counted)
    first = skills.listing()
    assert skills.listing() is first and skills.listing() is first
    assert len(reads) == 1
    live(store, "beta")  # this connection's own write counts too
    assert [s.name for s in skills.listing().skills] == ["alpha", "beta"]
    assert len(reads) == 2


# ---- unchanged(): the event loop's answer, never waiting --------------------------------------


def test_unchanged_answers_only_what_a_listing_would_answer_now(
    db_path: Path, tmp_path: Path
) -> None:
    """The event loop's shortcut: the last listing while nothing changed, else None (then
    listing() reads), and None at once while another thread holds the store."""
    with Store.open(db_path) as store, Store.open(db_path) as other:
        skills = LiveSkills(store)
        live(store, "alpha")
        assert skills.unchanged() is None  # nothing listed yet
        listed = skills.listing()
        assert skills.unchanged() == listed
        assert [s.name for s in listed.skills] == ["alpha"]
        live(store, "beta")  # this connection
        assert skills.unchanged() is None
        skills.listing()
        human.archive(other, "alpha", via="cli", who="alice")  # another connection
        assert skills.unchanged() is None
        assert [s.name for s in skills.listing().skills] == ["beta"]
        assert [s.name for s in (skills.unchanged() or listed).skills] == ["beta"]

        held, release = threading.Event(), threading.Event()

        def hold() -> None:
            with store.transaction():  # what a write in a worker thread holds
                held.set()
                release.wait(WAIT)

        worker = threading.Thread(target=hold)
        worker.start()
        try:
            assert held.wait(WAIT)
            assert skills.unchanged() is None  # never waits for the holder
        finally:
            release.set()
            worker.join()
        assert skills.unchanged() is not None

        db_path.rename(tmp_path / "moved.db")  # the path no longer names the open file
        assert skills.unchanged() is None


# ---- look(), poll() and described(): the diff the server announces ---------------------------


def test_look_says_what_came_went_and_changed_since_the_last_look(
    store: Store, other: Store
) -> None:
    live(store, "alpha")
    live(store, "beta")
    skills = LiveSkills(store)
    assert skills.look() == LiveChange(first=True)
    assert skills.look() == LiveChange()
    live(other, "gamma")
    human.archive(other, "alpha", via="cli", who="alice")
    _edit(other, "beta", body="# Steps\n\n1. Changed.\n")
    assert skills.look() == LiveChange(came_or_went=True, changed=("alpha", "beta", "gamma"))
    _edit(other, "beta", body="# Steps\n\n1. Changed again.\n")
    change = skills.look()
    assert change == LiveChange(came_or_went=False, changed=("beta",)) and change.moved
    assert not skills.look().moved


def test_a_listing_between_two_looks_does_not_hide_the_change(store: Store, other: Store) -> None:
    """The listing (prompts/list) and the look (the change feed) are two readers: reading the
    listing first leaves the look's diff and the description check whole."""
    live(store, "alpha")
    skills = LiveSkills(store)
    assert skills.described(skills.look()) is False  # the first: nothing to compare with
    _edit(other, "alpha", description="Better words")
    assert [s.description for s in skills.listing().skills] == ["Better words"]
    change = skills.look()
    assert change == LiveChange(changed=("alpha",))
    assert skills.described(change) is True
    assert skills.described(change) is False  # told once


def test_described_is_about_descriptions_not_bodies(store: Store, other: Store) -> None:
    live(store, "alpha")
    skills = LiveSkills(store)
    skills.described(skills.look())
    _edit(other, "alpha", body="# Steps\n\n1. Only the body.\n")
    change = skills.look()
    assert change.moved
    assert skills.described(change) is False
    live(other, "beta")  # a new name is a set change, not a description change
    assert skills.described(skills.look()) is False


def test_described_reads_only_the_changed_skills_descriptions(
    store: Store, other: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the first call, a description check reads the changed skills only: reading every
    live skill's description took about a second at 100,000 and held up the next look."""
    for name in ("alpha", "beta", "gamma"):
        live(store, name)
    skills = LiveSkills(store)
    skills.described(skills.look())
    asked: list[list[str]] = []
    read = store.live_descriptions
    monkeypatch.setattr(store, "live_summaries", lambda: pytest.fail("read every description"))
    monkeypatch.setattr(
        store, "live_descriptions", lambda names: asked.append(list(names)) or read(names)
    )
    _edit(other, "beta", description="Beta, better")
    assert skills.described(skills.look()) is True
    assert asked == [["beta"]]


def test_a_failed_description_check_is_made_again_with_the_next_change(
    store: Store, other: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    live(store, "alpha")
    live(store, "beta")
    skills = LiveSkills(store)
    skills.described(skills.look())
    _edit(other, "alpha", description="Alpha, better")
    first = skills.look()
    read = store.live_descriptions

    def busy(names: object) -> dict[str, str]:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(store, "live_descriptions", busy)
    with pytest.raises(sqlite3.OperationalError):
        skills.described(first)
    monkeypatch.setattr(store, "live_descriptions", read)
    _edit(other, "beta", body="# Steps\n\n1. Only the body.\n")
    assert skills.described(skills.look()) is True  # alpha's new words are still told


def test_poll_looks_only_after_another_connections_commit(
    store: Store, other: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    live(store, "alpha")
    skills = LiveSkills(store)
    assert skills.look().first
    looks: list[int] = []
    real = store.live_versions

    def counted() -> dict[str, str]:
        looks.append(1)
        return real()

    monkeypatch.setattr(store, "live_versions", counted)
    assert skills.poll() is None and looks == []
    live(store, "beta")  # its own write: its writer looks itself
    assert skills.poll() is None and looks == []
    assert skills.look() == LiveChange(came_or_went=True, changed=("beta",))
    live(other, "gamma")
    assert skills.poll() == LiveChange(came_or_went=True, changed=("gamma",))
    assert skills.poll() is None and len(looks) == 2


def test_a_failing_store_is_looked_at_whole_once_it_answers(
    store: Store, other: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    live(store, "alpha")
    skills = LiveSkills(store)
    skills.look()
    broken = [True]
    real = store.live_versions

    def flaky() -> dict[str, str]:
        if broken[0]:
            raise sqlite3.DatabaseError("database disk image is malformed")
        return real()

    monkeypatch.setattr(store, "live_versions", flaky)
    live(other, "beta")
    with pytest.raises(sqlite3.DatabaseError):
        skills.poll()
    broken[0] = False
    assert skills.poll() == LiveChange(came_or_went=True, changed=("beta",))


def test_one_unreadable_row_never_blinds_the_look(store: Store, other: Store) -> None:
    live(store, "alpha")
    live(store, "broken")
    poke(store.path, "UPDATE skills SET description = CAST(x'ff00' AS TEXT) WHERE name = 'broken'")
    skills = LiveSkills(store)
    skills.look()
    assert [s.name for s in skills.listing().skills] == ["alpha"]  # left out, logged
    live(other, "gamma")
    assert skills.poll() == LiveChange(came_or_went=True, changed=("gamma",))
    assert [s.name for s in skills.listing().skills] == ["alpha", "gamma"]


def test_a_version_not_valid_utf8_is_still_looked_at(store: Store, other: Store) -> None:
    """The look reads names and versions through sqlite3's own decoder, which fails a whole
    query on one bad value: then it reads them again the usual way, and the store's other
    reads keep their own decoding (a bad row left out and named, never a failed query)."""
    live(store, "alpha")
    live(store, "beta")
    skills = LiveSkills(store)
    skills.look()
    poke(store.path, "UPDATE skills SET updated_at = CAST(x'ff00' AS TEXT) WHERE name = 'alpha'")
    live(other, "gamma")
    assert skills.look() == LiveChange(came_or_went=True, changed=("alpha", "gamma"))
    assert [s.name for s in skills.listing().skills] == ["alpha", "beta", "gamma"]


def test_names_and_versions_another_program_stored_as_blobs_are_looked_at_as_text(
    store: Store,
) -> None:
    live(store, "alpha")
    live(store, "beta")
    skills = LiveSkills(store)
    skills.look()
    poke(store.path, "UPDATE skills SET name = CAST('delta' AS BLOB) WHERE name = 'beta'")
    poke(store.path, "UPDATE skills SET updated_at = CAST(updated_at AS BLOB)")
    assert skills.look() == LiveChange(came_or_went=True, changed=("beta", "delta"))
