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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import config_syntax, invocation, os_dirs
from ..errors import KiteError
from ..launcher import build_info
from ..store import LATEST_VERSION
from ..store.report import describe
from . import copies, doctor
from .db import add_db_option, db_path

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
    jsonc: bool  # it reads its config as JSON with comments (config_syntax)


CLIENTS = {
    c.name: c
    for c in [
        Client("claude-desktop", "Claude Desktop", "mcpServers", typed=False, jsonc=False),
        Client("claude-code", "Claude Code", "mcpServers", typed=True, jsonc=False),
        Client("vscode", "VS Code", "servers", typed=True, jsonc=True),
        Client("cursor", "Cursor", "mcpServers", typed=False, jsonc=False),
    ]
}


def config_path(client: str, env: Mapping[str, str], os_name: str) -> Path:
    """The client's documented user-level config file on ``os_name`` (a sys.platform)."""
    home = os_dirs.home(env, os_name)
    app_config = os_dirs.config_dir(env, os_name)
    if client == "claude-desktop":
        if os_name == "win32":
            store = _microsoft_store_claude(os_dirs.data_dir(env, os_name))
            if store is not None:
                return store
        return app_config / "Claude" / "claude_desktop_config.json"
    if client == "claude-code":
        return home / ".claude.json"
    if client == "vscode":
        return app_config / "Code" / "User" / "mcp.json"
    return home / ".cursor" / "mcp.json"


def _microsoft_store_claude(local_app_data: Path) -> Path | None:
    """Claude Desktop installed as a Windows package (the Microsoft Store's, and claude.ai's
    installer since 2026) reads its config in the package's own folder,
    ``%LOCALAPPDATA%\\Packages\\Claude_<publisher id>\\LocalCache\\Roaming\\Claude``, not in
    ``%APPDATA%\\Claude``: that folder when there is one (the one holding a config, when
    several are there)."""
    try:
        packages = sorted((local_app_data / "Packages").glob("Claude_*"))
    except OSError:
        return None
    configs = [
        p / "LocalCache" / "Roaming" / "Claude" / "claude_desktop_config.json" for p in packages
    ]
    present = [c for c in configs if c.is_file()]
    return (present or configs)[0] if configs else None


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


PARK_KEY = "parked-by-kite-skills"
"""Where ``--park-kite`` keeps a client's Kite MCP server entries, in the same file, out of
the servers' key: no client starts what is under it, and ``--unpark-kite`` moves it back."""


@dataclass(frozen=True)
class Edited:
    """What one change to a config file did: ``changed`` whether the file was written,
    ``backup`` the old file's copy (None when nothing was there before)."""

    changed: bool
    backup: Path | None


