"""`kite-skills setup CLIENT [--write]` and `kite-skills doctor`, in-process on real files."""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from kite_skills.cli import main
from kite_skills.cli.setup import CLIENTS, config_path
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


# ---- setup papercuts: re-runs, backups, JSONC, unwritable folders, fragile places ----------


def test_rewriting_the_same_entry_changes_nothing_and_keeps_one_backup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"other": OTHER}}))
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    write = ["setup", "cursor", "--write", "--config", str(config), "--db"]
    assert main([*write, str(first)]) == 0
    capsys.readouterr()
    written = config.stat()
    assert main([*write, str(first)]) == 0
    assert capsys.readouterr().out.endswith(f" (store {first}); unchanged\n")
    assert config.stat().st_mtime_ns == written.st_mtime_ns  # not rewritten
    assert main([*write, str(second)]) == 0
    said = capsys.readouterr().out
    assert f"updated 'kite-skills' in {config} from " in said
    assert f"(store {first}) to " in said and f"(store {second}) (backup: " in said
    assert main([*write, str(first)]) == 0
    (backup,) = tmp_path.glob("mcp.json.kite-skills-backup*")  # one, not one per run
    assert backup.name == "mcp.json.kite-skills-backup"
    previous = json.loads(backup.read_text())["mcpServers"]["kite-skills"]
    assert previous["env"] == {"KITE_SKILLS_DB": str(second)}  # the file before the last change


