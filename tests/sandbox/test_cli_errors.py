"""What a person sees when `kite-skills sandbox` cannot start as asked: a bad option value is
one stderr line and exit 2; a bad scenario file is one `path:line:` line per problem and a
summary, exit 1; never a traceback, and stdout (JSON-RPC's) empty.

The refusals run in this process, through the entry point `python -m kite_skills` calls
(:func:`kite_skills.cli.main`, whose result it passes to ``sys.exit``): each comes before
anything is served, and starting an interpreter for each cost ten times the test. The exit
status is what main returned or SystemExit's code; stdout and stderr are read at the file
descriptors (capfd); any other exception fails the test (in a process: a traceback). Their
environment is the subprocesses' (:func:`tests.sandbox.sandbox_harness.env`), and stdin is a
file with no descriptor, so a case that wrongly got as far as serving fails at once.

Three cases run `python -m kite_skills sandbox` in a real subprocess, for what only a process
shows: a refusal's exit status 2 and one-line stderr as the process ends (argparse's
SystemExit leaves through the interpreter, not through main), and the start line of a sandbox
that serves (until stdin ends; at a terminal, a pty) — a served case never runs in process."""

from __future__ import annotations

import gc
import io
import logging
import os
import pty
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kite_skills import cli

from .sandbox_harness import env

BAD_SCENARIO = """clock: "2026-12-02 11:30:00"
holdings:
  - {exchange: NSE, tradingsymbol: NOPE, quantity: 10}
  - {exchange: NSE, tradingsymbol: TCS, quantity: 5, t1_quantity: 9}
orders:
  - {exchange: NSE, tradingsymbol: INFY, transaction_type: BUY, quantity: 1, product: CNC,
     order_type: LIMIT, price: 1500}
positions:
  - {exchange: NFO, tradingsymbol: NIFTY26DECFUT, product: NRML, quantity: 10}
colour: blue
market:
  NSE:INFY:
    path:
      - ["11:31", 1600.03]
"""


@dataclass(frozen=True)
class Done:
    """How a `kite-skills sandbox` run ended (the fields a CompletedProcess has)."""

    returncode: int
    stdout: str
    stderr: str


def run(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """`python -m kite_skills sandbox ARGV` in a real subprocess, stdin empty."""
    return subprocess.run(
        [sys.executable, "-m", "kite_skills", "sandbox", *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env(home),
        timeout=120,
    )


@pytest.fixture
def sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> Iterator[Callable[..., Done]]:
    """`kite-skills sandbox ARGV` in this process, for a case that never serves: with run()'s
    environment (and no EXCLUDED_TOOLS), stdin with no descriptor, and what a start changes
    in the process put back after it (logging.basicConfig's root handler, the collector's
    frozen objects: kite_skills/stack_loading.py)."""
    for name, value in env(tmp_path).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("EXCLUDED_TOOLS", raising=False)
    monkeypatch.setattr(sys, "stdin", io.StringIO())
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level

    def start(*argv: str) -> Done:
        capfd.readouterr()
        try:
            code = cli.main(["sandbox", *argv])
        except SystemExit as stop:
            assert isinstance(stop.code, int), stop.code
            code = stop.code
        out, err = capfd.readouterr()
        return Done(code, out, err)

    try:
        yield start
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        gc.unfreeze()


def said_in_one_line(done: Done | subprocess.CompletedProcess[str], said: str) -> None:
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("kite-skills sandbox: error: ") and said in lines[0], lines[0]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--speed", "fast"], "argument --speed: 'fast': give simulated seconds per real second"),
        (["--speed", "0"], "argument --speed: '0': give simulated seconds"),
        (["--speed", "nan"], "argument --speed: 'nan': give simulated seconds"),
        (["--speed", "1e9"], "at most 3600"),
        (["--tools", "newest"], "argument --tools: invalid choice: 'newest'"),
        (["--port", "99999", "--http"], "argument --port: '99999' is not a port from 0 to 65535"),
        (["--oauth"], "--oauth signs in to the HTTP server: add --http"),
        (["--at", "yesterday"], "--at 'yesterday': write the simulated start as"),
        (["--at", "2026-12-02 25:00"], "--at '2026-12-02 25:00': write the simulated start as"),
        (["--at", "9999-12-31 23:59"], "more than 7 days after the scenario's clock"),
        (["--at", "2026-12-02 11:29"], "is before the scenario's clock (2026-12-02 11:30)"),
        (["--scenario", "nosuch"], "--scenario 'nosuch': no built-in scenario and no file"),
        (["--journal", "."], "cannot open the sandbox journal"),
        (["bogus"], "invalid choice: 'bogus'"),
    ],
)
def test_a_bad_option_is_one_line_and_exit_2(
    sandbox: Callable[..., Done], tmp_path: Path, argv: list[str], said: str
) -> None:
    done = sandbox("--journal", str(tmp_path / "j.jsonl"), *argv)
    said_in_one_line(done, said)
    assert not (tmp_path / "j.jsonl").exists() or argv[0] == "--journal"


def test_a_bad_option_ends_the_process_with_exit_2_and_one_line(tmp_path: Path) -> None:
    done = run(tmp_path, "--journal", str(tmp_path / "j.jsonl"), "--speed", "fast")
    said_in_one_line(done, "argument --speed: 'fast': give simulated seconds per real second")
    assert not (tmp_path / "j.jsonl").exists()


