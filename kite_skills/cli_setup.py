"""``kite-skills setup CLIENT`` and ``kite-skills doctor``: connect an MCP client to this
very file, and say what this installation is made of.

The snippet names absolute paths (the interpreter running now, this zipapp, the store),
because GUI apps on macOS do not see the shell's PATH. ``--write`` merges it into the
client's config file: a backup first, nothing written to a file it cannot parse, and every
other server kept.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .errors import KiteError
from .store import LATEST_VERSION, default_db_path
from .store.report import describe

SERVER_NAME = "kite-skills"
SANDBOX_NAME = "kite-sandbox"  # `kite-skills sandbox`, beside the main server


class ConfigError(KiteError):
    """A client's config file cannot be read or merged; nothing was written."""


@dataclass(frozen=True)
class Client:
    """Where one MCP client keeps its servers: the file per OS and the key in it."""

    name: str
    title: str
    key: str
    typed: bool  # entries carry "type": "stdio"


CLIENTS = {
    c.name: c
    for c in [
        Client("claude-desktop", "Claude Desktop", "mcpServers", typed=False),
        Client("claude-code", "Claude Code", "mcpServers", typed=True),
        Client("vscode", "VS Code", "servers", typed=True),
        Client("cursor", "Cursor", "mcpServers", typed=False),
    ]
}


def config_path(client: str, env: dict[str, str] | os._Environ[str], os_name: str) -> Path:
    """The client's documented user-level config file on ``os_name`` (a sys.platform)."""
    home = Path(env.get("USERPROFILE" if os_name == "win32" else "HOME") or Path.home())
    if os_name == "darwin":
        app_config = home / "Library" / "Application Support"
    elif os_name == "win32":
        app_config = Path(env.get("APPDATA") or home / "AppData" / "Roaming")
    else:
        xdg = env.get("XDG_CONFIG_HOME", "")
        app_config = Path(xdg) if os.path.isabs(xdg) else home / ".config"
    if client == "claude-desktop":
        return app_config / "Claude" / "claude_desktop_config.json"
    if client == "claude-code":
        return home / ".claude.json"
    if client == "vscode":
        return app_config / "Code" / "User" / "mcp.json"
    return home / ".cursor" / "mcp.json"


def launch_command() -> tuple[str, list[str]]:
    """(command, args) that start this very program, with absolute paths."""
    program = os.path.abspath(sys.argv[0])
    if zipfile.is_zipfile(program):
        return sys.executable, [program]
    if Path(program).name == "__main__.py":  # python -m kite_skills
        return sys.executable, ["-m", "kite_skills"]
    found = shutil.which(sys.argv[0]) or program  # an installed 'kite-skills' script
    return os.path.abspath(found), []


def server_entry(client: Client, db: Path) -> dict[str, Any]:
    command, args = launch_command()
    entry: dict[str, Any] = {"type": "stdio"} if client.typed else {}
    entry.update(command=command, args=args, env={"KITE_SKILLS_DB": str(db)})
    return entry


def sandbox_entry(client: Client) -> dict[str, Any]:
    """The entry that starts ``kite-skills sandbox`` (simulated account, no store)."""
    command, args = launch_command()
    entry: dict[str, Any] = {"type": "stdio"} if client.typed else {}
    entry.update(command=command, args=[*args, "sandbox"])
    return entry


def merge_config(
    path: Path, key: str, entry: dict[str, Any], name: str = SERVER_NAME
) -> Path | None:
    """Put ``entry`` under ``key`` → ``name`` in the JSON file at ``path``, keeping
    everything else; back the old file up first. Returns the backup's path (None if new)."""
    config: dict[str, Any] = {}
    if path.exists():
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(
                f"cannot parse {path}: {exc} — fix the file (or move it away) and run again; "
                "nothing was changed"
            ) from exc
        if not isinstance(config, dict) or not isinstance(config.get(key, {}), dict):
            raise ConfigError(
                f"{path} is not a JSON object with an object '{key}' — fix the file (or move "
                "it away) and run again; nothing was changed"
            )
    servers = dict(config.get(key, {}))
    servers[name] = entry
    config[key] = servers
    backup = None
    if path.exists():
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        backup = path.with_name(f"{path.name}.kite-skills-backup-{stamp}")
        shutil.copy2(path, backup)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.kite-skills-partial")
    partial.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    os.replace(partial, path)
    return backup


def _store_path(args: argparse.Namespace) -> Path:
    db = getattr(args, "db", None)
    return Path(db).resolve() if db else default_db_path(os.environ).resolve()


def _run_setup(args: argparse.Namespace) -> int:
    client = CLIENTS[args.client]
    sandbox = getattr(args, "sandbox", False)
    name = SANDBOX_NAME if sandbox else SERVER_NAME
    entry = sandbox_entry(client) if sandbox else server_entry(client, _store_path(args))
    path = Path(args.config) if args.config else config_path(client.name, os.environ, sys.platform)
    if args.write:
        backup = merge_config(path, client.key, entry, name)
        kept = f" (backup: {backup})" if backup else ""
        print(f"kite-skills: added '{name}' to {path}{kept}; restart {client.title}")
        return 0
    print(f"# {client.title}: put this in {path} (or run with --write to merge it there)")
    print(json.dumps({client.key: {name: entry}}, indent=2))
    return 0


def _size(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def _run_doctor(args: argparse.Namespace) -> int:
    print(f"interpreter:   {sys.executable} (CPython {platform.python_version()})")
    start = sys.modules.get("_kite_skills_start")  # the zipapp's (kite_skills/zipapp_start.py)
    target = getattr(start, "TARGET", None)
    site_packages = Path(__file__).resolve().parents[1]
    if target:
        pythons = target["pythons"]
        print(f"file:          {os.path.abspath(sys.argv[0])}")
        print(f"built for:     {target['platform']}, CPython {pythons[0]}–{pythons[-1]}")
        extraction = site_packages.parent
        print(f"extracted to:  {extraction} ({_size(extraction) / 1e6:.1f} MB)")
    else:
        print(f"file:          not a zipapp (the kite_skills package in {site_packages})")
    report = describe(_store_path(args))
    print(f"store:         {report.path} ({'exists' if report.exists else 'not created yet'})")
    if report.problem:
        print(f"               cannot read it: {report.problem}")
    elif report.exists:
        print(
            f"schema:        version {report.schema_version} (this kite-skills: {LATEST_VERSION})"
        )
        print("skills:        " + ", ".join(f"{state} {n}" for state, n in report.counts))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``setup`` and ``doctor`` to the main parser's subparsers."""
    setup = subparsers.add_parser(
        "setup",
        help="print (or --write) the config that starts this file from an MCP client",
        epilog="Example: kite-skills setup claude-desktop --write",
    )
    setup.add_argument("client", choices=sorted(CLIENTS), help="the MCP client")
    setup.add_argument(
        "--write", action="store_true", help="merge it into the client's config file (backed up)"
    )
    setup.add_argument("--config", metavar="PATH", help="another config file than the client's")
    setup.add_argument(
        "--sandbox",
        action="store_true",
        help="the entry 'kite-sandbox' for 'kite-skills sandbox' (a simulated account)",
    )
    setup.add_argument("--db", metavar="PATH", default=argparse.SUPPRESS, help="the store file")
    setup.set_defaults(run=_run_setup)
    doctor = subparsers.add_parser(
        "doctor",
        help="show the interpreter, this file's platforms, its cache and the store",
        epilog="Example: kite-skills doctor",
    )
    doctor.add_argument("--db", metavar="PATH", default=argparse.SUPPRESS, help="the store file")
    doctor.set_defaults(run=_run_doctor)