def test_a_vscode_config_with_comments_gets_the_entry_to_paste(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """VS Code's mcp.json is JSON with comments: rewriting it would drop them, so the entry is
    printed for the person to paste, without a parser's message."""
    config = tmp_path / "mcp.json"
    text = '{\n  // my servers\n  "servers": {\n    "other": {"command": "x"},\n  },\n}\n'
    config.write_text(text)
    db = tmp_path / "s.db"
    assert main(["setup", "vscode", "--write", "--config", str(config), "--db", str(db)]) == 1
    err = capsys.readouterr().err
    first, *pasted = err.splitlines()
    assert first == (
        f"kite-skills: error: {config}:2:3: it holds comments or trailing commas, which VS "
        "Code allows and kite-skills does not rewrite — paste this entry by hand into its "
        '"servers" object:'
    )
    assert pasted[-1] == "(or remove the comments and run again); nothing was changed"
    assert json.loads("\n".join(pasted[:-1])) == {
        "kite-skills": {
            "type": "stdio",
            "command": sys.executable,
            "args": ["-m", "kite_skills"],
            "env": {"KITE_SKILLS_DB": str(db)},
        }
    }
    assert "Expecting" not in err and "Traceback" not in err
    assert config.read_text() == text and list(tmp_path.iterdir()) == [config]


def test_an_unwritable_config_folder_is_one_line(
    shared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from .store.helpers import NOBODY, unprivileged

    folder = shared / "Code" / "User"
    folder.mkdir(parents=True)
    config = folder / "mcp.json"
    config.write_text('{"servers": {}}')
    if os.geteuid() == 0:
        os.chown(config, NOBODY, NOBODY)
    config.chmod(0o644)
    folder.chmod(0o555)
    with unprivileged():
        code = main(["setup", "vscode", "--write", "--config", str(config)])
    assert code == 1
    assert one_line_error(capsys) == (
        f"kite-skills: error: cannot write {config}: Permission denied — check that its "
        "folder is writable; the config was not changed"
    )
    assert config.read_text() == '{"servers": {}}'


def test_a_file_in_downloads_is_warned_about(tmp_path: Path) -> None:
    from .small_zipapp import environment, make_pyz, run_pyz

    home = tmp_path / "home"
    pyz = make_pyz(home / "Downloads")
    done = run_pyz(pyz, ["setup", "cursor"], environment(home))
    assert done.returncode == 0, done.stderr
    (warning,) = done.stderr.splitlines()
    assert warning.startswith(
        f"kite-skills: warning: {pyz} is in {home / 'Downloads'}, where files get cleaned away "
        "or replaced — move it to a folder of its own first"
    )
    assert json.loads(done.stdout.split("\n", 1)[1])["mcpServers"]["kite-skills"]["args"] == [
        str(pyz)
    ]


def test_a_port_out_of_range_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kite_skills", "dashboard", "--port", "99999", "--no-browser"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "KITE_SKILLS_DB": str(tmp_path / "s.db")},
    )
    assert result.returncode == 1
    assert result.stderr == (
        "kite-skills: error: --port 99999 is not a port number: give one from 1 to 65535 (the "
        "default is 7381), or --port 0 for a free one\n"
    )
    assert not (tmp_path / "s.db").exists()


# ---- setup claude-code: the 'claude mcp add' line ----------------------------------------


def claude_line(db: Path, command: list[str], scope: str = "user") -> str:
    words = ["claude", "mcp", "add", "--scope", scope, "--transport", "stdio", "kite-skills"]
    return shlex.join([*words, "--env", f"KITE_SKILLS_DB={db}", "--", *command])


def test_claude_code_prints_the_claude_mcp_add_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pyz = tmp_path / "kite-skills.pyz"
    with zipfile.ZipFile(pyz, "w") as archive:
        archive.writestr("__main__.py", "")
    monkeypatch.setattr(sys, "argv", [str(pyz)])
    db = tmp_path / "s.db"
    assert main(["setup", "claude-code", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1:] == [claude_line(db, [sys.executable, str(pyz)])]
    assert main(["setup", "claude-code", "--sandbox"]) == 0
    add = ["claude", "mcp", "add", "--scope", "user", "--transport", "stdio"]
    assert capsys.readouterr().out.splitlines()[1] == shlex.join(
        [*add, "kite-sandbox", "--", sys.executable, str(pyz), "sandbox"]
    )
    assert main(["setup", "claude-code", "--scope", "local", "--db", str(db)]) == 0
    assert capsys.readouterr().out.splitlines()[1] == claude_line(
        db, [sys.executable, str(pyz)], "local"
    )


def claude_code() -> Path:
    """The real Claude Code CLI that ./build.sh test installs from npm (KITE_SKILLS_CLAUDE)."""
    default = ROOT / ".build" / "claude-code" / "node_modules" / ".bin" / "claude"
    path = Path(os.environ.get("KITE_SKILLS_CLAUDE") or default)
    if not path.exists():
        pytest.fail(
            f"Claude Code not found at {path} — install it as ./build.sh test does: npm "
            f"install --prefix {path.parents[2]} @anthropic-ai/claude-code@VERSION (build.sh's "
            "CLAUDE_CODE_VERSION)",
            pytrace=False,
        )
    return path


def claude_env(home: Path, claude: Path) -> dict[str, str]:
    """A fresh person's environment with the real 'claude' first on PATH, kept offline."""
    from .small_zipapp import environment

    return environment(
        home,
        claude.parent,
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )


@pytest.mark.parametrize("scope", ["user", "local"])
@pytest.mark.parametrize("name", ["kite-skills", "kite-sandbox"])
def test_claude_code_write_with_the_real_claude(
    name: str, scope: str, tmp_path: Path, apps: Path
) -> None:
    """The real Claude Code CLI takes the entry setup gives it, connects to the server (a
    real MCP handshake), is not asked again when nothing changed, and lets it go."""
    from .small_zipapp import make_pyz, run

    claude = claude_code()
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = claude_env(home, claude)
    pyz = make_pyz(apps)
    setup = [sys.executable, str(pyz), "setup", "claude-code", "--scope", scope]
    setup += ["--sandbox"] if name == "kite-sandbox" else []
    added = run([*setup, "--write"], env, cwd=project)
    assert added.returncode == 0, added.stderr
    assert f"'{name}' in Claude Code ({scope} scope) added: it starts " in added.stdout
    listed = run([str(claude), "mcp", "list"], env, cwd=project)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    command = shlex.join([sys.executable, str(pyz)]).replace("'", "")
    sandbox = " sandbox" if name == "kite-sandbox" else ""
    assert f"{name}: {command}{sandbox} - ✔ Connected" in listed.stdout.splitlines()
    got = run([str(claude), "mcp", "get", name], env, cwd=project)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "  Status: ✔ Connected" in got.stdout.splitlines()
    where = "User config" if scope == "user" else "Local config"
    assert f"  Scope: {where}" in got.stdout, got.stdout
    config = (home / ".claude.json").read_text()
    again = run([*setup, "--write"], env, cwd=project)
    assert again.returncode == 0 and again.stdout.endswith("; unchanged\n"), again.stdout
    assert (home / ".claude.json").read_text() == config
    removed = run([*setup, "--remove"], env, cwd=project)
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout == f"kite-skills: removed '{name}' from Claude Code ({scope} scope)\n"
    gone = run([str(claude), "mcp", "get", name], env, cwd=project)
    assert gone.returncode != 0
    assert name not in run([str(claude), "mcp", "list"], env, cwd=project).stdout
    twice = run([*setup, "--remove"], env, cwd=project)
    assert twice.stdout == f"kite-skills: no '{name}' in Claude Code ({scope} scope); unchanged\n"


def test_claude_code_update_replaces_the_entry_with_the_real_claude(
    tmp_path: Path, apps: Path
) -> None:
    from .small_zipapp import make_pyz, run_pyz

    claude = claude_code()
    home = tmp_path / "home"
    home.mkdir()
    env = claude_env(home, claude)
    pyz = make_pyz(apps)
    db = home / "skills.db"
    assert run_pyz(pyz, ["setup", "claude-code", "--write"], env).returncode == 0
    other = home / "other.db"
    moved = run_pyz(pyz, ["setup", "claude-code", "--write", "--db", str(other)], env)
    assert moved.returncode == 0, moved.stderr
    assert f"updated from {shlex.join([sys.executable, str(pyz)])} (store {db}) to " in moved.stdout
    entry = json.loads((home / ".claude.json").read_text())["mcpServers"]["kite-skills"]
    assert entry["env"] == {"KITE_SKILLS_DB": str(other)}


def test_claude_code_write_without_claude_is_one_line(tmp_path: Path, apps: Path) -> None:
    from .small_zipapp import environment, make_pyz, run_pyz

    home = tmp_path / "home"
    pyz = make_pyz(apps)
    result = run_pyz(pyz, ["setup", "claude-code", "--write"], environment(home))
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line == (
        "kite-skills: error: 'claude' (Claude Code's command) is not on PATH — install Claude "
        "Code, or run this where 'claude' works: "
        + claude_line(home / "skills.db", [sys.executable, str(pyz)])
    )
    assert not (home / ".claude.json").exists()


# ---- doctor: which clients start this file, and the verdict -------------------------------

KITE_MCP = {"command": "npx", "args": ["mcp-remote", "https://mcp.kite.trade/mcp"]}


def doctor_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stdout.splitlines()
    return lines[lines.index("clients:") :]


def test_doctor_all_good_when_a_client_starts_this_file_beside_kite(
    tmp_path: Path, apps: Path
) -> None:
    from .small_zipapp import environment, make_pyz, run_pyz

    home = tmp_path / "home"
    pyz = make_pyz(apps)
    env = environment(home)
    assert run_pyz(pyz, ["setup", "claude-desktop", "--write"], env).returncode == 0
    config = home / ".config" / "Claude" / "claude_desktop_config.json"
    written = json.loads(config.read_text())
    written["mcpServers"]["kite"] = KITE_MCP
    config.write_text(json.dumps(written))
    result = run_pyz(pyz, ["doctor"], env)
    assert result.returncode == 0, result.stdout
    assert doctor_lines(result) == [
        "clients:",
        f"  Claude Desktop: {config}",
        "    'kite-skills': starts this file",
        "    Kite MCP server beside it: 'kite' (not guarded)",
        f"  Claude Code: no config at {home / '.claude.json'}",
        f"  VS Code: no config at {home / '.config' / 'Code' / 'User' / 'mcp.json'}",
        f"  Cursor: no config at {home / '.cursor' / 'mcp.json'}",
        "verdict:       all good",
    ]


def test_doctor_lists_what_to_fix(tmp_path: Path, apps: Path) -> None:
    """A config naming an interpreter and a file that are gone (exit 1), a VS Code config
    (with comments) whose kite-skills has no Kite MCP server beside it."""
    from .small_zipapp import environment, make_pyz, run_pyz

    home = tmp_path / "home"
    pyz = make_pyz(apps)
    env = environment(home)
    gone_python, gone_file = str(tmp_path / "old" / "python3.12"), str(tmp_path / "k.pyz")
    cursor = home / ".cursor" / "mcp.json"
    cursor.parent.mkdir(parents=True)
    cursor.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "kite-skills": {"command": gone_python, "args": [gone_file]},
                    "kite": KITE_MCP,
                }
            }
        )
    )
    vscode = home / ".config" / "Code" / "User" / "mcp.json"
    vscode.parent.mkdir(parents=True)
    entry = {"type": "stdio", "command": sys.executable, "args": [str(pyz)]}
    vscode.write_text(
        '{\n  // mine\n  "servers": {"kite-skills": ' + json.dumps(entry) + ",},\n}\n"
    )
    result = run_pyz(pyz, ["doctor"], env)
    assert result.returncode == 1, result.stdout
    kite = shlex.join([sys.executable, str(pyz)])
    desktop = home / ".config" / "Claude" / "claude_desktop_config.json"
    assert doctor_lines(result) == [
        "clients:",
        f"  Claude Desktop: no config at {desktop}",
        f"  Claude Code: no config at {home / '.claude.json'}",
        f"  VS Code: {vscode}",
        "    'kite-skills': starts this file",
        f"  Cursor: {cursor}",
        f"    'kite-skills': starts {gone_python} {gone_file}, but {gone_python} and "
        f"{gone_file} are not there any more — fix: {kite} setup --repoint",
        "    Kite MCP server beside it: 'kite' (not guarded)",
        "verdict:       2 things to fix:",
        f"  1. VS Code has no Kite MCP server beside kite-skills (in {vscode}): the recipes call "
        "its tools — add Zerodha's Kite MCP server (https://mcp.kite.trade/mcp) to VS Code, or "
        f"try the simulated one: {kite} setup vscode --sandbox --write",
        "  2. 1 entry starts an older, moved or missing kite-skills, not this file: Cursor's "
        f"'kite-skills' (starts {gone_python} {gone_file}, but {gone_python} and {gone_file} are "
        f"not there any more) — point it at this file: {kite} setup --repoint",
    ]


