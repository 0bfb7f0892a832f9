"""The CLI papercuts of issue 22 §4, each as a person meets it: a coloured diff on a
terminal only, quiet on a closed pipe, local times to the second, ``--body-file -``, the
first ``skills list`` of a fresh install, and ``skills review`` with delete and a summary.
Terminals and pipes are real (a pseudo-terminal, OS pipes, a subprocess)."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kite_skills import cli, invocation
from kite_skills.cli import common
from kite_skills.store import Store, agent, human

from .terminal import at_terminal

ROOT = Path(__file__).resolve().parent.parent
WHEN = datetime(2026, 5, 1, 4, 0, 0, 123456, tzinfo=UTC)  # 09:30:00.123456 in India


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "skills.db"
    with Store.open(path, clock=lambda: WHEN) as store:
        agent.save(store, "funds", "Funds", "# Funds\n\n1. Read margins.\n", who="bot 1")
        rev = store.get("funds").revision
        human.publish(store, "funds", rev=rev, via="cli", who="pat")
        agent.save(store, "funds", "Funds", "# Funds\n\n1. Read margins first.\n", who="bot 1")
    return path


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "KITE_SKILLS_DB")}
    return {**base, "PYTHONPATH": str(ROOT), "TZ": "IST-5:30", **extra}


def command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "kite_skills", *argv]


def on_a_terminal(argv: list[str], environment: dict[str, str]) -> str:
    """What ``argv`` writes to a (pseudo-)terminal."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(argv, stdout=follower, stderr=follower, env=environment)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=60) == 0
    return b"".join(chunks).decode()


def test_diff_is_coloured_on_a_terminal_only(db: Path) -> None:
    argv = command("skills", "diff", "funds", "--db", str(db))
    coloured = on_a_terminal(argv, env())
    assert "\x1b[32m+1. Read margins first.\x1b[0m" in coloured
    assert "\x1b[31m-1. Read margins.\x1b[0m" in coloured
    assert "\x1b[36m@@ " in coloured
    plain = on_a_terminal(argv, env(NO_COLOR="1"))  # https://no-color.org
    assert "\x1b[" not in plain and "+1. Read margins first." in plain
    piped = subprocess.run(argv, capture_output=True, env=env(), check=True, text=True)
    assert "\x1b[" not in piped.stdout and "+1. Read margins first." in piped.stdout


def test_a_closed_pipe_ends_quietly(db: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # like '| head -1' having read its line and gone
    try:
        done = subprocess.run(
            command("skills", "list", "--db", str(db)),
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=env(),
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert done.stderr == b""
    assert done.returncode == cli.SIGPIPE_STATUS


def test_head_reads_the_first_line(db: Path) -> None:
    shell = f"{' '.join(command('skills', 'list', '--db', str(db)))} | head -1; exit $?"
    done = subprocess.run(["sh", "-c", shell], capture_output=True, env=env(), text=True)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("funds ")


def test_times_are_local_to_the_second(db: Path) -> None:
    show = subprocess.run(
        command("skills", "show", "funds", "--db", str(db)),
        capture_output=True,
        env=env(),
        check=True,
        text=True,
    ).stdout
    assert "created:      2026-05-01 09:30:00 IST" in show
    assert "published:    2026-05-01 09:30:00 IST" in show
    assert "at 2026-05-01 09:30:00 IST (see it with" in show  # the proposed revision
    log = subprocess.run(
        command("skills", "log", "--db", str(db)),
        capture_output=True,
        env=env(),
        check=True,
        text=True,
    ).stdout
    assert log.splitlines() and all(
        line.startswith("2026-05-01 09:30:00 IST  funds") for line in log.splitlines()
    )
    assert not re.search(r"\d\.\d{6}|T\d\d:", show + log)  # no microseconds, no ISO 'T'


def test_body_file_dash_reads_standard_input(db: Path) -> None:
    body = "# From a pipe\n\n1. Ünïcode stays.\n"
    subprocess.run(
        command("skills", "new", "piped", "--description", "Piped", "--body-file", "-"),
        input=body.encode(),
        env=env(KITE_SKILLS_DB=str(db), LANG="C", LC_ALL="C"),  # UTF-8 whatever the locale
        check=True,
        capture_output=True,
    )
    with Store.open(db) as store:
        assert store.get("piped").body == body
        rev = store.get("funds").revision
    new_body = "# Funds\n\nEdited from stdin.\n"
    edit = command("skills", "edit", "funds", "--rev", rev, "--body-file", "-", "--db", str(db))
    # funds is live: the person confirms at the terminal, the body comes from the pipe
    done = at_terminal(edit, env(), ["funds"], stdin=new_body)
    assert done.returncode == 0, done
    with Store.open(db) as store:
        assert store.get("funds").body == new_body


def test_a_fresh_install_lists_no_skills_yet_with_what_to_do(tmp_path: Path) -> None:
    home = tmp_path / "home"
    fresh = env(HOME=str(home), XDG_DATA_HOME=str(home / "data"))
    done = subprocess.run(
        command("skills", "list"), capture_output=True, env=fresh, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("No skills yet.")
    kite = f"{sys.executable} -m kite_skills"  # how command() starts it: the hints say so
    assert f"  {kite} skills new NAME" in done.stdout
    assert f"'{kite} skills review' or '{kite} dashboard'" in done.stdout
    assert not home.exists()  # nothing was created
    json_done = subprocess.run(
        command("skills", "list", "--json"), capture_output=True, env=fresh, text=True
    )
    assert json_done.returncode == 0 and json_done.stdout.strip() == "[]"
    # a --db that names no file is still a typo to show, not an empty list
    typo = subprocess.run(
        command("skills", "list", "--db", str(tmp_path / "typo.db")),
        capture_output=True,
        env=fresh,
        text=True,
    )
    assert typo.returncode == 1 and "no store at" in typo.stderr


@pytest.fixture
def tty(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A person at a terminal: ``interactive()`` is true and answers come from the list."""
    answers: list[str] = []
    monkeypatch.setattr(common, "interactive", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt="": answers.pop(0))
    return answers


def test_review_offers_delete_and_ends_with_a_summary(
    db: Path, tty: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(db) as store:
        agent.save(store, "junk", "Junk", "# Junk\n", who="bot 1")
        agent.save(store, "keep", "Keep", "# Keep\n", who="bot 1")
        agent.save(store, "later", "Later", "# Later\n", who="bot 1")
    # funds (a proposed revision): accept; junk: delete, yes; keep: delete, no (a skip);
    # later: quit
    tty.extend(["a", "d", "y", "d", "n", "q"])
    assert cli.main(["skills", "review", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith(
        "Reviewed 3 of 4: accepted 1 (funds), deleted 1 (junk), skipped 1 (keep); "
        f"1 not looked at (run '{invocation.current().command} skills review' again)."
    )
    with Store.open(db) as store:
        assert [s.name for s in store.list_all()] == ["funds", "keep", "later"]
        assert store.get("funds").body == "# Funds\n\n1. Read margins first.\n"
        assert store.audit(limit=1)[0].action == "delete"


def test_review_order_is_what_the_person_saw(
    db: Path, tty: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    tty.extend(["r", ""])  # reject, with no reason
    assert cli.main(["skills", "review", "--db", str(db)]) == 0
    assert capsys.readouterr().out.rstrip().endswith("Reviewed 1 of 1: rejected 1 (funds).")
