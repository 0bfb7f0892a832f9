"""``kite-skills setup CLIENT`` and ``kite-skills doctor``: connect an MCP client to this
very file, and say what this installation is made of.

The snippet names absolute paths (the interpreter running now, this zipapp, the store),
because GUI apps on macOS do not see the shell's PATH. ``--write`` merges it into the
client's config file: one backup of the file as it was before the change (replaced by the
next change, never one per run), nothing written when the entry is already there, nothing
written to a file it cannot parse (comments, trailing commas: the entry is printed to paste
by hand), and every other server kept. Claude Code is set up the way its users expect, with
``claude mcp add --scope user``.

``doctor`` says what this installation is made of and what to fix: the store, and which MCP
clients' configs start this file (each entry's interpreter and file still there, a Kite MCP
server beside it), ending with a verdict like ``brew doctor``'s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import cli_doctor, invocation, os_dirs
from .cli_db import add_db_option, db_path
from .errors import KiteError
from .launcher import build_info
from .store import LATEST_VERSION
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


def config_path(client: str, env: Mapping[str, str], os_name: str) -> Path:
    """The client's documented user-level config file on ``os_name`` (a sys.platform)."""
    home = os_dirs.home(env, os_name)
    app_config = os_dirs.config_dir(env, os_name)
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


def _write_beside(target: Path, data: bytes, st: os.stat_result | None) -> None:
    """Write ``data`` to ``target`` atomically: a temporary file in the target's own folder,
    with the old file's mode (and owner, where allowed), renamed over it. A new file is 0600:
    client configs hold other servers' secrets."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".kite-skills-partial"
    )
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
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


BACKUP_SUFFIX = ".kite-skills-backup"


def backup_path(target: Path) -> Path:
    """The one backup of ``target``: the file as it was before the last change setup made."""
    return target.with_name(target.name + BACKUP_SUFFIX)


def _back_up(target: Path, data: bytes, st: os.stat_result) -> Path:
    """The old file beside it, under one name (each change replaces the backup of the one
    before), never readable by more people than the file was."""
    backup = backup_path(target)
    _write_beside(backup, data, st)
    return backup


@dataclass(frozen=True)
class Merged:
    """What ``--write`` did to one config file: ``before`` is the entry that was there (None:
    none), ``changed`` whether the file was written, ``backup`` the old file's copy."""

    before: dict[str, Any] | None
    changed: bool
    backup: Path | None


def _cannot_parse(path: Path, why: str, key: str, name: str, entry: dict[str, Any]) -> ConfigError:
    """The file is not plain JSON (JSONC: comments, trailing commas): rewriting it would lose
    them, so the person pastes the entry; the message carries it."""
    pasted = json.dumps({name: entry}, indent=2)
    return ConfigError(
        f"{path} is not plain JSON ({why}): it may hold comments or trailing commas, which "
        f'kite-skills does not rewrite — paste this entry by hand into its "{key}" object '
        f"(or fix the file and run again); nothing was changed:\n{pasted}"
    )


def merge_config(path: Path, key: str, entry: dict[str, Any], name: str = SERVER_NAME) -> Merged:
    """Put ``entry`` under ``key`` → ``name`` in the JSON file at ``path``, keeping
    everything else; keep the old file as its one backup first. Nothing is written when the
    entry is there already.

    A symbolic link is written through (the file it leads to changes, the link stays); the
    file keeps its mode; the write is atomic (a temporary file in the file's own folder,
    renamed over it). A folder, a path below a file or a link loop is a ConfigError; so is a
    file that is not plain JSON, with the entry to paste by hand."""
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
        except UnicodeDecodeError as exc:
            raise _cannot_parse(path, "it is not UTF-8 text", key, name, entry) from exc
        except json.JSONDecodeError as exc:
            raise _cannot_parse(path, f"line {exc.lineno}", key, name, entry) from exc
        if not isinstance(config, dict) or not isinstance(config.get(key, {}), dict):
            raise ConfigError(
                f"{path} is not a JSON object with an object '{key}' — fix the file (or move "
                "it away) and run again; nothing was changed"
            )
    servers = dict(config.get(key, {}))
    before = servers.get(name)
    if st is not None and before == entry:
        return Merged(before, changed=False, backup=None)
    servers[name] = entry
    config[key] = servers
    try:
        backup = _back_up(target, data, st) if st is not None else None
        _write_beside(target, (json.dumps(config, indent=2) + "\n").encode(), st)
    except OSError as exc:
        raise ConfigError(
            f"cannot write {path}: {exc.strerror} — check that its folder is writable; the "
            "config was not changed"
        ) from exc
    return Merged(before if isinstance(before, dict) else None, changed=True, backup=backup)