def test_doctor_says_how_to_connect_a_first_client(tmp_path: Path, apps: Path) -> None:
    from .small_zipapp import environment, make_pyz, run_pyz

    pyz = make_pyz(apps)
    result = run_pyz(pyz, ["doctor"], environment(tmp_path / "home"))
    assert result.returncode == 0  # nothing is broken: there is something to set up
    assert doctor_lines(result)[-2:] == [
        "verdict:       1 thing to fix:",
        "  1. no MCP client starts this file yet — run: "
        f"{shlex.join([sys.executable, str(pyz)])} setup claude-desktop --write (or claude-code, "
        "vscode, cursor in place of claude-desktop)",
    ]


# ---- rehearsal beside the real Kite server: --park-kite, --unpark-kite ---------------------


def desktop_config(home: Path) -> Path:
    return home / ".config" / "Claude" / "claude_desktop_config.json"


def test_the_sandbox_beside_kite_is_named_and_kite_parks_and_comes_back(
    tmp_path: Path, apps: Path
) -> None:
    from .small_zipapp import environment, make_pyz, run_pyz

    home = tmp_path / "home"
    pyz = make_pyz(apps)
    env = environment(home)
    kite = shlex.join([sys.executable, str(pyz)])
    config = desktop_config(home)
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"mcpServers": {"kite": KITE_MCP}}))
    assert run_pyz(pyz, ["setup", "claude-desktop", "--write"], env).returncode == 0
    sandbox = run_pyz(pyz, ["setup", "claude-desktop", "--sandbox", "--write"], env)
    assert sandbox.returncode == 0, sandbox.stderr
    two = (
        "Claude Desktop has a Kite MCP server ('kite') beside the sandbox ('kite-sandbox'): an "
        "agent would see two Kite servers, one of them fake — park the real one while you "
        f"rehearse: {kite} setup claude-desktop --park-kite (kept in the same file; "
        "--unpark-kite puts it back)"
    )
    assert sandbox.stderr == f"kite-skills: warning: {two}\n"
    doctor = run_pyz(pyz, ["doctor"], env)
    assert doctor_lines(doctor)[-2:] == ["verdict:       1 thing to fix:", f"  1. {two}"]
    both = config.read_text()
    parked = run_pyz(pyz, ["setup", "claude-desktop", "--park-kite"], env)
    assert parked.returncode == 0, parked.stderr
    assert parked.stdout.startswith(f"kite-skills: parked 'kite' in {config} (under ")
    after = json.loads(config.read_text())
    assert set(after["mcpServers"]) == {"kite-skills", "kite-sandbox"}
    assert after["parked-by-kite-skills"] == {"kite": KITE_MCP}
    assert backup_of(config) == both  # backed up like every other write
    assert doctor_lines(run_pyz(pyz, ["doctor"], env))[-1] == "verdict:       all good"
    again = run_pyz(pyz, ["setup", "claude-desktop", "--park-kite"], env)
    assert again.stdout == f"kite-skills: no Kite MCP server entry in {config}; unchanged\n"
    restored = run_pyz(pyz, ["setup", "claude-desktop", "--unpark-kite"], env)
    assert restored.returncode == 0, restored.stderr
    assert json.loads(config.read_text()) == json.loads(both)
    assert restored.stderr == f"kite-skills: warning: {two}\n"
    twice = run_pyz(pyz, ["setup", "claude-desktop", "--unpark-kite"], env)
    assert twice.stdout == f"kite-skills: nothing parked in {config}; unchanged\n"


