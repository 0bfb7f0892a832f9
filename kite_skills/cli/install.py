"""``kite-skills install-command [--uninstall] [--dir DIR]``: a ``kite-skills`` command on the
person's PATH that starts this very file, so that every hint's ``kite-skills …`` works.

The launcher is a small ``sh`` script (a ``.cmd`` on Windows) that runs the interpreter and
the file running now, by their absolute paths. A line in it says who wrote it
(:data:`kite_skills.invocation.LAUNCHER_MARKER`): a file of that name without it is someone
else's and is never overwritten or removed; one with it is replaced when it starts another
file, and left as it is when it already starts this one.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from .. import invocation, os_dirs
from ..errors import KiteError
from ..invocation import LAUNCHER_MARKER, NAME, launcher_text


class InstallError(KiteError):
    """The launcher cannot be written or removed; nothing was changed."""


def launcher_name(platform: str) -> str:
    return f"{NAME}.cmd" if platform == "win32" else NAME


def on_path(folder: Path, env: Mapping[str, str]) -> bool:
    """Whether ``folder`` is one of the folders in ``env``'s PATH."""
    want = os.path.normcase(os.path.realpath(folder))
    return any(
        os.path.normcase(os.path.realpath(part)) == want
        for part in env.get("PATH", "").split(os.pathsep)
        if part
    )


def _read(path: Path) -> str | None:
    """The text of the file at ``path`` (None when nothing is there); an InstallError when
    it is not a file of ours to judge."""
    if not os.path.lexists(path):
        return None
    if path.is_symlink() or not path.is_file():
        kind = "a symbolic link" if path.is_symlink() else "not a regular file"
        raise InstallError(
            f"{path} is {kind}, not a launcher kite-skills wrote; nothing was changed — "
            "remove or rename it yourself if you no longer need it, or choose another folder "
            "with --dir DIR"
        )
    try:
        return path.read_bytes()[:65536].decode("utf-8", errors="replace")
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc.strerror}; nothing was changed") from exc


def _someone_elses(path: Path, text: str) -> InstallError:
    first = text.splitlines()[0][:80] if text.strip() else "(empty)"
    return InstallError(
        f"{path} already exists and kite-skills did not write it (its first line: {first!r}); "
        "nothing was changed — if it is an old kite-skills you no longer need, remove it and "
        "run this again, or choose another folder with --dir DIR"
    )


def _write(path: Path, text: str, platform: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        if platform != "win32":
            os.chmod(partial, 0o755)
        os.replace(partial, path)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise


def install(folder: Path, words: tuple[str, ...], platform: str) -> tuple[Path, str]:
    """Write the launcher for ``words`` in ``folder``: (its path, what was done: "wrote",
    "unchanged" or "updated from …")."""
    path = folder / launcher_name(platform)
    text = launcher_text(words, platform)
    old = _read(path)
    if old is not None and LAUNCHER_MARKER not in old:
        raise _someone_elses(path, old)
    if old == text:
        return path, "unchanged"
    try:
        _write(path, text, platform)
    except OSError as exc:
        raise InstallError(
            f"cannot write {path}: {exc.strerror} — choose a folder you can write with "
            "--dir DIR; nothing was changed"
        ) from exc
    if old is None:
        return path, "wrote"
    return path, f"updated from {_started_by(old)}"


def _started_by(text: str) -> str:
    """What a launcher of ours starts (its command line without the arguments part)."""
    for line in text.splitlines():
        if line.startswith("exec "):
            return line.removeprefix("exec ").removesuffix(' "$@"')
        if line.endswith(" %*"):
            return line.removesuffix(" %*")
    return "another file"


def uninstall(folder: Path, platform: str) -> tuple[Path, bool]:
    """Remove the launcher in ``folder`` if kite-skills wrote it: (its path, whether one was
    there). Someone else's file of that name is an InstallError."""
    path = folder / launcher_name(platform)
    old = _read(path)
    if old is None:
        return path, False
    if LAUNCHER_MARKER not in old:
        raise _someone_elses(path, old)
    try:
        path.unlink()
    except OSError as exc:
        raise InstallError(f"cannot remove {path}: {exc.strerror}; nothing was changed") from exc
    return path, True


def path_advice(folder: Path, platform: str) -> str:
    """How to put ``folder`` on PATH, for the person's shell."""
    if platform == "win32":
        return (
            f"add {folder} to your user Path (Settings → System → About → Advanced system "
            "settings → Environment Variables), then open a new terminal"
        )
    profile = "~/.zprofile" if platform == "darwin" else "~/.profile"
    return (
        f"add it to PATH: echo 'export PATH=\"{folder}:$PATH\"' >> {profile} — then open a new "
        "terminal"
    )


def _say(text: str) -> None:
    print(f"kite-skills: {text}", file=sys.stderr)


def _run(args: argparse.Namespace) -> int:
    env, platform = os.environ, sys.platform
    folder = Path(args.dir).absolute() if args.dir else os_dirs.bin_dir(env, platform)
    if args.uninstall:
        path, there = uninstall(folder, platform)
        print(f"kite-skills: removed {path}" if there else f"kite-skills: no launcher at {path}")
        return 0
    here = invocation.current()
    if not here.zipapp and len(here.words) == 1:
        print(f"kite-skills: '{NAME}' is an installed command already ({here.words[0]})")
        return 0
    path, done = install(folder, here.words, platform)
    shown = invocation.quote(here.words, platform)
    if done == "unchanged":
        print(f"kite-skills: {path} already starts {shown}; unchanged")
    elif done == "wrote":
        print(f"kite-skills: wrote {path}: '{NAME}' starts {shown}")
    else:
        print(f"kite-skills: {path} {done} to {shown}")
    if here.zipapp:
        fragile = invocation.fragile_place(here.words[-1], env, platform)
        if fragile:
            _say(f"warning: {fragile}")
    if not on_path(folder, env):
        _say(
            f"warning: {folder} is not on your PATH, so '{NAME}' is not found yet — "
            + path_advice(folder, platform)
        )
    else:
        first = invocation.found_on_path(env, platform)
        if first is not None and os.path.realpath(first) != os.path.realpath(path):
            _say(f"warning: another '{NAME}' comes first on your PATH: {first}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``install-command`` to the main parser's subparsers."""
    command = subparsers.add_parser(
        "install-command",
        help="put a 'kite-skills' command on your PATH that starts this file",
        description="Write a small launcher named kite-skills (kite-skills.cmd on Windows) "
        "that starts this file with this interpreter, so that 'kite-skills dashboard' and "
        "every other hint work in a terminal. It never overwrites a file it did not write.",
        epilog="Example: kite-skills install-command   (remove it: --uninstall)",
    )
    command.add_argument(
        "--dir",
        metavar="DIR",
        help="the folder to put it in (default: ~/.local/bin, on PATH on most systems)",
    )
    command.add_argument(
        "--uninstall", action="store_true", help="remove the launcher this command wrote"
    )
    command.set_defaults(run=_run)