def read_config(path: Path, client: Client) -> dict[str, Any] | None:
    """The config at ``path`` as ``client`` reads it (None when there is no file), or a
    ConfigError naming the line and column the client would stop at."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text — {client.title} cannot read it") from exc
    try:
        config = config_syntax.parse(text, client.title, client.jsonc)
    except config_syntax.ConfigSyntax as exc:
        raise ConfigError(
            f"{path}:{exc.line}:{exc.column}: {exc.what} — {client.title} cannot read this "
            "file, so it starts none of its servers: fix it there"
        ) from exc
    if not isinstance(config, dict) or not isinstance(config.get(client.key, {}), dict):
        raise ConfigError(
            f"{path} is not a JSON object with an object '{client.key}' — fix the file (or "
            "move it away)"
        )
    return config


def edit_config(
    path: Path, client: Client, change: Callable[[dict[str, Any]], bool], by_hand: str
) -> Edited:
    """Apply ``change`` to the config at ``path`` (it answers whether it changed anything),
    keeping the old file as its one backup first. Nothing is written when nothing changed.

    A symbolic link is written through (the file it leads to changes, the link stays); the
    file keeps its mode; the write is atomic (a temporary file in the file's own folder,
    renamed over it). A folder, a path below a file or a link loop is a ConfigError; so is a
    file the client cannot read (its line and column), and a file with comments, which a
    rewrite would lose (``by_hand`` then says what to do by hand)."""
    target = _target(path)
    st = _check_place(path, target)
    nothing = "; nothing was changed"
    try:
        config = read_config(target, client) if st is not None else None
    except ConfigError as exc:
        raise ConfigError(f"{exc}{nothing}") from exc
    data = target.read_bytes() if config is not None else b""
    if config is not None:
        try:
            json.loads(data)
        except ValueError:
            where = config_syntax.first_extra(data.decode("utf-8"))
            raise ConfigError(
                f"{path}:{where}: it holds comments or trailing commas, which "
                f"{client.title} allows and kite-skills does not rewrite — {by_hand}{nothing}"
            ) from None
    config = config if config is not None else {}
    if not change(config):
        return Edited(changed=False, backup=None)
    try:
        backup = _back_up(target, data, st) if st is not None else None
        _write_beside(target, (json.dumps(config, indent=2) + "\n").encode(), st)
    except OSError as exc:
        raise ConfigError(
            f"cannot write {path}: {exc.strerror} — check that its folder is writable; the "
            "config was not changed"
        ) from exc
    return Edited(changed=True, backup=backup)


def _pasted(key: str, name: str, entry: dict[str, Any]) -> str:
    return (
        f'paste this entry by hand into its "{key}" object:\n'
        + json.dumps({name: entry}, indent=2)
        + "\n(or remove the comments and run again)"
    )


def same_entry(a: Any, b: dict[str, Any]) -> bool:
    """Whether the entry ``a`` starts what ``b`` does (an empty ``env`` is no ``env``: Claude
    Code writes one)."""
    if not isinstance(a, dict):
        return False
    return {k: v for k, v in a.items() if v != {}} == {k: v for k, v in b.items() if v != {}}


@dataclass(frozen=True)
class Merged:
    """What ``--write`` did to one config file: ``before`` is the entry that was there (None:
    none), ``changed`` whether the file was written, ``backup`` the old file's copy."""

    before: dict[str, Any] | None
    changed: bool
    backup: Path | None


def merge_config(path: Path, client: Client, entry: dict[str, Any], name: str) -> Merged:
    """Put ``entry`` under the client's key → ``name`` in ``path`` (:func:`edit_config`),
    keeping everything else. Nothing is written when the entry is there already."""
    before: list[Any] = []

    def put(config: dict[str, Any]) -> bool:
        servers = dict(config.get(client.key, {}))
        before.append(servers.get(name))
        if same_entry(before[0], entry):
            return False
        servers[name] = entry
        config[client.key] = servers
        return True

    done = edit_config(path, client, put, _pasted(client.key, name, entry))
    old = before[0] if before and isinstance(before[0], dict) else None
    return Merged(old, done.changed, done.backup)


def remove_entry(path: Path, client: Client, name: str) -> Edited:
    """Take ``name`` out of the client's servers in ``path``."""

    def take(config: dict[str, Any]) -> bool:
        servers = config.get(client.key, {})
        if name not in servers:
            return False
        config[client.key] = {n: v for n, v in servers.items() if n != name}
        return True

    if not path.exists():
        return Edited(changed=False, backup=None)
    return edit_config(path, client, take, f'remove "{name}" from its "{client.key}" by hand')


def kite_names(servers: Mapping[str, Any], client: Client, path: Path) -> list[str]:
    """The names of the Kite MCP servers (not ours) among ``servers``."""
    return [
        n
        for n, v in servers.items()
        if isinstance(v, dict) and doctor.Entry(client.title, path, n, v).kite_mcp
    ]


