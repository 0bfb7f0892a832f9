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
import stat
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import invocation
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
    command, *args = invocation.current().words
    return command, args


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


def _target(path: Path) -> Path:
    """The file a write to ``path`` changes: ``path``, or the file its symbolic link leads to
    (written through, so the link stays a link)."""
    if not path.is_symlink():
        return path
    try:
        return Path(os.path.realpath(path, strict=True))
    except FileNotFoundError:
        return Path(os.path.realpath(path))  # a link to a file not made yet: make that file
    except OSError as exc:
        raise ConfigError(
            f"{path} is a symbolic link that never reaches a file ({exc.strerror}) — point it "
            "at the config file, or give --config the file itself; nothing was changed"
        ) from exc


def _check_place(path: Path, target: Path) -> os.stat_result | None:
    """The stat of the config file ``target`` (None when it is not there yet), or a
    ConfigError when no config file can be there."""
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        st = None  # a file above it: named below
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}; nothing was changed") from exc
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise ConfigError(
            f"{path} is a folder, not a config file — give --config the file's path, e.g. "
            f"{path / 'mcp.json'}; nothing was changed"
        )
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise ConfigError(
            f"{path} is not a regular file — give --config a JSON file; nothing was changed"
        )
    if st is None:
        for above in target.parents:
            if os.path.lexists(above):
                if not above.is_dir():
                    raise ConfigError(
                        f"{above} is a file, so {path} cannot be made below it — give "
                        "--config a file in a folder; nothing was changed"
                    )
                break
    return st


def _write_beside(target: Path, text: str, st: os.stat_result | None) -> None:
    """Write ``text`` to ``target`` atomically: a temporary file in the target's own folder,
    with the old file's mode (and owner, where allowed), renamed over it. A new file is 0600:
    client configs hold other servers' secrets."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".kite-skills-partial"
    )
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(partial, stat.S_IMODE(st.st_mode) if st is not None else 0o600)
        if st is not None and hasattr(os, "chown") and st.st_uid != os.geteuid():
            try:
                os.chown(partial, st.st_uid, st.st_gid)
            except PermissionError:
                pass  # only root may give a file away; the mode is kept
        os.replace(partial, target)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise


def _back_up(target: Path, data: bytes, st: os.stat_result) -> Path:
    """A copy of the old file beside it, never readable by more people than the file was."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    for n in range(1, 100):
        backup = target.with_name(
            f"{target.name}.kite-skills-backup-{stamp}" + (f"-{n}" if n > 1 else "")
        )
        try:
            fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IMODE(st.st_mode))
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(backup, stat.S_IMODE(st.st_mode))  # the umask may have taken bits away
        return backup
    raise ConfigError(f"too many backups of {target} this second; nothing was changed")


def merge_config(
    path: Path, key: str, entry: dict[str, Any], name: str = SERVER_NAME
) -> Path | None:
    """Put ``entry`` under ``key`` → ``name`` in the JSON file at ``path``, keeping
    everything else; back the old file up first. Returns the backup's path (None if new).

    A symbolic link is written through (the file it leads to changes, the link stays); the
    file keeps its mode; the write is atomic (a temporary file in the file's own folder,
    renamed over it). A folder, a path below a file or a link loop is a ConfigError."""
    target = _target(path)
    st = _check_place(path, target)
    config: dict[str, Any] = {}
    data = b""
    if st is not None:
        try:
            data = target.read_bytes()
            config = json.loads(data.decode("utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror}; nothing was changed") from exc
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
    try:
        backup = _back_up(target, data, st) if st is not None else None
        _write_beside(target, json.dumps(config, indent=2) + "\n", st)
    except OSError as exc:
        raise ConfigError(
            f"cannot write {path}: {exc.strerror} — check that its folder is writable; the "
            "config was not changed"
        ) from exc
    return backup


def _store_path(args: argparse.Namespace) -> Path:
    db = getattr(args, "db", None)
    path = Path(db) if db else default_db_path(os.environ)
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symbolic link loop: doctor names it
        return Path(os.path.abspath(path))


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
        return 1
    if report.exists:
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
        help="show the interpreter, this file's platforms, its cache and the store "
        "(exit 1 when the store cannot be read: a folder, a pipe, a link loop, damaged)",
        epilog="Example: kite-skills doctor",
    )
    doctor.add_argument("--db", metavar="PATH", default=argparse.SUPPRESS, help="the store file")
    doctor.set_defaults(run=_run_doctor)