def test_a_bad_scenario_file_names_every_problem_and_serves_nothing(
    sandbox: Callable[..., Done], tmp_path: Path
) -> None:
    bad = tmp_path / "mine.yaml"
    bad.write_text(BAD_SCENARIO, "utf-8")
    journal = tmp_path / "j.jsonl"
    done = sandbox("--scenario", str(bad), "--journal", str(journal))
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert [line.split(":", 2)[1] for line in lines[:-1]] == ["3", "4", "6", "9", "10", "14"]
    assert all(line.startswith(f"{bad}:") and " — " in line for line in lines[:-1])
    assert "t1_quantity 9 is more than quantity 5" in lines[1]
    assert lines[2].endswith("'at' is missing — add 'at: \"09:21\"' (when it happened, "
                             "HH:MM[:SS] on the scenario date)")  # fmt: skip
    assert lines[-1] == f"kite-skills sandbox: 6 problems in {bad}; nothing served"
    assert "Traceback" not in done.stderr and not journal.exists()


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"\xff\xfeclock: x\n", "save it as UTF-8 text"),
        (b"clock: [\n", ": not valid YAML: "),
        (b"- just\n- a list\n", ":1: the scenario is not 'key: value' lines — "),
        (b"", ":1: the scenario is empty — "),
        (
            b'clock: "2026-12-02 11:30:00"\nname: "\x1b[31m"\n',
            ":2: not valid YAML: special characters are not allowed (character U+001B) — ",
        ),
        (
            b'clock: "2026-12-02 11:30:00"\na: &a [x, x, x, x, x, x, x, x, x, x]\n'
            b"b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nname: *b\n",
            ":3: an alias (*a): a scenario does not read anchors and aliases — ",
        ),
        (
            b'clock: "2026-12-02 11:30:00"\nname: ' + b"[" * 5000 + b"]" * 5000 + b"\n",
            ":2: nested more than 16 levels deep — ",
        ),
        (
            b'clock: "2026-12-02 11:30:00"\nfunds: {equity: {cash: ' + b"9" * 5000 + b"}}\n",
            ":2: a number of 5000 characters — ",
        ),
        (b'clock: "9999-12-31 23:59"\n', ":1: clock: the year 9999 is outside the years "),
    ],
)
def test_an_unreadable_scenario_file_is_said_in_place(
    sandbox: Callable[..., Done], tmp_path: Path, content: bytes, said: str
) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_bytes(content)
    done = sandbox("--scenario", str(bad), "--journal", str(tmp_path / "j.jsonl"))
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"{bad}:") and said in lines[0], done.stderr
    assert lines[-1].endswith("nothing served") and "Traceback" not in done.stderr


def test_the_start_line_names_simulation_scenario_and_clock(tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    done = run(
        tmp_path, "--scenario", "pre-open", "--at", "2026-12-02 08:45", "--speed", "60",
        "--journal", str(journal),
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "kite-skills sandbox: a SIMULATION (no Kite account, no real money): scenario "
        f"'pre-open', clock 2026-12-02 08:45 IST at 60x, tools grouped; journal {journal}"
    ]


def test_at_a_terminal_the_start_line_says_it_waits_for_an_mcp_client(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "kite_skills", "sandbox", "--journal", str(tmp_path / "j.jsonl")],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(tmp_path),
    )
    os.close(follower)
    try:
        assert process.stderr is not None
        line = process.stderr.readline().decode()
    finally:
        process.kill()
        process.wait()
        os.close(leader)
    assert line.startswith("kite-skills sandbox: a SIMULATION")
    # the command it names is the one that started it (here: python -m kite_skills)
    assert line.rstrip().endswith(
        "serving MCP on stdio for an MCP client (Ctrl-C stops it; "
        f"'{sys.executable} -m kite_skills setup CLIENT --sandbox' connects one)"
    )


def test_a_journal_option_naming_another_file_leaves_it_alone(
    sandbox: Callable[..., Done], tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# my notes\n", "utf-8")
    done = sandbox("--journal", str(notes))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"kite-skills sandbox: error: {notes}: this file is not a sandbox journal, and the "
        "sandbox appends only to its own — choose another file with --journal FILE"
    ]
    assert notes.read_text("utf-8") == "# my notes\n"


def test_infinite_and_enormous_numbers_in_a_scenario_are_problems_not_a_crash(
    sandbox: Callable[..., Done], tmp_path: Path
) -> None:
    bad = tmp_path / "huge.yaml"
    bad.write_text(
        'clock: "2026-12-02 11:30:00"\n'
        "funds: {equity: {opening_balance: .inf}}\n"
        "holdings:\n"
        f"  - {{exchange: NSE, tradingsymbol: INFY, quantity: {10**400}, average_price: .nan}}\n"
        "market:\n"
        "  NSE:INFY:\n"
        "    liquidity: -5\n"
        "    path:\n"
        '      - ["11:31", 1e400]\n',
        "utf-8",
    )
    done = sandbox("--scenario", str(bad), "--journal", str(tmp_path / "j.jsonl"))
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert [line.split(":", 2)[1] for line in lines[:-1]] == ["2", "4", "4", "7", "9"]
    assert "'opening_balance' must be a finite number of at most 10^15 (got inf)" in lines[0]
    assert "'average_price' must be a finite number" in lines[2]
    assert "price must be a positive number of at most 10^15 (got inf)" in lines[4]
    assert all(" — " in line for line in lines[:-1])
