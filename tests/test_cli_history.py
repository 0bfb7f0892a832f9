"""``kite-skills skills reject --reason|history|revert|reads`` and ``kite-skills settings``
against a real store file; state checked through the library."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from kite_skills.cli import common, main
from kite_skills.display import local_time
from kite_skills.errors import UnknownSkill
from kite_skills.store import ReadReceipt, Store, agent, human
from kite_skills.store.receipts import ReceiptWriter

from .terminal import skills_at_terminal, skills_command, without_terminal

NAME = "compare-funds"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A live skill with a waiting proposal from an agent."""
    path = tmp_path / "skills.db"
    with Store.open(path) as store:
        human.import_skills(store, [(NAME, "When comparing", "# one\n")], via="cli", who="pat")
        agent.save(store, NAME, "When comparing funds", "# two\n", who="bot 1")
    return path


def test_reject_with_a_reason_is_told_to_the_agents_next_save(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["skills", "reject", NAME, "--reason", "keep step one", "--db", str(db)]) == 0
    assert "rejected the proposed revision" in capsys.readouterr().out
    with Store.open(db) as store:
        told = agent.save(store, NAME, "When comparing funds", "# three\n", who="bot 1")
    assert told.rejected is not None and told.rejected.reason == "keep step one"


def test_history_lists_every_text_newest_first(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["skills", "reject", NAME, "--reason", "no", "--db", str(db)])
    capsys.readouterr()
    assert main(["skills", "history", NAME, "--db", str(db)]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("#")]
    assert len(lines) == 2
    assert "proposal rejected" in lines[0] and lines[0].endswith("; reason: no")
    assert "text     live" in lines[1] and "person: pat via cli" in lines[1]


