"""A person at a terminal, for the CLI verbs that put text into service (issue 38): the command
runs in a new session whose controlling terminal is a pseudo-terminal, while its stdin and
stdout stay pipes, as an agent's shell tool has them. Answers are typed on the terminal, each
after its question is shown there; nothing else (no variable, no flag) can answer."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import subprocess
import termios
import time
from dataclasses import dataclass
from pathlib import Path

from .server.harness import person_command

QUESTION = b" it: "  # how each question of kite_skills/cli/confirm.py ends
PATIENCE = 60.0  # a guard against a hang, not a measurement


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str
    terminal: str
    """Everything the command wrote on its terminal: the questions and the typed answers."""


def skills_command(db: Path, *argv: str) -> tuple[list[str], dict[str, str]]:
    """``kite-skills skills ARGV --db DB`` as the person ``pat`` runs it (the zipapp in a test
    marked ``zipapp``), and its environment."""
    command, needs = person_command()
    env = {**needs, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "USER": "pat"}
    return [*command, "skills", *argv, "--db", str(db)], env


def skills_at_terminal(db: Path, *argv: str, typed: list[str]) -> Done:
    """``kite-skills skills ARGV --db DB`` at a terminal, the person typing each of ``typed``
    after the next question."""
    return at_terminal(*skills_command(db, *argv), typed)


def at_terminal(
    argv: list[str],
    env: dict[str, str],
    answers: list[str],
    stdin: str = "",
    *,
    all_streams: bool = False,
) -> Done:
    """Run ``argv`` with a pseudo-terminal as its controlling terminal and type each of
    ``answers`` there after the next question; ``stdin`` is piped to it (a pipe that cannot
    answer a question). ``all_streams``: stdin, stdout and stderr are the terminal too, as
    in a person's own shell (what it prints is then in ``Done.terminal``)."""
    leader, follower = pty.openpty()

    def take_the_terminal() -> None:  # in the child, after start_new_session's setsid()
        fcntl.ioctl(follower, termios.TIOCSCTTY, 0)

    piped, pipe = os.pipe()
    os.write(pipe, stdin.encode())  # a few bytes: the pipe holds them
    os.close(pipe)
    try:
        process = subprocess.Popen(
            argv,
            env=env,
            stdin=follower if all_streams else piped,
            stdout=follower if all_streams else subprocess.PIPE,
            stderr=follower if all_streams else subprocess.PIPE,
            start_new_session=True,
            preexec_fn=take_the_terminal,
        )
        shown = b""
        for count, answer in enumerate(answers, 1):
            shown = _read_until(leader, shown, count, process)
            os.write(leader, answer.encode() + b"\n")
        out, err = process.communicate(timeout=PATIENCE)
        while select.select([leader], [], [], 0)[0]:
            shown += os.read(leader, 65536)
    finally:
        os.close(piped)
        os.close(leader)
        os.close(follower)
    return Done(
        process.returncode,
        (out or b"").decode(),
        (err or b"").decode(),
        shown.decode("utf-8", "replace"),
    )


def _read_until(leader: int, shown: bytes, count: int, process: subprocess.Popen[bytes]) -> bytes:
    """What the terminal showed once its ``count``-th question is there."""
    deadline = time.monotonic() + PATIENCE
    while shown.count(QUESTION) < count:
        if process.poll() is not None and not select.select([leader], [], [], 0)[0]:
            out, err = process.communicate()
            raise AssertionError(f"no question {count} on the terminal: {shown!r} {out!r} {err!r}")
        assert time.monotonic() < deadline, f"no question {count} on the terminal: {shown!r}"
        if select.select([leader], [], [], 0.1)[0]:
            shown += os.read(leader, 65536)
    return shown


def without_terminal(argv: list[str], env: dict[str, str], stdin: str = "") -> Done:
    """Run ``argv`` in a new session with no controlling terminal, stdin and stdout piped: as
    an agent's shell tool runs a command."""
    done = subprocess.run(
        argv,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        start_new_session=True,
        timeout=PATIENCE,
    )
    return Done(done.returncode, done.stdout, done.stderr, "")
