""" "Did you mean" everywhere the CLI takes a command, a subcommand, a choice or a skill name
(issue 39 §4), as ``help`` does for keys: the same rule (kite_skills/suggest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kite_skills import invocation
from kite_skills.cli import main
from kite_skills.store import Store, agent


def usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as info:
        main(list(argv))
    assert info.value.code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_a_mistyped_command_subcommand_or_choice_is_offered_the_near_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert "invalid choice: 'dashbord'; did you mean 'dashboard'? (choose from 'help'," in (
        usage_error(capsys, "dashbord")
    )
    assert "invalid choice: 'serch'; did you mean 'search'? (choose from" in (
        usage_error(capsys, "skills", "serch", "x")
    )
    assert "invalid choice: 'mpc'; did you mean 'mcp'? (choose from 'mcp'," in (
        usage_error(capsys, "skills", "log", "--via", "mpc")
    )
    assert "invalid choice: 'read-receipt'; did you mean 'read-receipts'?" in (
        usage_error(capsys, "settings", "read-receipt", "on")
    )
    # nothing near: argparse's own message, unchanged
    assert usage_error(capsys, "skills", "zzz").endswith(
        "invalid choice: 'zzz' (choose from 'list', 'search', 'show', 'diff', 'publish', "
        "'accept', 'draft', 'archive', 'restore', 'reject', 'history', 'revert', 'reads', "
        "'delete', 'purge', 'review', 'new', 'edit', 'import', 'export', 'log')"
    )


def test_the_sandbox_parser_offers_them_too(capsys: pytest.CaptureFixture[str]) -> None:
    assert "invalid choice: 'legcy'; did you mean 'legacy'?" in (
        usage_error(capsys, "sandbox", "--tools", "legcy")
    )


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "skills.db"
    with Store.open(path) as store:
        agent.save(store, "compare-funds", "When comparing", "# c\n", who="bot 1")
        agent.save(store, "sip-setup", "When starting a SIP", "# s\n", who="bot 1")
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["show", "compare-fund"],
        ["publish", "compare-fund", "--rev", "0123456789abcdef0123456789abcdef"],
        ["reject", "compare-fund"],
        ["delete", "compare-fund", "--yes"],
        ["history", "compare-fund"],
        ["reads", "compare-fund"],
        ["log", "--skill", "compare-fund"],
        ["export", "compare-fund"],
    ],
)
def test_a_mistyped_skill_name_is_offered_the_near_ones(
    db: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert main(["skills", *argv, "--db", str(db)]) == 1
    kite = invocation.current().command
    assert capsys.readouterr().err == (
        "kite-skills: error: no skill named 'compare-fund'; did you mean 'compare-funds'? "
        f"(list them with '{kite} skills list')\n"
    )


def test_a_name_like_none_is_told_where_to_list_them(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["skills", "show", "zzz", "--db", str(db)]) == 1
    kite = invocation.current().command
    assert capsys.readouterr().err == (
        f"kite-skills: error: no skill named 'zzz'; list them with '{kite} skills list'\n"
    )


def test_a_deleted_skills_history_is_still_shown(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["skills", "delete", "sip-setup", "--yes", "--db", str(db)]) == 0
    capsys.readouterr()
    assert main(["skills", "history", "sip-setup", "--db", str(db)]) == 0
    assert "#" in capsys.readouterr().out