def _keep_kite_entries(
    path: Path,
    client: Client,
    stand_in: Callable[[str, Any], Any] | None,
    clash: Callable[[str], str],
    by_hand: str,
) -> tuple[list[str], Edited]:
    """Keep each of the client's Kite MCP server entries under :data:`PARK_KEY` in the same
    file, and leave in its place ``stand_in(name, entry)`` (None: nothing): (their names, what
    was done). ``clash(name)`` says what to do when another entry by that name is kept."""
    moved: list[str] = []

    def keep(config: dict[str, Any]) -> bool:
        servers = dict(config.get(client.key, {}))
        parked = config.get(PARK_KEY, {})
        if not isinstance(parked, dict):
            raise ConfigError(f'{path}: "{PARK_KEY}" is not an object — fix the file')
        for name in kite_names(servers, client, path):
            if name in parked and parked[name] != servers[name]:
                raise ConfigError(clash(name))
            original = servers[name]
            if stand_in is None:
                del servers[name]
            else:  # in its place: the file keeps its order
                servers[name] = stand_in(name, original)
            parked = {**parked, name: original}
            moved.append(name)
        if moved:
            config[client.key] = servers
            config[PARK_KEY] = parked
        return bool(moved)

    if not path.exists():
        return [], Edited(changed=False, backup=None)
    done = edit_config(path, client, keep, by_hand)
    return moved, done


def park_kite(path: Path, client: Client) -> tuple[list[str], Edited]:
    """Move the client's Kite MCP server entries from its servers to :data:`PARK_KEY` in
    the same file: (their names, what was done)."""
    return _keep_kite_entries(
        path,
        client,
        None,
        lambda name: (
            f'{path}: another "{name}" is parked already — restore it first '
            f"({invocation.current().run('setup', client.name, '--unpark-kite')}) or "
            "remove one of the two; nothing was changed"
        ),
        f'move the Kite entry under "{PARK_KEY}" by hand',
    )


def unpark_kite(path: Path, client: Client) -> tuple[list[str], Edited]:
    """Move the parked entries back into the client's servers: (their names, what was done)."""
    moved: list[str] = []

    def unpark(config: dict[str, Any]) -> bool:
        parked = config.get(PARK_KEY)
        if not isinstance(parked, dict) or not parked:
            return False
        servers = dict(config.get(client.key, {}))
        for name, value in parked.items():
            if name in servers and servers[name] != value:
                raise ConfigError(
                    f'{path}: "{client.key}" has another "{name}" — rename or remove it, then '
                    "run again; nothing was changed"
                )
            servers[name] = value
            moved.append(name)
        config[client.key] = servers
        del config[PARK_KEY]
        return True

    if not path.exists():
        return [], Edited(changed=False, backup=None)
    done = edit_config(path, client, unpark, f'move the entries under "{PARK_KEY}" back by hand')
    return moved, done


def guard_entry(client: Client, original: dict[str, Any], path: Path, name: str) -> dict[str, Any]:
    """The entry that starts ``kite-skills guard`` in front of ``original`` (its command after
    ``--``, with its env; or its URL, signing in with OAuth as the hosted server asks)."""
    command, args = launch_command()
    entry: dict[str, Any] = {"type": "stdio"} if client.typed else {}
    upstream = doctor.Entry(client.title, path, name, original).words
    url = original.get("url") or original.get("serverUrl")
    if upstream:
        entry.update(command=command, args=[*args, "guard", "--", *upstream])
        if isinstance(original.get("env"), dict):
            entry["env"] = original["env"]
    elif isinstance(url, str) and not original.get("headers"):
        entry.update(command=command, args=[*args, "guard", "--url", url, "--oauth"])
    else:
        raise ConfigError(
            f'{path}: "{name}" is neither a command nor a plain URL — put '
            f"'{invocation.current().run('guard', '--help')}' in front of it by hand; "
            "nothing was changed"
        )
    return entry


def guard_kite(path: Path, client: Client) -> tuple[list[str], Edited]:
    """Put ``kite-skills guard`` in front of each of the client's Kite MCP server entries,
    under the same name; the original is kept under :data:`PARK_KEY` for ``--unguard``."""
    return _keep_kite_entries(
        path,
        client,
        lambda name, original: guard_entry(client, original, path, name),
        lambda name: (
            f'{path}: another "{name}" is kept under "{PARK_KEY}" already — restore '
            f"it first ({invocation.current().run('setup', client.name, '--unguard')}) "
            "or remove one of the two; nothing was changed"
        ),
        "put the guard in front of the Kite entry by hand",
    )


