"""``kite-skills skills …`` against a real store file; state checked through the library."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from kite_skills import invocation
from kite_skills.cli import skills as cli_skills
from kite_skills.errors import IllegalTransition, KiteError, UnknownSkill
from kite_skills.store import Store, agent

from .terminal import skills_at_terminal

NAME = "compare-funds"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kite-skills")
    cli_skills.register(parser.add_subparsers())
    return parser


def run(*argv: str) -> int:
    args = _parser().parse_args(list(argv))
    return args.run(args)


def rev(db: Path, name: str, *, proposed: bool = False) -> str:
    """The revision id a person reviewing ``name`` now would see."""
    with Store.open(db) as store:
        skill = store.get(name)
    if proposed:
        assert skill.proposed is not None
        return skill.proposed.revision
    return skill.revision


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "skills.db"
    with Store.open(path) as store:
        agent.save(store, "compare-funds", "When comparing two funds", "# Compare\n", who="bot 1")
    return path


def test_list(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("skills", "--db", str(db), "list") == 0
    assert capsys.readouterr().out.split() == [
        "compare-funds",
        "draft",
        "When",
        "comparing",
        "two",
        "funds",
    ]


def test_db_flag_after_the_subcommand(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("skills", "list", "--db", str(db)) == 0
    assert "compare-funds" in capsys.readouterr().out


def test_db_from_environment(
    db: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KITE_SKILLS_DB", str(db))
    assert run("skills", "list") == 0
    assert "compare-funds" in capsys.readouterr().out


def test_empty_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.db"
    Store.open(path).close()
    assert run("skills", "--db", str(path), "list") == 0
    assert capsys.readouterr().out == cli_skills.no_skills_yet() + "\n"


def test_read_commands_never_create_a_store(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "s.db"
    for command in (["list"], ["show", "x"], ["diff", "x"], ["log"], ["export", "x"]):
        with pytest.raises(KiteError, match=f"no store at {missing} \\(nothing was created\\)"):
            run("skills", "--db", str(missing), *command)
    assert not missing.parent.exists()


def test_publish_then_show_and_log(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reviewed = rev(db, "compare-funds")
    done = skills_at_terminal(db, "publish", "compare-funds", "--rev", reviewed, typed=[NAME])
    assert done.stdout == "published 'compare-funds' (draft -> live)\n"
    with Store.open(db) as store:
        skill = store.read_live("compare-funds")
        assert skill.published_at is not None
        entry = store.audit(limit=1)[0]
        assert (entry.action, entry.via) == ("publish", "cli")
        assert entry.who  # the login name, or "cli"
        agent.save(store, "compare-funds", "Better", "# Better\n", who="bot 2")
    assert run("skills", "--db", str(db), "show", "compare-funds") == 0
    out = capsys.readouterr().out
    assert "status:       live" in out and "# Compare" in out
    assert (
        "--- proposed revision " in out
        and ' by agent: "bot 2" via MCP at ' in out
        and "# Better" in out
    )
    assert run("skills", "--db", str(db), "log", "--name", "compare-funds", "--limit", "2") == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert "propose" in lines[0] and "mcp:bot 2" in lines[0]
    assert "publish" in lines[1] and "draft -> live" in lines[1]


@pytest.mark.parametrize(
    ("commands", "status"),
    [
        (["publish", "archive"], "archived"),
        (["publish", "archive", "restore"], "live"),
        (["publish", "draft"], "draft"),
    ],
)
def test_status_commands(db: Path, commands: list[str], status: str) -> None:
    for command in commands:
        extra = ["--rev", rev(db, "compare-funds")] if command == "publish" else []
        typed = [NAME] if command in ("publish", "restore") else []  # into service: asked
        done = skills_at_terminal(db, command, "compare-funds", *extra, typed=typed)
        assert done.returncode == 0, done
    with Store.open(db) as store:
        assert store.get("compare-funds").status == status
        assert [e.via for e in store.audit()] == ["cli"] * len(commands) + ["mcp"]


def test_accept_and_reject(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    skills_at_terminal(db, "publish", NAME, "--rev", rev(db, NAME), typed=[NAME])
    with Store.open(db) as store:
        agent.save(store, "compare-funds", "V2", "# v2\n", who="bot")
    skills_at_terminal(db, "accept", NAME, "--rev", rev(db, NAME, proposed=True), typed=[NAME])
    with Store.open(db) as store:
        assert store.read_live("compare-funds").body == "# v2\n"
        agent.save(store, "compare-funds", "V3", "# v3\n", who="bot")
    run("skills", "--db", str(db), "reject", "compare-funds")
    with Store.open(db) as store:
        skill = store.read_live("compare-funds")
        assert (skill.body, skill.proposed) == ("# v2\n", None)


def test_delete(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("skills", "--db", str(db), "delete", "compare-funds", "--yes") == 0
    assert capsys.readouterr().out == "deleted 'compare-funds' (was draft)\n"
    with Store.open(db) as store:
        assert store.list_all() == []


def test_errors_are_kite_errors_for_main_to_print(db: Path) -> None:
    with pytest.raises(UnknownSkill) as info:
        run("skills", "--db", str(db), "publish", "ghost", "--rev", "0123456789ab")
    kite = invocation.current().command  # the command that starts kite-skills here
    assert str(info.value) == f"no skill named 'ghost'; list them with '{kite} skills list'"
    with pytest.raises(IllegalTransition) as refused:
        run("skills", "--db", str(db), "archive", "compare-funds")
    assert str(refused.value).startswith("cannot archive 'compare-funds': it is a draft")
    with pytest.raises(KiteError, match="is not allowed"):
        run("skills", "--db", str(db), "show", "Bad Name")
    with pytest.raises(KiteError, match="limit must be a whole number from 1 to 10000"):
        run("skills", "--db", str(db), "log", "--limit", "0")


def test_every_subcommand_has_help_and_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    commands = [
        "list",
        "show",
        "publish",
        "draft",
        "archive",
        "restore",
        "accept",
        "reject",
        "delete",
        "purge",
        "log",
        "diff",
        "review",
        "new",
        "edit",
        "import",
        "export",
    ]
    parser = _parser()
    for command in commands:
        with pytest.raises(SystemExit):
            parser.parse_args(["skills", command, "--help"])
        out = capsys.readouterr().out
        assert f"example:\n  kite-skills skills {command}" in out, command
    with pytest.raises(SystemExit):
        parser.parse_args(["skills", "--help"])
    out = capsys.readouterr().out
    assert all(c in out for c in commands)


def test_a_subcommand_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        _parser().parse_args(["skills"])
    assert info.value.code == 2
