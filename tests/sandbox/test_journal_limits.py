"""The journal's limits (issue 38): an agent cannot grow it without bound, a full disk never
makes a done call look failed (an agent would do it again), and a journal that is not a file
(a FIFO, a pipe) is refused in one line instead of hanging the start."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from kite_skills.sandbox import journal as journal_module
from kite_skills.sandbox.journal import (
    MAX_UNKNOWN,
    MAX_VALUE_CHARS,
    NOT_A_PARAMETER,
    Journal,
    recorded,
)

from .sandbox_harness import RawPeer, command, env

PLACE = {
    "mode": "place", "exchange": "NSE", "tradingsymbol": "INFY", "transaction_type": "BUY",
    "quantity": 1, "product": "CNC", "order_type": "MARKET", "market_protection": -1,
}  # fmt: skip
PARAMETERS = frozenset({"mode", "tag", "instruments"})


def _string_of_json_length(length: int) -> str:
    """A string whose JSON (with its two quotes) is ``length`` characters."""
    return "x" * (length - 2)


def test_a_value_is_kept_up_to_its_limit_and_clipped_past_it() -> None:
    at_limit = _string_of_json_length(MAX_VALUE_CHARS)
    assert recorded({"tag": at_limit}, PARAMETERS) == {"tag": at_limit}
    over = _string_of_json_length(MAX_VALUE_CHARS + 1)
    kept = recorded({"tag": over}, PARAMETERS)["tag"]
    assert (
        kept
        == f'"{over[: MAX_VALUE_CHARS - 1]}… (clipped: {MAX_VALUE_CHARS + 1} characters of JSON)'
    )
    many = ["NSE:INFY"] * 10_000  # a list is clipped by its JSON too
    assert len(recorded({"instruments": many}, PARAMETERS)["instruments"]) < MAX_VALUE_CHARS + 60
    assert len(json.dumps(recorded(["x" * 10**6], PARAMETERS))) < MAX_VALUE_CHARS + 60


def test_arguments_that_are_no_parameter_are_kept_by_name_only_up_to_a_count() -> None:
    others = {f"pad{i}": "x" * 10**5 for i in range(MAX_UNKNOWN)}
    kept = recorded({"mode": "place", **others}, PARAMETERS)
    assert kept == {"mode": "place", **dict.fromkeys(others, NOT_A_PARAMETER)}
    one_more = recorded({"mode": "place", **others, "y" * 10**5: 1}, PARAMETERS)
    assert len(one_more) == 1 + MAX_UNKNOWN + 1
    assert one_more["…"] == "1 more arguments that are not parameters of this tool"
    assert len(json.dumps(one_more)) < 4000


def _call(journal: Journal, result: str) -> None:
    journal.call(
        sim_time=datetime(2026, 12, 2, 11, 30), tool="portfolio", arguments={"mode": "x"},
        text=result, is_error=False,
    )  # fmt: skip


def test_a_journal_is_renamed_when_the_next_entry_would_pass_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    probe = Journal(tmp_path / "probe.jsonl")
    probe.start(scenario="default")
    _call(probe, "")
    entry = (tmp_path / "probe.jsonl").stat().st_size  # a start line and one empty call
    probe.close()
    journal = Journal(path, max_bytes=entry + 100)
    journal.start(scenario="default")
    _call(journal, "r" * 100)  # exactly at the limit: kept in the file
    assert path.stat().st_size == entry + 100
    assert not path.with_name("j.jsonl.1").exists()
    _call(journal, "")  # one entry more: the file is renamed first
    journal.close()
    old = [json.loads(x) for x in path.with_name("j.jsonl.1").read_text().splitlines()]
    new = [json.loads(x) for x in path.read_text().splitlines()]
    assert [e["kind"] for e in old] == ["start", "call"] and old[1]["seq"] == 1
    assert new[0]["kind"] == "start" and new[0]["continued"] is True
    assert new[0]["scenario"] == "default" and [e["seq"] for e in new[1:]] == [2]
    timeline = list(journal_module.timeline(path))  # each file reads on its own
    assert timeline[0].startswith("== ") and "#2" in timeline[1]


def test_a_padded_call_over_stdio_adds_a_bounded_entry(tmp_path: Path) -> None:
    """315 MB in 4 s was an agent padding its arguments: each call's entry is now bounded,
    whatever it sends."""
    journal = tmp_path / "j.jsonl"
    peer = RawPeer(tmp_path, journal)
    try:
        peer.initialize()
        padded = {**PLACE, "tag": "t" * 500_000, **{f"pad{i}": "p" * 20_000 for i in range(50)}}
        reply = peer.request("tools/call", {"name": "orders", "arguments": padded})
        assert "result" in reply or "error" in reply
        long_name = peer.request("tools/call", {"name": "n" * 200_000, "arguments": {}})
        assert "error" in long_name
    finally:
        code, stderr = peer.close()
    assert code == 0, stderr
    lines = journal.read_bytes().splitlines()
    assert len(lines) == 3 and max(len(line) for line in lines[1:]) < 6000
    entry = json.loads(lines[1])
    assert entry["arguments"]["tag"].endswith("… (clipped: 500002 characters of JSON)")
    assert entry["arguments"]["pad0"] == NOT_A_PARAMETER
    assert json.loads(lines[2])["tool"].endswith("… (200000 characters)")


# ---- a full disk ---------------------------------------------------------------------------


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 256 KiB tmpfs, mounted for the test and unmounted after (needs root: CI runs
    as root)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    folder = tmp_path / "disk"
    folder.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def _fill(disk: Path, journal: Path) -> None:
    """Pad the journal with a valid entry to a whole number of pages (so that its next line
    needs a page of its own), then fill every page left."""
    slack = -journal.stat().st_size % 4096
    pad = slack if slack >= 80 else slack + 4096
    stub = json.dumps({"kind": "call", "seq": 0, "tool": "(padding)", "result": ""})
    line = stub[:-2] + "x" * (pad - len(stub) - 1) + '"}\n'
    with journal.open("a") as handle:
        handle.write(line)
    filler = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(filler, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == 28  # ENOSPC
    finally:
        os.close(filler)
    assert journal.stat().st_size % 4096 == 0


def test_on_a_full_disk_a_placed_order_is_answered_as_placed_and_nothing_runs_after(
    tmp_path: Path, full_disk: Path
) -> None:
    journal = full_disk / "j.jsonl"
    peer = RawPeer(tmp_path, journal)
    try:
        peer.initialize()
        _fill(full_disk, journal)
        placed = peer.request("tools/call", {"name": "orders", "arguments": PLACE})
        assert placed["result"]["isError"] is False, placed
        assert "order_id" in json.loads(placed["result"]["content"][0]["text"])
        (full_disk / "filler").unlink()  # space again: still refused until a restart
        for arguments in (PLACE, {"mode": "list"}):
            refused = peer.request("tools/call", {"name": "orders", "arguments": arguments})
            assert refused["result"]["isError"] is True
            assert refused["result"]["content"][0]["text"].startswith(
                "not run, nothing changed: the sandbox's journal cannot record calls (No space "
                "left on device)"
            )
    finally:
        code, stderr = peer.close()
    assert code == 0 and "Traceback" not in stderr
    said = stderr.splitlines()
    assert said[1:] == [
        f"kite-skills sandbox: {journal}: cannot write the sandbox journal: No space left on "
        "device — free space there, or choose another file with --journal FILE, and start the "
        "sandbox again (the call orders was done and answered; no further call runs)"
    ]
    tools = [e.get("tool") for _, e in journal_module.entries(journal) if e is not None]
    assert "orders" not in tools  # no entry for it: the disk was full


def test_a_sandbox_started_on_a_full_disk_says_so_in_one_line(
    tmp_path: Path, full_disk: Path
) -> None:
    (full_disk / "other.jsonl").touch()
    _fill(full_disk, full_disk / "other.jsonl")
    journal = full_disk / "j.jsonl"
    done = subprocess.run(
        command(journal), env=env(tmp_path), stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == [
        f"kite-skills sandbox: error: {journal}: cannot write the sandbox journal: No space "
        "left on device — free space there, or choose another file with --journal FILE, and "
        "start the sandbox again"
    ]


# ---- a journal that is not a file ----------------------------------------------------------


def _start(tmp_path: Path, journal: str, **streams: int) -> subprocess.CompletedProcess[str]:
    """The sandbox's start, bounded: a start that hangs fails the test by its timeout."""
    return subprocess.run(
        command(Path(journal)), env=env(tmp_path), stdin=subprocess.DEVNULL,
        text=True, timeout=60, **streams,
    )  # fmt: skip