def _store_path(args: argparse.Namespace) -> Path:
    path = db_path(args)
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symbolic link loop: doctor names it
        return Path(os.path.abspath(path))


def cmdline(entry: dict[str, Any]) -> str:
    """An entry as a person reads it: its command line, and the store it names."""
    words = [str(entry.get("command", "?")), *map(str, entry.get("args", []))]
    env = entry.get("env") or {}
    db = env.get("KITE_SKILLS_DB") if isinstance(env, dict) else None
    return invocation.quote(words, sys.platform) + (f" (store {db})" if db else "")


def claude_add(name: str, entry: dict[str, Any]) -> list[str]:
    """The ``claude mcp add`` command line Claude Code's documentation gives for a local
    stdio server, at user scope (every project): options, the name, ``--``, the command."""
    words = ["claude", "mcp", "add", "--scope", "user", "--transport", "stdio"]
    for variable, value in sorted((entry.get("env") or {}).items()):
        words += ["--env", f"{variable}={value}"]
    return [*words, name, "--", entry["command"], *entry["args"]]


def _claude(claude: str, words: list[str]) -> None:
    """Run ``claude`` with ``words`` (what follows the command's own name); a ConfigError
    naming its last line of output when it fails."""
    try:
        done = subprocess.run(
            [claude, *words], capture_output=True, text=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"cannot run {claude}: {exc}; nothing was changed") from exc
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise ConfigError(
            f"'claude {' '.join(words[:2])}' failed (exit {done.returncode}): {said}; run the "
            "line 'setup claude-code' prints yourself to see more"
        )


def _claude_code_entry(name: str) -> dict[str, Any] | None:
    """The user-scope entry ``name`` in Claude Code's ~/.claude.json, if it can be read."""
    try:
        config = json.loads(config_path("claude-code", os.environ, sys.platform).read_bytes())
        found = config.get("mcpServers", {}).get(name)
    except (OSError, ValueError, AttributeError):
        return None
    return found if isinstance(found, dict) else None


def _setup_claude_code(name: str, entry: dict[str, Any], write: bool) -> int:
    line = invocation.quote(claude_add(name, entry), sys.platform)
    if not write:
        print("# Claude Code: run this in a terminal (or run setup with --write to run it):")
        print(line)
        return 0
    claude = shutil.which("claude")
    if claude is None:
        raise ConfigError(
            "'claude' (Claude Code's command) is not on PATH — install Claude Code, or run "
            f"this where 'claude' works: {line}"
        )
    before = _claude_code_entry(name)
    if before is not None and before == entry:
        print(f"kite-skills: '{name}' in Claude Code already starts {cmdline(entry)}; unchanged")
        return 0
    if before is not None:
        _claude(claude, ["mcp", "remove", "--scope", "user", name])
    _claude(claude, claude_add(name, entry)[1:])
    what = f"updated from {cmdline(before)} to" if before is not None else "added: it starts"
    print(
        f"kite-skills: '{name}' in Claude Code (user scope) {what} {cmdline(entry)}; start a new "
        "Claude Code session ('/mcp' lists it)"
    )
    return 0


def _warn_fragile() -> None:
    here = invocation.current()
    if here.zipapp:
        fragile = invocation.fragile_place(here.words[-1], os.environ, sys.platform)
        if fragile:
            print(f"kite-skills: warning: {fragile}", file=sys.stderr)


def _run_setup(args: argparse.Namespace) -> int:
    client = CLIENTS[args.client]
    sandbox = getattr(args, "sandbox", False)
    name = SANDBOX_NAME if sandbox else SERVER_NAME
    entry = sandbox_entry(client) if sandbox else server_entry(client, _store_path(args))
    _warn_fragile()
    if client.name == "claude-code" and not args.config:
        return _setup_claude_code(name, entry, args.write)
    path = Path(args.config) if args.config else config_path(client.name, os.environ, sys.platform)
    if args.write:
        merged = merge_config(path, client.key, entry, name)
        kept = f" (backup: {merged.backup})" if merged.backup else ""
        if not merged.changed:
            print(f"kite-skills: '{name}' in {path} already starts {cmdline(entry)}; unchanged")
        elif merged.before is not None:
            print(
                f"kite-skills: updated '{name}' in {path} from {cmdline(merged.before)} to "
                f"{cmdline(entry)}{kept}; restart {client.title}"
            )
        else:
            print(f"kite-skills: added '{name}' to {path}{kept}; restart {client.title}")
        return 0
    print(f"# {client.title}: put this in {path} (or run with --write to merge it there)")
    print(json.dumps({client.key: {name: entry}}, indent=2))
    return 0


