"""`kite-skills setup CLIENT [--write]` and `kite-skills doctor`, in-process on real files."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from kite_skills.cli import main
from kite_skills.cli_setup import CLIENTS, config_path
from kite_skills.store import LATEST_VERSION, Store, agent

OTHER = {"command": "/usr/bin/other", "args": ["--x"]}
# Clients whose setup prints a JSON snippet (Claude Code's is a 'claude mcp add' line).
JSON_CLIENTS = sorted(set(CLIENTS) - {"claude-code"})


def entry(config: dict[str, object], key: str) -> dict[str, object]:
    servers = config[key]
    assert isinstance(servers, dict)
    value = servers["kite-skills"]
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize("client", JSON_CLIENTS)
def test_prints_a_snippet_with_absolute_paths(
    client: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pyz = tmp_path / "kite-skills.pyz"
    with zipfile.ZipFile(pyz, "w") as archive:
        archive.writestr("__main__.py", "")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["kite-skills.pyz"])  # started by a relative path
    db = tmp_path / "s.db"
    assert main(["setup", client, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    snippet = json.loads(out.split("\n", 1)[1])
    server = entry(snippet, CLIENTS[client].key)
    assert server["command"] == sys.executable
    assert server["args"] == [str(pyz)]
    assert server["env"] == {"KITE_SKILLS_DB": str(db)}
    assert ("type" in server) == CLIENTS[client].typed


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_write_merges_backs_up_and_keeps_other_servers(
    client: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = CLIENTS[client].key
    config = tmp_path / "config.json"
    before = {"theme": "dark", key: {"other": OTHER}}
    config.write_text(json.dumps(before))
    db = tmp_path / "s.db"
    assert main(["setup", client, "--write", "--config", str(config), "--db", str(db)]) == 0
    after = json.loads(config.read_text())
    assert after["theme"] == "dark"
    assert after[key]["other"] == OTHER
    assert entry(after, key)["env"] == {"KITE_SKILLS_DB": str(db)}
    backups = list(tmp_path.glob("config.json.kite-skills-backup*"))
    assert len(backups) == 1 and json.loads(backups[0].read_text()) == before
    assert str(config) in capsys.readouterr().out
    # Running it again with another store replaces our entry, still keeping the other one.
    assert main(["setup", client, "--write", "--config", str(config)]) == 0
    again = json.loads(config.read_text())
    assert set(again[key]) == {"other", "kite-skills"}
    assert f"updated 'kite-skills' in {config} from " in capsys.readouterr().out


def test_write_creates_a_missing_file(tmp_path: Path) -> None:
    config = tmp_path / "new" / "mcp.json"
    assert main(["setup", "cursor", "--write", "--config", str(config)]) == 0
    assert set(json.loads(config.read_text())["mcpServers"]) == {"kite-skills"}
    assert list(config.parent.iterdir()) == [config]  # nothing to back up


@pytest.mark.parametrize(
    "text", ['{"mcpServers": {"other": ', "[1, 2]", '{"mcpServers": [1]}', '{"a": 1} // note']
)
def test_write_refuses_a_file_it_cannot_parse(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(text)
    assert main(["setup", "claude-desktop", "--write", "--config", str(config)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kite-skills: error: ") and str(config) in err
    assert "nothing was changed" in err
    assert config.read_text() == text
    assert list(tmp_path.iterdir()) == [config]


def test_write_keeps_a_private_configs_mode(tmp_path: Path) -> None:
    """A client config holds other servers' secrets: 0600 stays 0600, backup included."""
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(json.dumps({"mcpServers": {"other": {**OTHER, "env": {"TOKEN": "s"}}}}))
    config.chmod(0o600)
    assert main(["setup", "claude-desktop", "--write", "--config", str(config)]) == 0
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    (backup,) = tmp_path.glob("claude_desktop_config.json.kite-skills-backup*")
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert set(json.loads(config.read_text())["mcpServers"]) == {"other", "kite-skills"}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([config.name, backup.name])