def test_a_fifo_as_the_journal_is_refused_in_one_line(tmp_path: Path) -> None:
    fifo = tmp_path / "journal.fifo"
    os.mkfifo(fifo)
    done = _start(tmp_path, str(fifo), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"kite-skills sandbox: error: {fifo}: this is a FIFO or pipe, and the sandbox journal "
        "must be a file it can read back and append to — choose a file with --journal FILE"
    ]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_dev_stdout_or_stderr_as_the_journal_is_refused_when_it_is_a_pipe(
    tmp_path: Path, stream: str
) -> None:
    done = _start(tmp_path, f"/dev/{stream}", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert done.returncode == 2
    said = done.stderr.splitlines()
    assert said == [
        f"kite-skills sandbox: error: /dev/{stream}: this is a FIFO or pipe, and the sandbox "
        "journal must be a file it can read back and append to — choose a file with "
        "--journal FILE"
    ]
    assert done.stdout == ""


def test_a_regular_file_behind_dev_stderr_is_a_journal(tmp_path: Path) -> None:
    """The refusal is of pipes, not of a name: stderr redirected to a file is a file."""
    err = tmp_path / "err.jsonl"
    with err.open("a") as handle:  # O_APPEND, as the journal writes
        done = _start(tmp_path, "/dev/stderr", stdout=subprocess.PIPE, stderr=handle)
    assert done.returncode == 0
    assert json.loads(err.read_text().splitlines()[0])["kind"] == "start"


# ---- the folders it makes ------------------------------------------------------------------


def test_the_folders_the_sandbox_makes_are_user_only(tmp_path: Path) -> None:
    """Started before the store exists, the sandbox makes the store's folder (kite-skills/ in
    the data folder): 0700, as the store makes it, whatever the umask."""
    data = tmp_path / "data"
    argv = [a for a in command(Path("unused")) if a not in ("--journal", "unused")]
    done = subprocess.run(
        argv, env=env(tmp_path), stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=60, umask=0o022,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for folder in (data, data / "kite-skills", data / "kite-skills" / "sandbox"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    journal = data / "kite-skills" / "sandbox" / "journal.jsonl"
    assert stat.S_IMODE(journal.stat().st_mode) == 0o600
