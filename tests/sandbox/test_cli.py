"""The commands a person types: `kite-skills sandbox --help`, `kite-skills setup CLIENT
--sandbox [--write]` and `kite-skills sandbox journal [FILE]`, in-process on real files."""

from __future__ import annotations

import json
import os
import sys
import zipfile
from datetime import datetime
from pathlib import Path

import pytest

from kite_skills import invocation
from kite_skills.cli import main
from kite_skills.cli.setup import CLIENTS
from kite_skills.sandbox.journal import Journal, default_path, entries
from kite_skills.sandbox.sim import scenario_names


def test_sandbox_help_names_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["sandbox", "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    for option in ("--scenario", "--at", "--speed", "--tools", "--journal", "--http", "--port"):
        assert option in out
    assert "grouped" in out and "legacy-oldest" in out and "journal" in out
    flat = " ".join(out.split())
    for name in scenario_names():  # the help names every built-in scenario
        assert name in flat


def test_the_main_help_lists_the_sandbox(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "sandbox" in capsys.readouterr().out


@pytest.mark.parametrize("client", sorted(set(CLIENTS) - {"claude-code"}))  # JSON snippets
def test_setup_sandbox_prints_the_kite_sandbox_entry(
    client: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pyz = tmp_path / "kite-skills.pyz"
    with zipfile.ZipFile(pyz, "w") as archive:
        archive.writestr("__main__.py", "")
    monkeypatch.setattr(sys, "argv", [str(pyz)])
    assert main(["setup", client, "--sandbox"]) == 0
    snippet = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    servers = snippet[CLIENTS[client].key]
    assert list(servers) == ["kite-sandbox"]
    entry = servers["kite-sandbox"]
    assert entry["command"] == sys.executable
    assert entry["args"] == [str(pyz), "sandbox"]
    assert "env" not in entry  # no store: the sandbox never opens one
    assert ("type" in entry) == CLIENTS[client].typed


def test_setup_sandbox_write_sits_beside_the_main_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.json"
    db = tmp_path / "s.db"
    assert (
        main(["setup", "claude-desktop", "--write", "--config", str(config), "--db", str(db)]) == 0
    )
    assert main(["setup", "claude-desktop", "--write", "--config", str(config), "--sandbox"]) == 0
    servers = json.loads(config.read_text())["mcpServers"]
    assert set(servers) == {"kite-skills", "kite-sandbox"}
    assert servers["kite-sandbox"]["args"][-1] == "sandbox"
    assert servers["kite-skills"]["env"] == {"KITE_SKILLS_DB": str(db)}
    assert "added 'kite-sandbox'" in capsys.readouterr().out


def test_the_default_journal_is_in_the_per_user_data_folder() -> None:
    assert default_path({"HOME": "/h"}, "linux") == Path(
        "/h/.local/share/kite-skills/sandbox/journal.jsonl"
    )
    assert default_path({"HOME": "/h", "XDG_DATA_HOME": "/x"}, "linux") == Path(
        "/x/kite-skills/sandbox/journal.jsonl"
    )
    assert default_path({"HOME": "/h"}, "darwin") == Path(
        "/h/Library/Application Support/kite-skills/sandbox/journal.jsonl"
    )
    assert default_path({"LOCALAPPDATA": "C:/L"}, "win32") == Path(
        "C:/L/kite-skills/sandbox/journal.jsonl"
    )


def test_journal_prints_a_timeline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "nested" / "journal.jsonl"
    journal = Journal(path)
    journal.start(scenario="default", clock="2026-12-01 10:15", speed=1.0, tools="grouped",
                  transport="stdio")  # fmt: skip
    journal.call(
        sim_time=datetime(2026, 12, 1, 10, 15, 3),
        tool="orders",
        arguments={"mode": "place", "tradingsymbol": "INFY", "tag": "\ud800\x07"},
        text="Failed to place order",
        is_error=True,
        kite_error="Insufficient funds",
    )
    journal.close()
    with path.open("ab") as handle:
        handle.write(b'{"kind": "call", "seq"')  # a line torn by a crash mid-write
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert main(["sandbox", "journal", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("== ") and "scenario default" in out[0]
    assert out[1].startswith("2026-12-01 10:15:03 IST  #1  orders mode=place")
    assert out[2] == "    ERROR: Failed to place order"
    assert out[3] == "    Kite said: Insufficient funds"
    assert out[4].endswith(":3: (not a journal entry; skipped)")
    recorded = [e for _, e in entries(path) if e is not None]
    assert recorded[1]["arguments"]["tag"] == "\ud800\x07"  # kept exactly, escaped in JSON


def test_journal_of_a_missing_file_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sandbox", "journal", str(tmp_path / "none.jsonl")]) == 1
    err = capsys.readouterr().err
    assert (
        "none.jsonl: no sandbox journal here yet — the sandbox starts it on its first launch" in err
    )
    assert len(err.splitlines()) == 1
    # the commands it names are the ones that start kite-skills here (in process: this test's)
    assert f"{invocation.current().run('sandbox', 'journal')} FILE" in err


def test_sandbox_after_a_global_option_is_refused_not_served(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", str(tmp_path / "s.db"), "sandbox"]) == 2
    assert "'sandbox' comes first" in capsys.readouterr().err
    assert not (tmp_path / "s.db").exists()


def test_the_timeline_shows_escapes_for_what_would_move_or_reorder_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A client's arguments reach the person's terminal: an escape sequence, a bidi override
    and a lone surrogate are printed as escapes, never acted on."""
    path = tmp_path / "journal.jsonl"
    journal = Journal(path)
    journal.call(
        sim_time=datetime(2026, 12, 1, 10, 15, 3),
        tool="orders",
        arguments={"mode": "place", "tradingsymbol": "INFY\x1b[2K\u202eEQ\ud800"},
        text="Failed to place order",
        is_error=True,
        kite_error=None,
    )
    journal.close()
    assert main(["sandbox", "journal", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert "INFY\\u001b[2K\\u202eEQ\\ud800" in out