def unguard_kite(path: Path, client: Client) -> tuple[list[str], Edited]:
    """Put back each Kite entry the guard stands in front of (its kept original)."""
    moved: list[str] = []

    def unguard(config: dict[str, Any]) -> bool:
        parked = config.get(PARK_KEY)
        if not isinstance(parked, dict):
            return False
        servers = dict(config.get(client.key, {}))
        kept = dict(parked)
        for name, original in parked.items():
            now = servers.get(name)
            if isinstance(now, dict) and doctor.Entry(client.title, path, name, now).guards:
                servers[name] = original
                del kept[name]
                moved.append(name)
        if not moved:
            return False
        config[client.key] = servers
        if kept:
            config[PARK_KEY] = kept
        else:
            del config[PARK_KEY]
        return True

    if not path.exists():
        return [], Edited(changed=False, backup=None)
    done = edit_config(path, client, unguard, f'move the entries under "{PARK_KEY}" back by hand')
    return moved, done


def _run_guard(client: Client, path: Path, guard: bool) -> None:
    moved, done = guard_kite(path, client) if guard else unguard_kite(path, client)
    if not moved:
        what = "no unguarded Kite MCP server entry" if guard else "no guarded Kite entry"
        print(f"kite-skills: {what} in {path}; unchanged")
        return
    names = ", ".join(f"'{n}'" for n in moved)
    if guard:
        print(
            f"kite-skills: the guard now stands in front of {names} in {path} (the original "
            f'kept under "{PARK_KEY}"){_kept(done)}; restart {client.title} — your limits: '
            f"{invocation.current().run('guard', 'limits')}; put it back: "
            f"{invocation.current().run('setup', client.name, '--unguard')}"
        )
    else:
        print(f"kite-skills: restored {names} in {path}{_kept(done)}; restart {client.title}")


def repointed(words: list[str], here: tuple[str, ...]) -> list[str] | None:
    """The words of an entry of ours that starts another kite-skills, started by ``here``
    instead with the same arguments (None when it starts ``here`` already)."""
    if not words or doctor.starts(words, here):
        return None
    return [*here, *words[doctor.program_words(words) :]]


