"""How this program was started, and so the command a person types to start it again: the one
owner of every hint that names a command (``… dashboard``, ``… skills publish NAME``).

- ``kite-skills``, when a ``kite-skills`` on PATH starts this same program (an installed
  console script, or the launcher ``kite-skills install-command`` wrote for this file);
- otherwise ``<interpreter> <file>`` when it runs as a zipapp (a downloaded ``.pyz`` has no
  command of its own), the interpreter's absolute path and the file's, quoted for this OS's
  shell;
- otherwise the console script's own path, or ``<interpreter> -m kite_skills``.

:func:`describe` reads only what it is given (and the launcher a PATH leads to), so every
case can be checked on any OS; :func:`current` asks it about this process. Standard library
only, and cheap: a server start asks it (for the store's messages).
"""

from __future__ import annotations

import ntpath
import os
import posixpath
import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from .launcher import build_info

NAME = "kite-skills"
LAUNCHER_MARKER = "written by 'kite-skills install-command'"
"""A line in every launcher ``install-command`` writes: how it knows its own (to replace it
when it starts the same file, to remove it with ``--uninstall``) from someone else's."""


@dataclass(frozen=True)
class Invocation:
    """The words that start this program: ``words`` with absolute paths (what an MCP client's
    config names), ``on_path`` when plain ``kite-skills`` starts this same program."""

    words: tuple[str, ...]
    on_path: bool
    platform: str
    zipapp: bool = False

    @property
    def command(self) -> str:
        """The command as a person types it in this OS's shell: ``kite-skills``, or the
        quoted interpreter and file."""
        return NAME if self.on_path else quote(self.words, self.platform)

    def run(self, *words: str) -> str:
        """``command`` followed by ``words`` (each quoted when it needs to be)."""
        if not words:
            return self.command
        return f"{self.command} {quote(words, self.platform)}"

    def __str__(self) -> str:
        return self.command


def quote(words: tuple[str, ...] | list[str], platform: str) -> str:
    """``words`` as one command line for this OS's shell (sh on POSIX, cmd.exe on Windows)."""
    if platform == "win32":
        import subprocess  # its list2cmdline: the quoting Windows programs read

        return subprocess.list2cmdline(list(words))
    return shlex.join(words)


def launcher_text(words: tuple[str, ...], platform: str) -> str:
    """The launcher ``install-command`` writes to run ``words`` (interpreter and file) with
    the arguments it gets: an sh script, or a .cmd file on Windows."""
    if platform == "win32":
        return f"@echo off\r\nrem {LAUNCHER_MARKER}\r\n{quote(words, platform)} %*\r\n"
    return f'#!/bin/sh\n# {LAUNCHER_MARKER}\nexec {quote(words, platform)} "$@"\n'


def found_on_path(env: Mapping[str, str], platform: str) -> str | None:
    """The ``kite-skills`` command a shell with ``env``'s PATH would run, if any."""
    path = env.get("PATH", "")
    if platform == "win32":
        for folder in path.split(os.pathsep):
            for suffix in (".cmd", ".exe", ".bat"):
                candidate = os.path.join(folder, NAME + suffix)
                if folder and os.path.isfile(candidate):
                    return candidate
        return None
    return shutil.which(NAME, path=path)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def describe(
    argv0: str,
    executable: str,
    env: Mapping[str, str],
    platform: str,
    *,
    zipapp: bool,
) -> Invocation:
    """How a program started as ``argv0`` by ``executable`` is started again. ``zipapp``: it
    runs from a zipapp (``argv0`` is the file)."""
    program = (ntpath if platform == "win32" else posixpath).abspath(argv0)
    on_path = found_on_path(env, platform)
    if zipapp:
        words: tuple[str, ...] = (executable, program)
        mine = False
        if on_path is not None:
            try:
                with open(on_path, encoding="utf-8", errors="replace", newline="") as launcher:
                    mine = launcher.read(65536) == launcher_text(words, platform)
            except OSError:
                mine = False
        return Invocation(words, mine, platform, zipapp=True)
    stem = os.path.splitext(os.path.basename(program))[0]
    if stem in (NAME, f"{NAME}-script"):  # an installed console script
        found = on_path is not None and _same_file(on_path, program)
        return Invocation((program,), found, platform)
    return Invocation((executable, "-m", "kite_skills"), False, platform)


def _is_zipapp(program: str) -> bool:
    if build_info.current() is not None:  # kite-skills runs from a zipapp build's extraction
        return True
    if not program.endswith(".pyz") and "." in os.path.basename(program):
        return False
    import zipfile

    return os.path.isfile(program) and zipfile.is_zipfile(program)


def current() -> Invocation:
    """How this process was started."""
    program = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return describe(
        program or sys.executable,
        sys.executable,
        os.environ,
        sys.platform,
        zipapp=bool(program) and _is_zipapp(program),
    )


def fragile_place(program: str, env: Mapping[str, str], platform: str) -> str | None:
    """A warning when ``program`` (the file a config or a launcher names) sits in Downloads or
    a temporary folder, where it may be cleaned away; None when it does not."""
    from .os_dirs import downloads_and_temp

    where = os.path.normcase(os.path.realpath(program))
    for folder in downloads_and_temp(env, platform):
        real = os.path.normcase(os.path.realpath(folder))
        if where.startswith(real.rstrip(os.sep) + os.sep):
            return (
                f"{program} is in {folder}, where files get cleaned away or replaced — move "
                "it to a folder of its own first (e.g. ~/Applications or ~/.local/share), "
                "then run this again from there"
            )
    return None