def backup_of(config: Path) -> str:
    return config.with_name(config.name + ".kite-skills-backup").read_text()


def test_sandbox_write_and_park_in_one_step_keeps_the_file_before_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "mcp.json"
    before = json.dumps({"mcpServers": {"zerodha": OTHER}})
    config.write_text(before)
    write = ["setup", "cursor", "--config", str(config), "--sandbox", "--write", "--park-kite"]
    assert main(write) == 0
    after = json.loads(config.read_text())
    assert set(after["mcpServers"]) == {"kite-sandbox"}
    assert after["parked-by-kite-skills"] == {"zerodha": OTHER}
    assert json.loads(backup_of(config)) == {
        "mcpServers": {"zerodha": OTHER, "kite-sandbox": after["mcpServers"]["kite-sandbox"]}
    }
    assert capsys.readouterr().err == ""  # parked: no warning of two Kite servers


def test_unpark_refuses_to_overwrite_a_new_entry_of_that_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps({"mcpServers": {"kite": OTHER}, "parked-by-kite-skills": {"kite": KITE_MCP}})
    )
    text = config.read_text()
    assert main(["setup", "cursor", "--config", str(config), "--unpark-kite"]) == 1
    assert one_line_error(capsys) == (
        f'kite-skills: error: {config}: "mcpServers" has another "kite" — rename or remove it, '
        "then run again; nothing was changed"
    )
    assert config.read_text() == text