def _all_servers(config: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The servers objects in a config: its own, and Claude Code's per-project ones."""
    found = [config[key]] if isinstance(config.get(key), dict) else []
    projects = config.get("projects")
    if isinstance(projects, dict):
        found += [
            p[key]
            for p in projects.values()
            if isinstance(p, dict) and isinstance(p.get(key), dict)
        ]
    return found


def repoint(path: Path, client: Client, here: tuple[str, ...]) -> tuple[list[str], Edited]:
    """Point every entry of ours in ``path`` that starts another kite-skills at ``here``,
    keeping its arguments, store and every other setting: (their names, what was done)."""
    names: list[str] = []

    def point(config: dict[str, Any]) -> bool:
        for servers in _all_servers(config, client.key):
            for name, value in list(servers.items()):
                if not isinstance(value, dict):
                    continue
                entry = doctor.Entry(client.title, path, name, value)
                new = repointed(entry.words, here) if entry.ours else None
                if new is not None:
                    servers[name] = {**value, "command": new[0], "args": new[1:]}
                    names.append(name)
        return bool(names)

    if not path.exists():
        return [], Edited(changed=False, backup=None)
    done = edit_config(path, client, point, f"point the kite-skills entries at {' '.join(here)}")
    return names, done


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


SCOPES = {"user": "every project", "local": "this project only"}
"""The Claude Code scopes setup offers, as ``claude mcp add --scope`` names them."""


def claude_add(name: str, entry: dict[str, Any], scope: str) -> list[str]:
    """The ``claude mcp add`` command line for a local stdio server: the name before the
    options that take several values (``--env`` would take the name as one of them), then
    ``--`` and the command."""
    words = ["claude", "mcp", "add", "--scope", scope, "--transport", "stdio", name]
    for variable, value in sorted((entry.get("env") or {}).items()):
        words += ["--env", f"{variable}={value}"]
    return [*words, "--", entry["command"], *entry["args"]]


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


def _claude_code_entry(name: str, scope: str) -> dict[str, Any] | None:
    """The entry ``name`` in Claude Code's ~/.claude.json at ``scope`` (``local``: the
    project in the current folder), if it can be read."""
    try:
        config = json.loads(config_path("claude-code", os.environ, sys.platform).read_bytes())
        if scope == "local":
            config = config.get("projects", {}).get(os.getcwd(), {})
        found = config.get("mcpServers", {}).get(name)
    except (OSError, ValueError, AttributeError):
        return None
    return found if isinstance(found, dict) else None


def _which_claude(line: str) -> str:
    claude = shutil.which("claude")
    if claude is None:
        raise ConfigError(
            "'claude' (Claude Code's command) is not on PATH — install Claude Code, or run "
            f"this where 'claude' works: {line}"
        )
    return claude


def _setup_claude_code(name: str, entry: dict[str, Any], write: bool, scope: str) -> int:
    line = invocation.quote(claude_add(name, entry, scope), sys.platform)
    if not write:
        print("# Claude Code: run this in a terminal (or run setup with --write to run it):")
        print(line)
        return 0
    claude = _which_claude(line)
    before = _claude_code_entry(name, scope)
    where = f"Claude Code ({scope} scope)"
    if before is not None and same_entry(before, entry):
        print(f"kite-skills: '{name}' in {where} already starts {cmdline(entry)}; unchanged")
        return 0
    if before is not None:
        _claude(claude, ["mcp", "remove", "--scope", scope, name])
    _claude(claude, claude_add(name, entry, scope)[1:])
    what = f"updated from {cmdline(before)} to" if before is not None else "added: it starts"
    print(
        f"kite-skills: '{name}' in {where} {what} {cmdline(entry)}; start a new Claude Code "
        "session ('/mcp' lists it, 'claude mcp list' checks it)"
    )
    return 0


def _remove_claude_code(name: str, scope: str) -> int:
    words = ["claude", "mcp", "remove", "--scope", scope, name]
    claude = _which_claude(invocation.quote(words, sys.platform))
    if _claude_code_entry(name, scope) is None:
        print(f"kite-skills: no '{name}' in Claude Code ({scope} scope); unchanged")
        return 0
    _claude(claude, words[1:])
    print(f"kite-skills: removed '{name}' from Claude Code ({scope} scope)")
    return 0


def _warn_fragile() -> None:
    here = invocation.current()
    if here.zipapp:
        fragile = invocation.fragile_place(here.words[-1], os.environ, sys.platform)
        if fragile:
            print(f"kite-skills: warning: {fragile}", file=sys.stderr)


def _kept(edited: Edited) -> str:
    return f" (backup: {edited.backup})" if edited.backup else ""


def _two_kites(client: Client, kite: list[str]) -> str:
    here = invocation.current()
    return (
        f"{client.title} has a Kite MCP server ('{kite[0]}') beside the sandbox "
        f"('{SANDBOX_NAME}'): an agent would see two Kite servers, one of them fake — park "
        f"the real one while you rehearse: {here.run('setup', client.name, '--park-kite')} "
        "(kept in the same file; --unpark-kite puts it back)"
    )


def _config_of(client: Client, args: argparse.Namespace) -> Path:
    return Path(args.config) if args.config else config_path(client.name, os.environ, sys.platform)


def _run_park(client: Client, path: Path, park: bool) -> None:
    moved, done = park_kite(path, client) if park else unpark_kite(path, client)
    if not moved:
        what = "no Kite MCP server entry" if park else "nothing parked"
        print(f"kite-skills: {what} in {path}; unchanged")
        return
    names = ", ".join(f"'{n}'" for n in moved)
    if park:
        print(
            f'kite-skills: parked {names} in {path} (under "{PARK_KEY}"){_kept(done)}; '
            f"restart {client.title} — restore it: "
            f"{invocation.current().run('setup', client.name, '--unpark-kite')}"
        )
    else:
        print(f"kite-skills: restored {names} in {path}{_kept(done)}; restart {client.title}")
        config = read_config(path, client) or {}
        if SANDBOX_NAME in config.get(client.key, {}):
            print(f"kite-skills: warning: {_two_kites(client, moved)}", file=sys.stderr)


def _run_setup(args: argparse.Namespace) -> int:
    if args.repoint:
        return _run_repoint(args)
    if args.client is None:
        raise ConfigError(
            "name the client: setup CLIENT (one of " + ", ".join(sorted(CLIENTS)) + "), or "
            "setup --repoint to point every client's entries at this file"
        )
    client = CLIENTS[args.client]
    path = _config_of(client, args)
    if args.unpark_kite:
        _run_park(client, path, park=False)
        return 0
    if args.unguard:
        _run_guard(client, path, guard=False)
        return 0
    if args.guard:
        if not args.write:
            raise ConfigError(
                f"--guard edits {client.title}'s config: run it with --write "
                f"({invocation.current().run('setup', client.name, '--guard', '--write')})"
            )
        _run_guard(client, path, guard=True)
        return 0
    sandbox = args.sandbox
    name = SANDBOX_NAME if sandbox else SERVER_NAME
    via_claude = client.name == "claude-code" and not args.config
    if args.remove:
        if via_claude:
            return _remove_claude_code(name, args.scope)
        done = remove_entry(path, client, name)
        if done.changed:
            print(f"kite-skills: removed '{name}' from {path}{_kept(done)}; restart {client.title}")
        else:
            print(f"kite-skills: no '{name}' in {path}; unchanged")
        return 0
    if args.park_kite and not args.write:
        _run_park(client, path, park=True)
        return 0
    entry = sandbox_entry(client) if sandbox else server_entry(client, _store_path(args))
    _warn_fragile()
    if via_claude:
        _setup_claude_code(name, entry, args.write, args.scope)
    elif args.write:
        _write_entry(client, path, name, entry)
    else:
        print(f"# {client.title}: put this in {path} (or run with --write to merge it there)")
        print(json.dumps({client.key: {name: entry}}, indent=2))
        return 0
    if args.park_kite:
        _run_park(client, path, park=True)
    elif sandbox and args.write:
        config = read_config(path, client) or {}
        kite = kite_names(config.get(client.key, {}), client, path)
        if kite:
            print(f"kite-skills: warning: {_two_kites(client, kite)}", file=sys.stderr)
    return 0


def _write_entry(client: Client, path: Path, name: str, entry: dict[str, Any]) -> None:
    merged = merge_config(path, client, entry, name)
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


def _run_repoint(args: argparse.Namespace) -> int:
    """Point every entry of ours, in every client's config (or the one named), at this file."""
    if args.config and not args.client:
        raise ConfigError(
            "--config names one client's file: say which client, e.g. setup cursor --repoint "
            f"--config {args.config}; nothing was changed"
        )
    here = invocation.current().words
    chosen = [CLIENTS[args.client]] if args.client else list(CLIENTS.values())
    total = 0
    for client in chosen:
        path = _config_of(client, args)
        names, done = repoint(path, client, here)
        if names:
            total += len(names)
            listed = ", ".join(f"'{n}'" for n in names)
            print(
                f"kite-skills: {client.title}: {listed} in {path} now "
                f"start{'' if len(names) > 1 else 's'} "
                f"{invocation.quote(here, sys.platform)}{_kept(done)}; restart {client.title}"
            )
    if not total:
        print("kite-skills: every kite-skills entry starts this file already; unchanged")
    return 0


def _size(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


def _run_doctor(args: argparse.Namespace) -> int:
    print(f"interpreter:   {sys.executable} (CPython {platform.python_version()})")
    facts = build_info.current()
    site_packages = Path(__file__).resolve().parents[2]  # above kite_skills/cli/
    if facts:
        print(f"file:          {os.path.abspath(sys.argv[0])}")
        print(f"built for:     {facts.platform}, {facts.accepted} (kite-skills {facts.version})")
        extraction = site_packages.parent
        print(f"extracted to:  {extraction} ({_size(extraction) / 1e6:.1f} MB)")
    else:
        print(f"file:          not a zipapp build (the kite_skills package in {site_packages})")
    report = describe(_store_path(args))
    print(f"store:         {report.path} ({'exists' if report.exists else 'not created yet'})")
    findings: list[doctor.Finding] = []
    if report.problem:
        print(f"               cannot read it: {report.problem}")
        findings.append(doctor.Finding(f"the store {report.path} cannot be read (above)", True))
    elif report.exists:
        print(
            f"schema:        version {report.schema_version} (this kite-skills: {LATEST_VERSION})"
        )
        print("skills:        " + ", ".join(f"{state} {n}" for state, n in report.counts))
    entries, client_findings = _doctor_clients()
    findings += client_findings
    findings += copies.doctor_lines(entries)
    if not findings:
        print("verdict:       all good")
    else:
        print(f"verdict:       {len(findings)} thing{'s' if len(findings) > 1 else ''} to fix:")
        for number, finding in enumerate(findings, 1):
            print(f"  {number}. {finding.text}")
    return 1 if any(f.error for f in findings) else 0


def _doctor_clients() -> tuple[list[doctor.Entry], list[doctor.Finding]]:
    """Print which MCP clients' configs start kite-skills (this file or another), each
    entry's state; return every entry of ours and what to fix."""
    here = invocation.current()
    repoint_line = here.run("setup", "--repoint")
    print("clients:")
    findings: list[doctor.Finding] = []
    ours_all: list[doctor.Entry] = []
    elsewhere: list[tuple[str, bool]] = []  # (the entry and its state, whether it is gone)
    starts_here = False
    for client in CLIENTS.values():
        path = config_path(client.name, os.environ, sys.platform)
        try:
            config = read_config(path, client)
        except ConfigError as exc:
            print(f"  {client.title}: cannot read it: {exc}")
            findings.append(doctor.Finding(f"{exc}, then run this again", True))
            continue
        found = doctor.entries(client.title, path, config, client.key)
        ours = [e for e in found if e.ours]
        ours_all += ours
        if not ours:
            there = "no kite-skills entry in" if config is not None else "no config at"
            print(f"  {client.title}: {there} {path}")
            continue
        print(f"  {client.title}: {path}")
        for entry in ours:
            sandbox = ["--sandbox"] if entry.name == SANDBOX_NAME else []
            rewrite = here.run("setup", client.name, *sandbox, "--write")
            state = doctor.check_entry(entry, here.words, os.environ)
            fix = rewrite if state.problem else "" if state.here else repoint_line
            print(f"    '{entry.name}': {state.text}" + (f" — fix: {fix}" if fix else ""))
            starts_here = starts_here or state.here
            if state.problem:
                findings.append(
                    doctor.Finding(
                        f"{client.title}'s '{entry.name}': {state.text} — run: {rewrite}", True
                    )
                )
            elif not state.here:
                elsewhere.append((f"{client.title}'s '{entry.name}' ({state.text})", state.gone))
        findings += _beside(client, path, found, here)
    if elsewhere:
        many = len(elsewhere) > 1
        findings.append(
            doctor.Finding(
                f"{len(elsewhere)} entr{'ies start' if many else 'y starts'} an older, moved or "
                "missing kite-skills, not this file: "
                + "; ".join(text for text, _ in elsewhere)
                + f" — point {'every one' if many else 'it'} at this file: {repoint_line}",
                error=any(gone for _, gone in elsewhere),
            )
        )
    elif not starts_here:
        findings.append(
            doctor.Finding(
                "no MCP client starts this file yet — run: "
                f"{here.run('setup', 'claude-desktop', '--write')} (or claude-code, vscode, "
                "cursor in place of claude-desktop)"
            )
        )
    return ours_all, findings


def _beside(
    client: Client, path: Path, found: list[doctor.Entry], here: invocation.Invocation
) -> list[doctor.Finding]:
    """What the client lacks or has too much of beside kite-skills: a Kite MCP server (the
    recipes call its tools), and never both the real one and the sandbox."""
    kite = [e.name for e in found if e.kite_mcp]
    guarded = [e.name for e in found if e.guards]
    sandbox = any(e.name == SANDBOX_NAME for e in found)
    for name in kite:
        print(f"    Kite MCP server beside it: '{name}' (not guarded)")
    for name in guarded:
        print(f"    Kite MCP server beside it: '{name}' (guarded: kite-skills guard in front)")
    kite += guarded
    if kite and sandbox:
        return [doctor.Finding(_two_kites(client, kite))]
    if kite or sandbox or not any(e.name == SERVER_NAME for e in found):
        return []
    return [
        doctor.Finding(
            f"{client.title} has no Kite MCP server beside kite-skills (in {path}): the "
            "recipes call its tools — add Zerodha's Kite MCP server "
            f"(https://mcp.kite.trade/mcp) to {client.title}, or try the simulated one: "
            f"{here.run('setup', client.name, '--sandbox', '--write')}"
        )
    ]


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``setup``, ``doctor``, ``prune`` and ``uninstall`` to the main parser's
    subparsers."""
    _register_setup(subparsers)
    doctor_parser = subparsers.add_parser(
        "doctor",
        help="show the interpreter, this file's platforms, its unpacked copies, the store and "
        "which MCP clients start it, then what to fix (exit 1 when the store cannot be read, "
        "or a client's config cannot be read or starts an interpreter or file that is gone)",
        epilog="Example: kite-skills doctor",
    )
    add_db_option(doctor_parser)
    doctor_parser.set_defaults(run=_run_doctor)
    copies.register(subparsers, _doctor_entries, {c.title: c.name for c in CLIENTS.values()})


def _register_setup(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    setup = subparsers.add_parser(
        "setup",
        help="print (or --write, --remove) the config that starts this file from an MCP client",
        epilog="Example: kite-skills setup claude-desktop --write   (after a move: "
        "kite-skills setup --repoint)",
    )
    setup.add_argument("client", nargs="?", choices=sorted(CLIENTS), help="the MCP client")
    what = setup.add_mutually_exclusive_group()
    what.add_argument(
        "--write", action="store_true", help="merge it into the client's config file (backed up)"
    )
    what.add_argument(
        "--remove", action="store_true", help="take the entry out of the client's config"
    )
    what.add_argument(
        "--unpark-kite",
        action="store_true",
        help="put back the Kite MCP server entry --park-kite moved aside",
    )
    what.add_argument(
        "--unguard",
        action="store_true",
        help="put back the Kite MCP server entry --guard stands in front of",
    )
    what.add_argument(
        "--repoint",
        action="store_true",
        help="point every kite-skills entry of every client (or CLIENT's) at this file",
    )
    setup.add_argument(
        "--park-kite",
        action="store_true",
        help="move the client's Kite MCP server entry aside, in the same file (to rehearse "
        "with --sandbox)",
    )
    setup.add_argument(
        "--guard",
        action="store_true",
        help="with --write: put 'kite-skills guard' (your limits before every write) in front "
        "of the client's Kite MCP server entry, keeping the original for --unguard",
    )
    setup.add_argument("--config", metavar="PATH", help="another config file than the client's")
    setup.add_argument(
        "--sandbox",
        action="store_true",
        help="the entry 'kite-sandbox' for 'kite-skills sandbox' (a simulated account)",
    )
    setup.add_argument(
        "--scope",
        choices=sorted(SCOPES),
        default="user",
        help="Claude Code only: user (every project, the default) or local (this project)",
    )
    add_db_option(setup)
    setup.set_defaults(run=_run_setup)


def _doctor_entries() -> list[doctor.Entry]:
    """Every entry of ours in every client's config that can be read."""
    found: list[doctor.Entry] = []
    for client in CLIENTS.values():
        path = config_path(client.name, os.environ, sys.platform)
        try:
            config = read_config(path, client)
        except ConfigError:
            continue
        found += [e for e in doctor.entries(client.title, path, config, client.key) if e.ours]
    return found