def test_a_new_config_is_made_private(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    assert main(["setup", "cursor", "--write", "--config", str(config)]) == 0
    assert stat.S_IMODE(config.stat().st_mode) == 0o600


def test_write_goes_through_a_symlinked_config(tmp_path: Path) -> None:
    """Dotfile managers keep the config elsewhere and link it: the link stays a link and the
    file it leads to is written, in its own folder, with its own mode."""
    real = tmp_path / "dotfiles" / "claude.json"
    real.parent.mkdir()
    real.write_text(json.dumps({"mcpServers": {"other": OTHER}}))
    real.chmod(0o640)
    link = tmp_path / "home" / ".claude.json"
    link.parent.mkdir()
    link.symlink_to(real)
    assert main(["setup", "claude-code", "--write", "--config", str(link)]) == 0
    assert link.is_symlink() and link.resolve() == real
    assert set(json.loads(real.read_text())["mcpServers"]) == {"other", "kite-skills"}
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert list(link.parent.iterdir()) == [link]  # nothing left beside the link
    assert len(list(real.parent.glob("claude.json.kite-skills-backup*"))) == 1
    assert not list(real.parent.glob(".*partial*"))


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert line.startswith("kite-skills: error: ") and "Traceback" not in captured.err
    return line


def test_config_that_is_a_folder_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "Code"
    folder.mkdir()
    assert main(["setup", "vscode", "--write", "--config", str(folder)]) == 1
    assert one_line_error(capsys) == (
        f"kite-skills: error: {folder} is a folder, not a config file — give --config the "
        f"file's path, e.g. {folder / 'mcp.json'}; nothing was changed"
    )
    assert list(folder.iterdir()) == []


def test_config_below_a_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine")
    config = blocker / "sub" / "mcp.json"
    assert main(["setup", "cursor", "--write", "--config", str(config)]) == 1
    assert one_line_error(capsys) == (
        f"kite-skills: error: {blocker} is a file, so {config} cannot be made below it — give "
        "--config a file in a folder; nothing was changed"
    )
    assert blocker.read_text() == "mine"


def test_a_symlink_loop_as_config_is_one_line_and_stays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loop = tmp_path / "mcp.json"
    loop.symlink_to(loop)
    assert main(["setup", "cursor", "--write", "--config", str(loop)]) == 1
    line = one_line_error(capsys)
    assert line.startswith(f"kite-skills: error: {loop} is a symbolic link that never reaches")
    assert loop.is_symlink() and list(tmp_path.iterdir()) == [loop]


def test_config_paths_per_os() -> None:
    home = {"HOME": "/h"}
    assert config_path("claude-desktop", home, "darwin") == Path(
        "/h/Library/Application Support/Claude/claude_desktop_config.json"
    )
    win = {"USERPROFILE": "/u", "APPDATA": "/u/AppData/Roaming"}
    assert config_path("claude-desktop", win, "win32") == Path(
        "/u/AppData/Roaming/Claude/claude_desktop_config.json"
    )
    assert config_path("vscode", home, "linux") == Path("/h/.config/Code/User/mcp.json")
    assert config_path("vscode", home, "darwin") == Path(
        "/h/Library/Application Support/Code/User/mcp.json"
    )
    assert config_path("vscode", win, "win32") == Path("/u/AppData/Roaming/Code/User/mcp.json")
    assert config_path("cursor", home, "linux") == Path("/h/.cursor/mcp.json")
    assert config_path("claude-code", win, "win32") == Path("/u/.claude.json")


def test_doctor_reports_the_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.db"
    assert main(["doctor", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert f"store:         {db} (not created yet)" in out
    assert not db.exists()  # doctor never creates the store
    with Store.open(db) as store:
        agent.save(
            store, "one-skill", "A skill for the doctor to count.", "# One\n\nStep.\n", who="t"
        )
    assert main(["doctor", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert f"store:         {db} (exists)" in out
    assert f"schema:        version {LATEST_VERSION} (this kite-skills: {LATEST_VERSION})" in out
    assert "skills:        draft 1, live 0, archived 0" in out
    assert "interpreter:   " + sys.executable in out


ROOT = Path(__file__).resolve().parents[1]


def doctor(db: Path) -> subprocess.CompletedProcess[str]:
    """`kite-skills doctor --db DB` in its own process: a doctor that hangs is killed at the
    bound (a failure), never waited on forever."""
    return subprocess.run(
        [sys.executable, "-m", "kite_skills", "doctor", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def store_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    (line,) = [x for x in result.stdout.splitlines() if x.startswith("               cannot")]
    return line.strip()


def test_doctor_names_a_named_pipe_without_waiting_on_it(tmp_path: Path) -> None:
    fifo = tmp_path / "skills.db"
    os.mkfifo(fifo)
    result = doctor(fifo)
    assert result.returncode == 1
    assert store_line(result) == (
        "cannot read it: a named pipe (FIFO), not a store file — name a regular file"
    )


def test_doctor_names_a_symlink_loop(tmp_path: Path) -> None:
    loop = tmp_path / "skills.db"
    loop.symlink_to(loop)
    result = doctor(loop)
    assert result.returncode == 1
    assert store_line(result) == (
        "cannot read it: a symbolic link that leads in a loop, never to a file — point it at "
        "the store file, or remove it"
    )


def test_doctor_names_a_folder_as_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "skills.db"
    folder.mkdir()
    result = doctor(folder)
    assert result.returncode == 1
    assert store_line(result) == (
        f"cannot read it: a folder, not a store file — name the file, e.g. {folder / 'skills.db'}"
    )
    assert "disk I/O error" not in result.stdout


def test_doctor_reports_a_damaged_store_as_damaged(tmp_path: Path) -> None:
    """Bytes of one index page overwritten: every count still reads, so only SQLite's
    integrity check tells; the doctor runs it."""
    db = tmp_path / "s.db"
    with Store.open(db) as store:
        for i in range(30):
            agent.save(store, f"skill-{i}", f"Skill {i} for the doctor.", "# S\n\nStep.\n", who="t")
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    (page,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'audit_log_skill'")
    conn.close()
    with db.open("r+b") as file:
        file.seek(page[0] * page_size - 200)
        file.write(b"\xff" * 150)
    with sqlite3.connect(db) as conn:  # what the doctor printed before: all reads well
        assert conn.execute("SELECT COUNT(*) FROM skills").fetchone() == (30,)
    result = doctor(db)
    assert result.returncode == 1
    line = store_line(result)
    assert line.startswith("cannot read it: damaged: SQLite's integrity check says: On tree page")
    assert line.endswith(
        "— restore it from a backup, or move it aside (sqlite3's '.recover' may "
        "save its contents) and let kite-skills start a new one"
    )
    assert "skills:" not in result.stdout


def test_doctor_exits_0_when_all_is_well(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with Store.open(db) as store:
        agent.save(store, "one-skill", "A skill for the doctor.", "# One\n\nStep.\n", who="t")
    result = doctor(db)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "skills:        draft 1, live 0, archived 0" in result.stdout