# ---- configs read as strictly as their clients read them -----------------------------------


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            '{"mcpServers": {"a": {"command": "x"},\n}}',
            "line 1, column 38: a trailing comma before '}'",
        ),
        ('{"mcpServers": {\n  // mine\n  "a": {}}}', "line 2, column 3: a comment (//)"),
        (
            '{"mcpServers": {"a": {"args": ["x",]}}}',
            "line 1, column 35: a trailing comma before ']'",
        ),
    ],
)
def test_a_strict_client_config_is_named_with_line_and_column(
    text: str, where: str, tmp_path: Path
) -> None:
    from kite_skills.config_syntax import ConfigSyntax, parse

    with pytest.raises(ConfigSyntax) as caught:
        parse(text, "Claude Desktop", jsonc=False)
    assert str(caught.value) == f"{where}, which Claude Desktop does not allow"
    assert isinstance(parse(text, "VS Code", jsonc=True), dict)  # VS Code allows both


def test_text_inside_strings_is_not_a_comment_or_a_comma() -> None:
    from kite_skills.config_syntax import ConfigSyntax, parse

    text = '{"a": "http://x/*y*/", "b": ",}", "c": "\\\\"}'
    assert parse(text, "Cursor", jsonc=False) == json.loads(text)
    with pytest.raises(ConfigSyntax) as caught:
        parse('{"a": 1', "Cursor", jsonc=False)
    assert str(caught.value).startswith("line 1, column 8: the file ends too early (")


def test_doctor_names_a_trailing_comma_claude_desktop_cannot_read(
    tmp_path: Path, apps: Path
) -> None:
    from .small_zipapp import environment, make_pyz, run_pyz

    home = tmp_path / "home"
    pyz = make_pyz(apps)
    env = environment(home)
    assert run_pyz(pyz, ["setup", "claude-desktop", "--write"], env).returncode == 0
    config = desktop_config(home)
    text = config.read_text().rstrip()
    assert text.endswith("}\n  }\n}")
    config.write_text(text[: -len("\n  }\n}")] + ",\n  }\n}\n")  # a comma left by hand
    line = len(text.splitlines()) - 2
    result = run_pyz(pyz, ["doctor"], env)
    assert result.returncode == 1
    problem = (
        f"{config}:{line}:6: a trailing comma before '}}', which Claude Desktop does not allow — "
        "Claude Desktop cannot read this file, so it starts none of its servers: fix it there"
    )
    lines = doctor_lines(result)
    assert lines[1] == f"  Claude Desktop: cannot read it: {problem}"
    assert f"  1. {problem}, then run this again" in lines
    write = run_pyz(pyz, ["setup", "claude-desktop", "--sandbox", "--write"], env)
    assert write.returncode == 1
    assert write.stderr.endswith(f"{problem}; nothing was changed\n")


