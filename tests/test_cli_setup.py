"""`kite-skills setup CLIENT [--write]` and `kite-skills doctor`, in-process on real files."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

import pytest

from kite_skills.cli import main
from kite_skills.cli_setup import CLIENTS, config_path
from kite_skills.store import LATEST_VERSION, Store, agent

OTHER = {"command": "/usr/bin/other", "args": ["--x"]}


def entry(config: dict[str, object], key: str) -> dict[str, object]:
    servers = config[key]
    assert isinstance(servers, dict)
    value = servers["kite-skills"]
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize("client", sorted(CLIENTS))
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
    backups = list(tmp_path.glob("config.json.kite-skills-backup-*"))
    assert len(backups) == 1 and json.loads(backups[0].read_text()) == before
    assert str(config) in capsys.readouterr().out
    # Running it again replaces our entry, still keeping the other one.
    assert main(["setup", client, "--write", "--config", str(config)]) == 0
    again = json.loads(config.read_text())
    assert set(again[key]) == {"other", "kite-skills"}


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
