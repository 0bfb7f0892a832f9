"""What a person sees when `kite-skills sandbox` cannot start as asked, in a real subprocess:
a bad option value is one stderr line and exit 2; a bad scenario file is one `path:line:`
line per problem and a summary, exit 1; never a traceback, and stdout (JSON-RPC's) empty."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

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


def run(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kite_skills", "sandbox", *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env(home),
        timeout=120,
    )


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--speed", "fast"], "argument --speed: 'fast': give simulated seconds per real second"),
        (["--speed", "0"], "argument --speed: '0': give simulated seconds"),
        (["--speed", "nan"], "argument --speed: 'nan': give simulated seconds"),
        (["--speed", "1e9"], "at most 3600"),
        (["--tools", "newest"], "argument --tools: invalid choice: 'newest'"),
        (["--port", "99999", "--http"], "argument --port: '99999' is not a port from 0 to 65535"),
        (["--at", "yesterday"], "--at 'yesterday': write the simulated start as"),
        (["--at", "2026-12-02 25:00"], "--at '2026-12-02 25:00': write the simulated start as"),
        (["--at", "9999-12-31 23:59"], "more than 7 days after the scenario's clock"),
        (["--at", "2026-12-02 11:29"], "is before the scenario's clock (2026-12-02 11:30)"),
        (["--scenario", "nosuch"], "--scenario 'nosuch': no built-in scenario and no file"),
        (["--journal", "."], "cannot open the sandbox journal"),
        (["bogus"], "invalid choice: 'bogus'"),
    ],
)
def test_a_bad_option_is_one_line_and_exit_2(tmp_path: Path, argv: list[str], said: str) -> None:
    done = run(tmp_path, "--journal", str(tmp_path / "j.jsonl"), *argv)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("kite-skills sandbox: error: ") and said in lines[0], lines[0]
    assert not (tmp_path / "j.jsonl").exists() or argv[0] == "--journal"


def test_a_bad_scenario_file_names_every_problem_and_serves_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "mine.yaml"
    bad.write_text(BAD_SCENARIO, "utf-8")
    journal = tmp_path / "j.jsonl"
    done = run(tmp_path, "--scenario", str(bad), "--journal", str(journal))
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
    ],
)
def test_an_unreadable_scenario_file_is_said_in_place(
    tmp_path: Path, content: bytes, said: str
) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_bytes(content)
    done = run(tmp_path, "--scenario", str(bad), "--journal", str(tmp_path / "j.jsonl"))
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


def test_a_journal_option_naming_another_file_leaves_it_alone(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# my notes\n", "utf-8")
    done = run(tmp_path, "--journal", str(notes))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"kite-skills sandbox: error: {notes}: this file is not a sandbox journal, and the "
        "sandbox appends only to its own — choose another file with --journal FILE"
    ]
    assert notes.read_text("utf-8") == "# my notes\n"


def test_infinite_and_enormous_numbers_in_a_scenario_are_problems_not_a_crash(
    tmp_path: Path,
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
    done = run(tmp_path, "--scenario", str(bad), "--journal", str(tmp_path / "j.jsonl"))
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert [line.split(":", 2)[1] for line in lines[:-1]] == ["2", "4", "4", "7", "9"]
    assert "'opening_balance' must be a finite number of at most 10^15 (got inf)" in lines[0]
    assert "'average_price' must be a finite number" in lines[2]
    assert "price must be a positive number of at most 10^15 (got inf)" in lines[4]
    assert all(" — " in line for line in lines[:-1])
