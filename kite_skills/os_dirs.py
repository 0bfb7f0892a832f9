"""This OS's per-user folders: the home directory, and where applications keep their data and
their configuration. One owner for every file kite-skills finds or writes in them.

Each function reads only ``env`` (the caller passes ``os.environ``) and ``platform`` (a
``sys.platform`` value), so every OS's answer can be checked on any OS:

=========  ==================================  ==========================================
platform   :func:`data_dir`                    :func:`config_dir`
=========  ==================================  ==========================================
darwin     ``~/Library/Application Support``   ``~/Library/Application Support``
win32      ``%LOCALAPPDATA%``                  ``%APPDATA%``
others     ``$XDG_DATA_HOME``, else            ``$XDG_CONFIG_HOME``, else ``~/.config``
           ``~/.local/share``
=========  ==================================  ==========================================

A relative ``XDG_*`` value is ignored, as the XDG Base Directory specification says.

:func:`bin_dir` is where ``kite-skills install-command`` puts its launcher: ``~/.local/bin``
on every OS (the XDG folder for a user's commands; pipx and uv use it on Windows too).
:func:`downloads_and_temp` names the folders a program should not be started from for good;
:func:`make_private` creates a folder of ours, user-only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def home(env: Mapping[str, str], platform: str) -> Path:
    """The home directory: ``HOME`` (``USERPROFILE`` on Windows), else the password
    database's (Windows: :meth:`Path.home`)."""
    value = env.get("USERPROFILE" if platform == "win32" else "HOME", "").strip()
    if value:
        return Path(value)
    if platform == "win32":
        return Path.home()
    import pwd

    return Path(pwd.getpwuid(os.getuid()).pw_dir)


def data_dir(env: Mapping[str, str], platform: str) -> Path:
    """Where applications keep this user's data (the folder holding ``kite-skills/``)."""
    return _folder(env, platform, ("LOCALAPPDATA", "Local"), ("XDG_DATA_HOME", ".local/share"))


def config_dir(env: Mapping[str, str], platform: str) -> Path:
    """Where applications keep this user's configuration (MCP clients' config files)."""
    return _folder(env, platform, ("APPDATA", "Roaming"), ("XDG_CONFIG_HOME", ".config"))


def _folder(
    env: Mapping[str, str], platform: str, windows: tuple[str, str], xdg: tuple[str, str]
) -> Path:
    """``windows``: the variable naming the folder and its name under ``AppData`` when unset;
    ``xdg``: likewise, with its place under the home directory."""
    if platform == "darwin":
        return home(env, platform) / "Library" / "Application Support"
    variable, fallback = windows if platform == "win32" else xdg
    value = env.get(variable, "").strip()
    if platform == "win32":
        return Path(value) if value else home(env, platform) / "AppData" / fallback
    # The XDG Base Directory specification: a relative value is invalid and ignored.
    return Path(value) if value and os.path.isabs(value) else home(env, platform) / fallback


def bin_dir(env: Mapping[str, str], platform: str) -> Path:
    """Where a user's own commands go: ``~/.local/bin`` (``%USERPROFILE%\\.local\\bin`` on
    Windows), as pipx and uv put theirs."""
    return home(env, platform) / ".local" / "bin"


def downloads_and_temp(env: Mapping[str, str], platform: str) -> tuple[Path, ...]:
    """Folders whose files come and go: the browser's Downloads folder and the temporary
    folders (a file there may be cleaned away, and an MCP client that starts it then fails)."""
    folders = [home(env, platform) / "Downloads"]
    names = ("TEMP", "TMP", "TMPDIR") if platform == "win32" else ("TMPDIR",)
    folders += [Path(env[n]) for n in names if env.get(n, "").strip()]
    if platform != "win32":
        folders += [
            Path("/tmp"),
            Path("/var/tmp"),
            Path("/private/tmp"),
            Path("/private/var/folders"),
        ]
    else:
        folders.append(home(env, platform) / "AppData" / "Local" / "Temp")
    return tuple(folders)


def make_private(folder: Path) -> None:
    """Create ``folder`` and its missing parents, each user-only (0700): the store's folder
    and the sandbox's journal folder share ``kite-skills/`` in the data folder, and whichever
    program starts first makes it. A folder that exists is left as it is."""
    missing = [d for d in (folder, *folder.parents) if not d.exists()]
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=0o700)
        except FileExistsError:  # another process made it first
            continue
        os.chmod(directory, 0o700)  # mkdir's mode is narrowed by the umask, never widened