def test_history_diff_of_an_earlier_text_with_the_current(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(db) as store:
        proposal = store.history(NAME)[0]
    assert main(["skills", "history", NAME, "--diff", str(proposal.id), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert f"--- {NAME} proposal #{proposal.id} (pending)" in out
    assert "-# two" in out and "+# one" in out


def test_revert_restores_an_earlier_text_as_a_new_revision(db: Path) -> None:
    with Store.open(db) as store:
        proposal = store.history(NAME)[0]
    # A live skill's new text: the person types its name at the terminal, --yes or not.
    done = skills_at_terminal(db, "revert", NAME, str(proposal.id), "--yes", typed=[NAME])
    assert "restored an earlier text" in done.stdout, done
    with Store.open(db) as store:
        skill = store.get(NAME)
        entry = store.audit(limit=1)[0]
    assert (skill.body, skill.status) == ("# two\n", "live")
    assert (entry.action, entry.via) == ("revert", "cli")


def test_revert_off_a_terminal_changes_nothing(db: Path) -> None:
    with Store.open(db) as store:
        proposal = store.history(NAME)[0]
    done = without_terminal(*skills_command(db, "revert", NAME, str(proposal.id), "--yes"))
    assert done.returncode == 1
    assert f"cannot revert '{NAME}' here: you confirm this by typing at a terminal" in done.stderr
    with Store.open(db) as store:
        assert store.get(NAME).body == "# one\n"
        human.move_to_draft(store, NAME, via="cli", who="pat")
    # A draft's text goes nowhere: a script reverts it with --yes, and without is refused.
    assert main(["skills", "revert", NAME, str(proposal.id), "--db", str(db)]) == 1
    assert main(["skills", "revert", NAME, str(proposal.id), "--yes", "--db", str(db)]) == 0
    with Store.open(db) as store:
        assert store.get(NAME).body == "# two\n"


def test_an_unknown_history_id_is_refused(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["skills", "history", NAME, "--show", "999", "--db", str(db)]) == 1
    assert f"'{NAME}' has no text #999 in its history" in capsys.readouterr().err
    with pytest.raises(UnknownSkill):
        with Store.open(db) as store:
            store.history_text(NAME, 999)


def test_settings_read_receipts_off_and_reads(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    writer = ReceiptWriter(db)
    writer.record([ReadReceipt("skill", NAME, "claude-ai 1.0", "skillRead", "2026-01-01T00:00Z")])
    assert main(["skills", "reads", "--db", str(db)]) == 0
    assert "claude-ai 1.0" in capsys.readouterr().out
    assert main(["settings", "read-receipts", "off", "--db", str(db)]) == 0
    assert "read receipts are off" in capsys.readouterr().out
    assert writer.record([ReadReceipt("skill", NAME, "x", "skillRead", "2026-01-02T00:00Z")]) == 0
    writer.close()
    assert main(["skills", "reads", "--db", str(db)]) == 0
    assert "read receipts are off" in capsys.readouterr().out
    assert main(["settings", "read-receipts", "on", "--db", str(db)]) == 0
    with Store.open(db) as store:
        assert store.read_receipts_on()


def test_review_asks_why_on_reject_and_the_agent_is_told(
    db: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = ["r", "keep step one"]
    monkeypatch.setattr(common, "interactive", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt="": answers.pop(0))
    assert main(["skills", "review", "--db", str(db)]) == 0
    assert "rejected 1" in capsys.readouterr().out
    with Store.open(db) as store:
        told = agent.save(store, NAME, "When comparing funds", "# three\n", who="bot 1")
    assert told.rejected is not None and told.rejected.reason == "keep step one"


def test_reads_and_history_show_local_times_to_the_second(
    db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    local_time.cache_clear()
    try:
        writer = ReceiptWriter(db)
        stamp = "2026-01-01T09:30:05.123456Z"
        writer.record([ReadReceipt("skill", NAME, "claude-ai 1.0", "skillRead", stamp)])
        writer.close()
        assert main(["skills", "reads", "--db", str(db)]) == 0
        out = capsys.readouterr().out
        assert "2026-01-01 15:00:05 IST" in out and ".123456" not in out
        assert main(["skills", "history", NAME, "--db", str(db)]) == 0
        lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("#")]
        assert lines and all(re.search(r" \d{4}-\d\d-\d\d \d\d:\d\d:\d\d IST ", ln) for ln in lines)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
        local_time.cache_clear()


def test_reject_sends_an_agents_new_draft_back_and_review_offers_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "skills.db"
    with Store.open(db) as store:
        agent.save(store, "new-one", "When", "# draft\n", who="bot 1")
        agent.save(store, "other-one", "When", "# draft\n", who="bot 1")
    assert main(["skills", "reject", "new-one", "--reason", "say when", "--db", str(db)]) == 0
    assert "rejected the draft 'new-one': it stays a draft" in capsys.readouterr().out
    answers, prompts = ["s", "r", "too vague"], []  # skip new-one, reject other-one

    def ask(prompt: str = "") -> str:
        prompts.append(prompt)
        return answers.pop(0)

    monkeypatch.setattr(common, "interactive", lambda: True)
    monkeypatch.setattr("builtins.input", ask)
    assert main(["skills", "review", "--db", str(db)]) == 0
    assert prompts[0].startswith("[p]ublish, [r]eject, [d]elete, [s]kip")
    assert "rejected 1 (other-one)" in capsys.readouterr().out
    with Store.open(db) as store:
        assert store.get("new-one").status == "draft"
        told = agent.save(store, "new-one", "When", "# better\n", who="bot 1")
        other = agent.save(store, "other-one", "When", "# better\n", who="bot 1")
    assert told.rejected is not None and told.rejected.reason == "say when"
    assert other.rejected is not None and other.rejected.reason == "too vague"


def test_purge_forgets_a_deleted_skills_texts_and_asks_first(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def run(*argv: str) -> int:
        return main(["skills", *argv, "--db", str(db)])

    assert run("purge", NAME, "--yes") == 1
    assert f"cannot purge '{NAME}': it is live, and a skill's history is kept while it exists" in (
        capsys.readouterr().err
    )
    assert run("delete", NAME, "--yes") == 0
    assert run("purge", NAME) == 1  # off a terminal, without --yes: asked, not done
    assert "pass --yes to confirm (nothing changed)" in capsys.readouterr().err
    with Store.open(db) as store:
        count = len(store.history(NAME))
    assert count > 1
    assert run("purge", NAME, "--yes") == 0
    assert capsys.readouterr().out.endswith(
        f"forgot the {count} text(s) '{NAME}' had; the audit log keeps its record\n"
    )
    with Store.open(db) as store:
        assert store.history(NAME) == []
        entry = store.audit(name=NAME, limit=1)[0]
    assert (entry.action, entry.via) == ("purge", "cli")