def test_doctor_fixes_a_sandbox_entry_with_sandbox(tmp_path: Path, apps: Path) -> None:
    from .small_zipapp import environment, make_pyz, run_pyz

    home = tmp_path / "home"
    pyz = make_pyz(apps)
    env = environment(home)
    config = desktop_config(home)
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"mcpServers": {"kite-sandbox": {"args": ["sandbox"]}}}))
    result = run_pyz(pyz, ["doctor"], env)
    kite = shlex.join([sys.executable, str(pyz)])
    fix = f"{kite} setup claude-desktop --sandbox --write"
    assert f"    'kite-sandbox': no command — fix: {fix}" in doctor_lines(result)
    assert (
        f"  1. Claude Desktop's 'kite-sandbox': no command — run: {kite} setup claude-desktop "
        "--sandbox --write"
    ) in doctor_lines(result)
    assert result.returncode == 1


# ---- after a move: setup --repoint ---------------------------------------------------------


def test_repoint_points_every_entry_of_every_client_at_this_file(
    tmp_path: Path, apps: Path
) -> None:
    from .small_zipapp import environment, make_pyz, run, run_pyz

    home = tmp_path / "home"
    old = make_pyz(tmp_path / "old-place" / "x")  # the file before the move: still there
    pyz = make_pyz(apps)
    env = environment(home)
    project = tmp_path / "project"
    project.mkdir()
    for client in ("claude-desktop", "cursor"):
        assert run_pyz(old, ["setup", client, "--write"], env).returncode == 0
    assert run_pyz(old, ["setup", "claude-desktop", "--sandbox", "--write"], env).returncode == 0
    local = run(
        [
            sys.executable,
            str(old),
            "setup",
            "claude-code",
            "--config",
            str(home / ".claude.json"),
            "--write",
            "--db",
            str(home / "b.db"),
        ],
        env,
        cwd=project,
    )
    assert local.returncode == 0, local.stderr
    claude_json = json.loads((home / ".claude.json").read_text())
    claude_json["projects"] = {str(project): {"mcpServers": claude_json.pop("mcpServers")}}
    (home / ".claude.json").write_text(json.dumps(claude_json))
    kite = shlex.join([sys.executable, str(pyz)])
    lines = doctor_lines(run_pyz(pyz, ["doctor"], env))
    moved = [line for line in lines if "start an older, moved or missing kite-skills" in line]
    assert len(moved) == 1 and moved[0].split(". ", 1)[1].startswith("4 entries start an older")
    assert not any("no MCP client starts this file yet" in line for line in lines)
    assert moved[0].endswith(f" — point every one at this file: {kite} setup --repoint")
    done = run_pyz(pyz, ["setup", "--repoint"], env)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 3  # one line per client
    desktop = json.loads(desktop_config(home).read_text())["mcpServers"]
    assert desktop["kite-skills"]["args"] == [str(pyz)]
    assert desktop["kite-sandbox"]["args"] == [str(pyz), "sandbox"]
    assert desktop["kite-skills"]["env"] == {"KITE_SKILLS_DB": str(home / "skills.db")}
    code = json.loads((home / ".claude.json").read_text())["projects"][str(project)]
    assert code["mcpServers"]["kite-skills"]["args"] == [str(pyz)]
    assert code["mcpServers"]["kite-skills"]["env"] == {"KITE_SKILLS_DB": str(home / "b.db")}
    cursor = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert cursor["kite-skills"]["command"] == sys.executable
    assert not any(
        "an older, moved" in line for line in doctor_lines(run_pyz(pyz, ["doctor"], env))
    )
    again = run_pyz(pyz, ["setup", "--repoint"], env)
    assert (
        again.stdout == "kite-skills: every kite-skills entry starts this file already; unchanged\n"
    )


# ---- --remove, old unpacked copies, uninstall ----------------------------------------------


