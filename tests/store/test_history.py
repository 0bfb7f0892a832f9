"""Issue 22 §5: every text a skill has had is kept, a rejection carries a reason the agent's
next save is told, an earlier text can be restored, and read receipts are bounded."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from kite_skills.errors import IllegalTransition, InvalidSkill, UnknownSkill
from kite_skills.store import LATEST_VERSION, ReadReceipt, Store, agent, human
from kite_skills.store._history import MAX_UNREVIEWED, MAX_UNREVIEWED_BYTES
from kite_skills.store.receipts import MAX_CLIENTS_PER_ITEM, ReceiptWriter

from .helpers import counts, draft, live, poke

V5_STORE = Path(__file__).parent / "data" / "store-v5.db"


def test_every_text_is_kept_drafts_proposals_and_live(store: Store) -> None:
    draft(store, "compare-funds", body="# one\n")
    agent.save(store, "compare-funds", "When comparing two funds", "# two\n", who="agent-test 1.0")
    human.publish(
        store, "compare-funds", rev=store.get("compare-funds").revision, via="cli", who="alice"
    )
    agent.save(store, "compare-funds", "When comparing funds", "# three\n", who="agent-test 1.0")
    agent.save(store, "compare-funds", "When comparing funds", "# four\n", who="agent-test 1.0")
    human.reject_revision(store, "compare-funds", via="cli", who="alice", reason="too short")
    agent.save(store, "compare-funds", "When comparing funds", "# five\n", who="agent-test 1.0")
    human.accept_revision(
        store,
        "compare-funds",
        rev=store.get("compare-funds").proposed.revision,  # type: ignore[union-attr]
        via="dashboard",
        who="alice",
    )
    history = store.history("compare-funds")
    seen = [(t.kind, t.status, t.body) for t in reversed(history)]
    assert seen == [
        ("text", "draft", "# one\n"),
        ("text", "draft", "# two\n"),
        ("proposal", "replaced", "# three\n"),
        ("proposal", "rejected", "# four\n"),
        ("proposal", "accepted", "# five\n"),
        ("text", "live", "# five\n"),
    ]
    two = history[-2]
    assert two.live_at is not None  # published: that text served as live
    assert history[-1].live_at is None  # the first draft never did
    rejected = history[2]
    assert rejected.reason == "too short"
    assert rejected.decided_by is not None and rejected.decided_by.who == "alice"
    assert history[0].written_by.is_agent  # an accepted revision is the agent's text


def test_the_agents_next_save_is_told_the_rejection_and_its_reason_once(store: Store) -> None:
    live(store, "compare-funds")
    agent.save(store, "compare-funds", "Better", "# better\n", who="agent-test 1.0")
    human.reject_revision(
        store, "compare-funds", via="dashboard", who="alice", reason="Keep the   expense\nratio"
    )
    told = agent.save(store, "compare-funds", "Again", "# again\n", who="agent-test 1.0")
    assert told.rejected is not None
    assert told.rejected.reason == "Keep the expense ratio"  # one paragraph
    assert told.rejected.by == "alice"
    again = agent.save(store, "compare-funds", "Again 2", "# again 2\n", who="agent-test 1.0")
    assert again.rejected is None
    # a draft stays invisible to agents whatever the history holds
    draft(store, "secret-draft")
    assert [s.name for s in store.list_live()] == ["compare-funds"]


def test_a_rejection_without_a_reason_is_still_told(store: Store) -> None:
    live(store, "compare-funds")
    agent.save(store, "compare-funds", "Better", "# better\n", who="agent-test 1.0")
    result = human.reject_revision(store, "compare-funds", via="cli", who="alice")
    assert "rejected" in result.message
    told = agent.save(store, "compare-funds", "Again", "# again\n", who="agent-test 1.0")
    assert told.rejected is not None and told.rejected.reason == ""


def test_a_deleted_and_recreated_skill_is_not_told_the_old_rejection(store: Store) -> None:
    live(store, "compare-funds")
    agent.save(store, "compare-funds", "Better", "# better\n", who="agent-test 1.0")
    human.reject_revision(store, "compare-funds", via="cli", who="alice", reason="no")
    human.delete(store, "compare-funds", via="cli", who="alice")
    assert draft(store, "compare-funds").rejected is None


def test_a_reason_over_the_limit_is_refused_and_nothing_changes(store: Store) -> None:
    live(store, "compare-funds")
    agent.save(store, "compare-funds", "Better", "# better\n", who="agent-test 1.0")
    with pytest.raises(InvalidSkill, match="the limit is 1000"):
        human.reject_revision(store, "compare-funds", via="cli", who="alice", reason="x" * 1001)
    assert store.get("compare-funds").proposed is not None


def test_the_reason_is_in_the_audit_log(store: Store) -> None:
    live(store, "compare-funds")
    agent.save(store, "compare-funds", "Better", "# better\n", who="agent-test 1.0")
    human.reject_revision(store, "compare-funds", via="cli", who="alice", reason="wrong fund")
    assert store.audit(limit=1)[0].detail.endswith("; reason: wrong fund")


def test_restoring_an_earlier_text_makes_a_new_revision_audited(store: Store) -> None:
    live(store, "compare-funds", body="# first\n")
    first = store.history("compare-funds")[0]
    agent.save(store, "compare-funds", "Second", "# second\n", who="agent-test 1.0")
    rev = store.get("compare-funds").proposed.revision  # type: ignore[union-attr]
    human.accept_revision(store, "compare-funds", rev=rev, via="cli", who="alice")
    result = human.revert(store, "compare-funds", text_id=first.id, via="dashboard", who="bob")
    assert "restored an earlier text" in result.message
    skill = store.get("compare-funds")
    assert (skill.body, skill.status) == ("# first\n", "live")
    assert skill.written_by.via == "dashboard" and skill.written_by.who == "bob"
    entry = store.audit(limit=1)[0]
    assert (entry.action, entry.via, entry.who) == ("revert", "dashboard", "bob")
    newest = store.history("compare-funds")[0]
    assert (newest.action, newest.body, newest.live_at is not None) == ("revert", "# first\n", True)


MAX_BODY = 64 * 1024  # bytes of UTF-8; the description's limit is 1024 characters
# (what the old text holds, its description, its body): each refused when written today
REFUSED_TODAY = [
    ("a bidi override in the body", "Funds", "# x\nnote \u202e99.50\n"),
    ("an escape in the body", "Funds", "# x\n\x1b[2Kstep\n"),
    ("a joiner beside one Persian letter", "Funds", "# x\nمی\u200c and\n"),
    ("a zero-width space in the description", "Fu\u200bnds", "# x\n"),
    ("a right-to-left mark in the description", "99.50\u200f", "# x\n"),
    ("a line break in the description", "Funds\nmore", "# x\n"),
    ("a description one character too long", "d" * 1025, "# x\n"),
    ("a body one byte too long", "Funds", "#" * (MAX_BODY + 1)),
]
# The same rules' other side: each comes back.
ALLOWED_TODAY = [
    ("a joiner inside a Persian word", "Funds", "# x\nمی\u200cخواهم\n"),
    ("an emoji sequence", "Funds \u2764\ufe0f", "# \U0001f468\u200d\U0001f469\u200d\U0001f467\n"),
    ("a description at its limit", "d" * 1024, "# x\n"),
    ("a body at its limit", "Funds", "#" * MAX_BODY),
]


def _old_text(store: Store, db_path: Path, description: str, body: str) -> int:
    """A live skill whose first text, written before today's rules by another program, holds
    ``description`` and ``body``; the id of that text."""
    live(store, "compare-funds", body="# first\n")
    first = store.history("compare-funds")[0]
    agent.save(store, "compare-funds", "Second", "# second\n", who="agent-test 1.0")
    rev = store.get("compare-funds").proposed.revision  # type: ignore[union-attr]
    human.accept_revision(store, "compare-funds", rev=rev, via="cli", who="alice")
    poke(
        db_path,
        "UPDATE skill_texts SET description = ?, body = ? WHERE id = ?",
        description,
        body,
        first.id,
    )
    return first.id


@pytest.mark.parametrize(
    ("description", "body"), [pytest.param(d, b, id=what) for what, d, b in REFUSED_TODAY]
)
def test_an_old_text_that_a_new_one_could_not_be_does_not_come_back(
    store: Store, db_path: Path, description: str, body: str
) -> None:
    """A restore is a new text: refused for what a save or an edit would refuse, with the
    same message, and nothing changes."""
    text_id = _old_text(store, db_path, description, body)
    before = (store.get("compare-funds"), len(store.history("compare-funds")), counts(db_path))
    with pytest.raises(InvalidSkill) as new:
        human.create(store, "compare-funds", description=description, body=body, via="cli",
                     who="bob")  # fmt: skip
    with pytest.raises(InvalidSkill) as restored:
        human.revert(store, "compare-funds", text_id=text_id, via="dashboard", who="bob")
    assert str(restored.value) == str(new.value)
    after = (store.get("compare-funds"), len(store.history("compare-funds")), counts(db_path))
    assert after == before


@pytest.mark.parametrize(
    ("description", "body"), [pytest.param(d, b, id=what) for what, d, b in ALLOWED_TODAY]
)
def test_an_old_text_that_a_new_one_could_be_comes_back(
    store: Store, db_path: Path, description: str, body: str
) -> None:
    text_id = _old_text(store, db_path, description, body)
    human.revert(store, "compare-funds", text_id=text_id, via="dashboard", who="bob")
    skill = store.get("compare-funds")
    assert (skill.description, skill.body) == (description, body)


def test_restoring_a_text_of_another_skill_is_refused(store: Store) -> None:
    live(store, "compare-funds")
    live(store, "other-skill")
    other = store.history("other-skill")[0]
    with pytest.raises(UnknownSkill, match="has no text #"):
        human.revert(store, "compare-funds", text_id=other.id, via="cli", who="alice")


def test_migrating_a_store_made_by_version_5_keeps_everything(tmp_path: Path) -> None:
    """store-v5.db was written by kite-skills at schema version 5 (make_store_v5.py)."""
    path = tmp_path / "skills.db"
    shutil.copyfile(V5_STORE, path)
    with closing(sqlite3.connect(path)) as conn:
        before_skills = conn.execute("SELECT * FROM skills ORDER BY id").fetchall()
        before_audit = conn.execute("SELECT * FROM audit_log ORDER BY id").fetchall()
        assert conn.execute("SELECT max(version) FROM schema_version").fetchone()[0] == 5
    with Store.open(path) as store:
        assert store.get("compare-funds").proposed is not None
        texts = {
            (t.skill, t.kind, t.status)
            for n in ("compare-funds", "agent-draft", "person-live", "old-archived", "rejected-one")
            for t in store.history(n)
        }
        assert texts == {
            ("compare-funds", "text", "live"),
            ("compare-funds", "proposal", "pending"),
            ("agent-draft", "text", "draft"),
            ("person-live", "text", "live"),
            ("old-archived", "text", "archived"),
            ("rejected-one", "text", "live"),
        }
        person = store.history("person-live")[0]
        assert person.body == store.get("person-live").body
        assert (person.written_by.via, person.written_by.who) == ("cli", "alice")
        # the loop works on the migrated file
        rev = store.get("compare-funds").proposed.revision  # type: ignore[union-attr]
        human.accept_revision(store, "compare-funds", rev=rev, via="cli", who="alice")
        statuses = [t.status for t in store.history("compare-funds")]
        assert statuses[:2] == ["live", "accepted"]
    with closing(sqlite3.connect(path)) as conn:
        assert (
            conn.execute("SELECT max(version) FROM schema_version").fetchone()[0] == LATEST_VERSION
        )
        after_audit = conn.execute("SELECT * FROM audit_log ORDER BY id").fetchall()
        after = conn.execute("SELECT * FROM skills WHERE name <> 'compare-funds' ORDER BY id")
        assert after.fetchall() == [r for r in before_skills if r[1] != "compare-funds"]
    assert after_audit[: len(before_audit)] == before_audit


def _read(item: str, client: str, at: str, kind: str = "skill") -> ReadReceipt:
    return ReadReceipt(kind, item, client, "skillRead", at)


def test_receipts_keep_the_newest_read_per_client(store: Store) -> None:
    writer = ReceiptWriter(store.path)
    writer.record([_read("compare-funds", "claude-ai 1", "2026-01-01T00:00:00Z")])
    writer.record([_read("compare-funds", "claude-ai 1", "2026-01-02T00:00:00Z")])
    writer.record([_read("compare-funds", "cursor 2", "2026-01-03T00:00:00Z")])
    writer.close()
    reads = store.reads("skill", "compare-funds")
    assert [(r.client, r.at) for r in reads] == [
        ("cursor 2", "2026-01-03T00:00:00Z"),
        ("claude-ai 1", "2026-01-02T00:00:00Z"),
    ]


def test_receipts_are_bounded_per_item(store: Store) -> None:
    writer = ReceiptWriter(store.path)
    writer.record(
        [
            _read("orders/prepare", f"client {i}", f"2026-01-01T00:00:{i:02d}Z", "recipe")
            for i in range(MAX_CLIENTS_PER_ITEM + 5)
        ]
    )
    writer.close()
    reads = store.reads("recipe", "orders/prepare")
    assert len(reads) == MAX_CLIENTS_PER_ITEM
    assert reads[0].client == f"client {MAX_CLIENTS_PER_ITEM + 4}"


def test_turning_receipts_off_stops_recording_and_forgets(store: Store) -> None:
    writer = ReceiptWriter(store.path)
    writer.record([_read("compare-funds", "claude-ai 1", "2026-01-01T00:00:00Z")])
    assert store.read_receipts_on()
    human.set_read_receipts(store, False)
    assert not store.read_receipts_on()
    assert store.reads() == []
    assert writer.record([_read("compare-funds", "claude-ai 1", "2026-01-02T00:00:00Z")]) == 0
    assert store.reads() == []
    human.set_read_receipts(store, True)
    assert writer.record([_read("compare-funds", "claude-ai 1", "2026-01-02T00:00:00Z")]) == 1
    writer.close()


def test_a_busy_store_fails_the_receipt_not_the_reader(store: Store) -> None:
    writer = ReceiptWriter(store.path)
    with store.transaction():  # a person's write holds the store
        with pytest.raises(sqlite3.OperationalError):
            writer.record([_read("compare-funds", "claude-ai 1", "2026-01-01T00:00:00Z")])
    writer.record([_read("compare-funds", "claude-ai 1", "2026-01-01T00:00:00Z")])
    writer.close()
    assert len(store.reads()) == 1


def test_an_agent_saving_in_a_loop_keeps_a_bounded_history(store: Store) -> None:
    live(store, "compare-funds")
    agent.save(store, "compare-funds", "Better", "# rejected\n", who="agent-test 1.0")
    human.reject_revision(store, "compare-funds", via="cli", who="alice", reason="no")
    for i in range(MAX_UNREVIEWED + 10):
        agent.save(store, "compare-funds", "Better", f"# try {i}\n", who="agent-test 1.0")
    for i in range(MAX_UNREVIEWED + 10):
        draft(store, "loop-draft", body=f"# draft {i}\n")
    kept = store.history("compare-funds", 1000)
    replaced = [t for t in kept if t.status == "replaced"]
    assert len(replaced) == MAX_UNREVIEWED
    assert kept[0].body == f"# try {MAX_UNREVIEWED + 9}\n" and kept[0].status == "pending"
    # what a person saw and decided on stays: the live text and the rejected proposal
    assert [t.live_at is not None for t in kept if t.kind == "text"] == [True]
    assert [t.reason for t in kept if t.status == "rejected"] == ["no"]
    drafts = store.history("loop-draft", 1000)
    assert len(drafts) == MAX_UNREVIEWED and drafts[0].body == f"# draft {MAX_UNREVIEWED + 9}\n"


def test_restoring_the_text_it_already_has_changes_nothing(store: Store) -> None:
    live(store, "compare-funds")
    current = store.history("compare-funds")[0]
    audit = len(store.audit(limit=100))
    result = human.revert(store, "compare-funds", text_id=current.id, via="cli", who="alice")
    assert not result.changed and "nothing changed" in result.message
    assert len(store.audit(limit=100)) == audit
    assert len(store.history("compare-funds")) == 1


# ---- a new draft rejected with a reason (issue 39 §4: request changes) ----------------------


def test_an_agents_new_draft_rejected_stays_and_its_next_save_is_told_once(store: Store) -> None:
    draft(store, "compare-funds", body="# one\n")
    result = human.reject_revision(
        store, "compare-funds", via="dashboard", who="alice", reason="check the fund's age"
    )
    assert result.changed and result.action == "reject_draft"
    assert "it stays a draft" in result.message
    skill = store.get("compare-funds")  # delete stays a separate act
    assert (skill.status, skill.body, skill.proposed) == ("draft", "# one\n", None)
    (rejected,) = store.history("compare-funds")
    assert (rejected.kind, rejected.status, rejected.reason) == (
        "text",
        "rejected",
        "check the fund's age",
    )
    assert rejected.decided_by is not None and rejected.decided_by.who == "alice"
    entry = store.audit(limit=1)[0]
    assert (entry.action, entry.from_status, entry.to_status) == ("reject_draft", "draft", "draft")
    assert entry.detail == f"draft revision {skill.revision}; reason: check the fund's age"
    told = draft(store, "compare-funds", body="# two\n")
    assert told.outcome == "updated_draft"
    assert told.rejected is not None and told.rejected.draft
    assert (told.rejected.reason, told.rejected.by) == ("check the fund's age", "alice")
    assert draft(store, "compare-funds", body="# three\n").rejected is None  # once
    # the rejected text is what a person decided on: kept, never pruned
    assert [t.status for t in store.history("compare-funds")] == ["draft", "draft", "rejected"]


def test_only_an_agents_never_published_draft_can_be_rejected_without_a_proposal(
    store: Store,
) -> None:
    human.create(store, "mine", description="Mine", body="# mine\n", via="cli", who="alice")
    with pytest.raises(IllegalTransition, match="written by a person"):
        human.reject_revision(store, "mine", via="cli", who="alice", reason="no")
    live(store, "served")
    with pytest.raises(IllegalTransition, match="has no proposed revision"):
        human.reject_revision(store, "served", via="cli", who="alice")
    human.move_to_draft(store, "served", via="cli", who="alice")  # an agent's text, published
    with pytest.raises(IllegalTransition, match="published this draft before"):
        human.reject_revision(store, "served", via="cli", who="alice")
    # a proposal over a person's draft is still what reject rejects
    agent.save(store, "mine", "Mine", "# better\n", who="agent-test 1.0")
    result = human.reject_revision(store, "mine", via="cli", who="alice", reason="no")
    assert result.action == "reject" and store.get("mine").proposed is None
    assert store.get("mine").body == "# mine\n"


def test_a_rejected_draft_published_after_all_is_not_told_as_rejected(store: Store) -> None:
    draft(store, "compare-funds")
    human.reject_revision(store, "compare-funds", via="cli", who="alice", reason="hmm")
    human.publish(
        store, "compare-funds", rev=store.get("compare-funds").revision, via="cli", who="alice"
    )
    assert draft(store, "compare-funds", body="# later\n").rejected is None


def _sized(i: int, size: int) -> tuple[str, str]:
    """A description and body whose UTF-8 bytes add up to ``size``."""
    description = "d"
    head = f"# text {i:03d}\n"
    return description, head + "x" * (size - len(description) - len(head) - 1) + "\n"


@pytest.mark.parametrize(("first_extra", "kept"), [(0, 16), (1, 15)], ids=["at", "over"])
def test_an_agents_unreviewed_texts_are_bounded_in_bytes(
    store: Store, first_extra: int, kept: int
) -> None:
    """16 texts of 64 KiB are exactly MAX_UNREVIEWED_BYTES: all kept; one byte more in the
    oldest, and the oldest goes (the count bound, 50, is far off)."""
    size = MAX_UNREVIEWED_BYTES // 16
    for i in range(16):
        description, body = _sized(i, size + (first_extra if i == 0 else 0))
        agent.save(store, "big-draft", description, body, who="agent-test 1.0")
    history = store.history("big-draft", 1000)
    assert len(history) == kept
    assert history[0].body.startswith("# text 015\n")
    assert history[-1].body.startswith(f"# text {16 - kept:03d}\n")


def test_a_person_purges_what_a_deleted_skill_kept_and_it_is_on_record(
    store: Store, tmp_path: Path
) -> None:
    for i in range(8):
        agent.save(store, "junk", "Junk", *_sized(i, 60_000)[1:], who="agent-test 1.0")
    draft(store, "other", body="# other\n")
    with pytest.raises(IllegalTransition, match="cannot purge 'junk': it is draft, and a skill"):
        human.purge(store, "junk", via="cli", who="alice")
    assert len(store.history("junk")) == 8
    human.delete(store, "junk", via="cli", who="alice")
    assert len(store.history("junk")) == 8  # deleting keeps them
    with closing(sqlite3.connect(store.path)) as conn:
        free_before = conn.execute("PRAGMA freelist_count").fetchone()[0]
    result = human.purge(store, "junk", via="dashboard", who="alice")
    assert result.changed and result.message == (
        "forgot the 8 text(s) 'junk' had; the audit log keeps its record"
    )
    assert store.history("junk") == [] and len(store.history("other")) == 1
    with closing(sqlite3.connect(store.path)) as conn:  # the pages are free for reuse
        assert conn.execute("PRAGMA freelist_count").fetchone()[0] > free_before + 100
    entry = store.audit(name="junk", limit=1)[0]
    assert (entry.action, entry.via, entry.who, entry.from_status, entry.to_status) == (
        "purge",
        "dashboard",
        "alice",
        None,
        None,
    )
    again = human.purge(store, "junk", via="cli", who="alice")
    assert not again.changed and again.message == "'junk' keeps no texts; nothing changed"
    assert store.audit(name="junk", limit=1)[0].id == entry.id  # no second row