def _size(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def _run_doctor(args: argparse.Namespace) -> int:
    print(f"interpreter:   {sys.executable} (CPython {platform.python_version()})")
    facts = build_info.current()
    site_packages = Path(__file__).resolve().parents[1]
    if facts:
        print(f"file:          {os.path.abspath(sys.argv[0])}")
        print(f"built for:     {facts.platform}, {facts.accepted} (kite-skills {facts.version})")
        extraction = site_packages.parent
        print(f"extracted to:  {extraction} ({_size(extraction) / 1e6:.1f} MB)")
    else:
        print(f"file:          not a zipapp build (the kite_skills package in {site_packages})")
    report = describe(_store_path(args))
    print(f"store:         {report.path} ({'exists' if report.exists else 'not created yet'})")
    findings: list[cli_doctor.Finding] = []
    if report.problem:
        print(f"               cannot read it: {report.problem}")
        findings.append(cli_doctor.Finding(f"the store {report.path} cannot be read (above)", True))
    elif report.exists:
        print(
            f"schema:        version {report.schema_version} (this kite-skills: {LATEST_VERSION})"
        )
        print("skills:        " + ", ".join(f"{state} {n}" for state, n in report.counts))
    findings += _doctor_clients()
    if not findings:
        print("verdict:       all good")
    else:
        print(f"verdict:       {len(findings)} thing{'s' if len(findings) > 1 else ''} to fix:")
        for number, finding in enumerate(findings, 1):
            print(f"  {number}. {finding.text}")
    return 1 if any(f.error for f in findings) else 0


def _doctor_clients() -> list[cli_doctor.Finding]:
    """Print which MCP clients' configs start kite-skills (this file or another), and return
    what to fix in them."""
    here = invocation.current()
    print("clients:")
    findings: list[cli_doctor.Finding] = []
    starts_here = False
    for client in CLIENTS.values():
        path = config_path(client.name, os.environ, sys.platform)
        fix = f"run: {here.run('setup', client.name, '--write')}"
        found, problem = cli_doctor.entries(client.name, client.title, path, client.key)
        if problem:
            print(f"  {client.title}: {path}: {problem}")
            findings.append(cli_doctor.Finding(f"{client.title}'s config {path}: {problem}"))
            continue
        ours = [e for e in found if e.ours]
        if not ours:
            there = "no kite-skills entry in" if path.exists() else "no config at"
            print(f"  {client.title}: {there} {path}")
            continue
        for entry in ours:
            what, problems = cli_doctor.check_entry(entry, here.words, os.environ, fix)
            starts_here = starts_here or what == "this file"
            print(f"  {client.title}: '{entry.name}' starts {what} ({path})")
            findings += problems
        beside = [e for e in found if e.kite_mcp or e.name == SANDBOX_NAME]
        if beside:
            print(f"  {client.title}: Kite MCP server beside it: '{beside[0].name}'")
        else:
            findings.append(
                cli_doctor.Finding(
                    f"{client.title} has no Kite MCP server beside kite-skills (in {path}): the "
                    "recipes call its tools — add Zerodha's Kite MCP server "
                    f"(https://mcp.kite.trade/mcp) to {client.title}, or try the simulated one: "
                    f"{here.run('setup', client.name, '--sandbox', '--write')}"
                )
            )
    if not starts_here:
        findings.append(
            cli_doctor.Finding(
                "no MCP client starts this file yet — run: "
                f"{here.run('setup', 'claude-desktop', '--write')} (or claude-code, vscode, "
                "cursor in place of claude-desktop)"
            )
        )
    return findings


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
    add_db_option(setup)
    setup.set_defaults(run=_run_setup)
    doctor = subparsers.add_parser(
        "doctor",
        help="show the interpreter, this file's platforms, its cache, the store and which MCP "
        "clients start it, then what to fix (exit 1 when the store cannot be read, or a "
        "client's config starts an interpreter or file that is gone)",
        epilog="Example: kite-skills doctor",
    )
    add_db_option(doctor)
    doctor.set_defaults(run=_run_doctor)