@pytest.mark.parametrize("client", JSON_CLIENTS)
def test_remove_takes_our_entry_out_and_keeps_the_others(
    client: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = CLIENTS[client].key
    config = tmp_path / "config.json"
    config.write_text(json.dumps({key: {"other": OTHER}}))
    assert main(["setup", client, "--write", "--config", str(config)]) == 0
    written = config.read_text()
    capsys.readouterr()
    assert main(["setup", client, "--remove", "--config", str(config)]) == 0
    assert json.loads(config.read_text()) == {key: {"other": OTHER}}
    assert backup_of(config) == written
    assert capsys.readouterr().out.startswith(f"kite-skills: removed 'kite-skills' from {config}")
    assert main(["setup", client, "--remove", "--config", str(config)]) == 0
    assert capsys.readouterr().out == f"kite-skills: no 'kite-skills' in {config}; unchanged\n"


BUILD_ID = "ab" * 32


def unpacked_copy(root: Path, build_id: str, size: int) -> Path:
    copy = root / f"kite-skills_{build_id}"
    (copy / "site-packages" / "kite_skills").mkdir(parents=True)
    (copy / "site-packages" / "kite_skills" / "x.py").write_bytes(b"#" * size)
    (root / f".{copy.name}.kite-skills-in-use").touch()
    return copy


def pyz_of_build(folder: Path, build_id: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    pyz = folder / "kite-skills.pyz"
    with zipfile.ZipFile(pyz, "w") as archive:
        archive.writestr("environment.json", json.dumps({"build_id": build_id}))
    return pyz


def test_doctor_sizes_old_copies_and_prune_removes_the_unused_ones(
    tmp_path: Path, apps: Path
) -> None:
    from .small_zipapp import environment, make_pyz, run_pyz

    home = tmp_path / "home"
    pyz = make_pyz(apps)
    env = environment(home)
    shiv = home / ".shiv"
    used = unpacked_copy(shiv, BUILD_ID, 3_000_000)
    old = unpacked_copy(shiv, "cd" * 32, 2_000_000)
    beside = shiv / "kite-skills_notabuild"
    beside.mkdir()
    other = pyz_of_build(tmp_path / "other", BUILD_ID)  # a client still starts that build
    config = desktop_config(home)
    config.parent.mkdir(parents=True)
    entry = {"command": sys.executable, "args": [str(other)]}
    config.write_text(json.dumps({"mcpServers": {"kite-skills": entry, "kite": KITE_MCP}}))
    lines = doctor_lines(run_pyz(pyz, ["doctor"], env))
    kite = shlex.join([sys.executable, str(pyz)])
    assert "unpacked:      2 copies, 5.0 MB (1 in use, 3.0 MB)" in lines
    assert f"               unused: {old} (2.0 MB)" in lines
    assert (
        "unpacked copy of older files (2.0 MB) that no configured entry uses — remove it: "
        f"{kite} prune --yes (without --yes it only lists them)"
    ) in lines[-1]
    dry = run_pyz(pyz, ["prune"], env)
    assert dry.returncode == 0 and old.is_dir() and used.is_dir()
    assert f"would remove {old} (2.0 MB)" in dry.stdout.splitlines()
    done = run_pyz(pyz, ["prune", "--yes"], env)
    assert done.returncode == 0, done.stderr
    assert f"removed {old} (2.0 MB)" in done.stdout.splitlines()
    assert not old.exists() and used.is_dir() and beside.is_dir()
    assert not (shiv / f".{old.name}.kite-skills-in-use").exists()
    again = run_pyz(pyz, ["prune", "--yes"], env)
    assert again.stdout == "kite-skills: no unused unpacked copies (1 in use); nothing to remove\n"


def test_uninstall_keeps_the_store_unless_asked(tmp_path: Path, apps: Path) -> None:
    from .small_zipapp import environment, make_pyz, run_pyz

    home = tmp_path / "home"
    pyz = make_pyz(apps)
    env = environment(home)
    assert run_pyz(pyz, ["install-command"], env).returncode == 0
    launcher = home / ".local" / "bin" / "kite-skills"
    copy = unpacked_copy(home / ".shiv", BUILD_ID, 1000)
    db = home / "skills.db"
    with Store.open(db) as store:
        agent.save(store, "one-skill", "A skill to keep.", "# One\n\nStep.\n", who="t")
    dry = run_pyz(pyz, ["uninstall"], env)
    assert dry.returncode == 0 and launcher.exists() and copy.exists()
    done = run_pyz(pyz, ["uninstall", "--yes"], env)
    assert done.returncode == 0, done.stderr
    assert not launcher.exists() and not copy.exists() and db.exists()
    assert (
        f"your skills' store stays: {db} (to delete it too: add --delete-store)"
        in done.stdout.splitlines()
    )
    gone = run_pyz(pyz, ["uninstall", "--yes", "--delete-store"], env)
    assert gone.returncode == 0 and not db.exists()
    assert f"deleted {db}" in gone.stdout.splitlines()


def test_claude_desktop_from_the_microsoft_store_keeps_its_config_in_its_package(
    tmp_path: Path,
) -> None:
    win = {"USERPROFILE": str(tmp_path), "APPDATA": str(tmp_path / "Roaming")}
    win["LOCALAPPDATA"] = str(tmp_path / "Local")
    plain = tmp_path / "Roaming" / "Claude" / "claude_desktop_config.json"
    assert config_path("claude-desktop", win, "win32") == plain
    package = tmp_path / "Local" / "Packages" / "Claude_pzs8sxrjxfjjc"
    package.mkdir(parents=True)
    assert config_path("claude-desktop", win, "win32") == (
        package / "LocalCache" / "Roaming" / "Claude" / "claude_desktop_config.json"
    )


def test_repoint_with_a_config_names_its_client(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "mcp.json"
    assert main(["setup", "--repoint", "--config", str(config)]) == 1
    assert one_line_error(capsys) == (
        "kite-skills: error: --config names one client's file: say which client, e.g. setup "
        f"cursor --repoint --config {config}; nothing was changed"
    )
    assert not config.exists()


# ---- the guard in front of the Kite entry: --guard --write, --unguard ----------------------


def test_guard_stands_in_front_of_the_kite_entry_and_unguard_puts_it_back(
    tmp_path: Path, apps: Path
) -> None:
    from .small_zipapp import environment, make_pyz, run_pyz

    home = tmp_path / "home"
    pyz = make_pyz(apps)
    env = environment(home)
    config = desktop_config(home)
    config.parent.mkdir(parents=True)
    url_entry = {"url": "https://mcp.kite.trade/mcp"}
    local = {**KITE_MCP, "env": {"KITE_API_KEY": "k"}}
    config.write_text(json.dumps({"mcpServers": {"kite": local, "zerodha-http": url_entry}}))
    before = config.read_text()
    assert run_pyz(pyz, ["setup", "claude-desktop", "--write"], env).returncode == 0
    with_ours = config.read_text()
    guarded = run_pyz(pyz, ["setup", "claude-desktop", "--guard", "--write"], env)
    assert guarded.returncode == 0, guarded.stderr
    assert guarded.stdout.startswith(
        f"kite-skills: the guard now stands in front of 'kite', 'zerodha-http' in {config}"
    )
    after = json.loads(config.read_text())
    assert after["mcpServers"]["kite"] == {
        "command": sys.executable,
        "args": [str(pyz), "guard", "--", "npx", "mcp-remote", "https://mcp.kite.trade/mcp"],
        "env": {"KITE_API_KEY": "k"},
    }
    assert after["mcpServers"]["zerodha-http"]["args"] == [
        str(pyz), "guard", "--url", "https://mcp.kite.trade/mcp", "--oauth",
    ]  # fmt: skip
    assert after["parked-by-kite-skills"] == {"kite": local, "zerodha-http": url_entry}
    assert backup_of(config) == with_ours
    lines = doctor_lines(run_pyz(pyz, ["doctor"], env))
    assert "    Kite MCP server beside it: 'kite' (guarded: kite-skills guard in front)" in lines
    assert lines[-1] == "verdict:       all good"
    again = run_pyz(pyz, ["setup", "claude-desktop", "--guard", "--write"], env)
    assert (
        again.stdout == f"kite-skills: no unguarded Kite MCP server entry in {config}; unchanged\n"
    )
    restored = run_pyz(pyz, ["setup", "claude-desktop", "--unguard"], env)
    assert restored.returncode == 0, restored.stderr
    assert json.loads(config.read_text()) == json.loads(with_ours)
    assert "'kite' (not guarded)" in "\n".join(doctor_lines(run_pyz(pyz, ["doctor"], env)))
    assert json.loads(before)["mcpServers"].items() <= json.loads(with_ours)["mcpServers"].items()
    twice = run_pyz(pyz, ["setup", "claude-desktop", "--unguard"], env)
    assert twice.stdout == f"kite-skills: no guarded Kite entry in {config}; unchanged\n"


def test_guard_needs_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"kite": KITE_MCP}}))
    assert main(["setup", "cursor", "--config", str(config), "--guard"]) == 1
    assert "--guard edits Cursor's config: run it with --write" in one_line_error(capsys)
    assert json.loads(config.read_text()) == {"mcpServers": {"kite": KITE_MCP}}
