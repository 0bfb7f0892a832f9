"""The guard's journal: every write it judged, its decision, the limits and the numbers, one
JSON object a line, appended (``O_APPEND``, one ``os.write`` per line) to a file private to
the user (mode 0600). It holds no tokens: the write's arguments and the guard's words only.
No MCP tool reads or writes it; the dashboard's Guard page and ``kite-skills guard journal``
read it.

Default file: ``kite-skills/guard/journal.jsonl`` under the per-user data folder.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from .. import os_dirs
from ..errors import KiteError

APP: Final = "kite-skills"
NAME: Final = "journal.jsonl"


class JournalError(KiteError):
    """The guard's journal cannot be opened or written."""


def default_path(env: Mapping[str, str], platform: str | None = None) -> Path:
    return os_dirs.data_dir(env, platform or sys.platform) / APP / "guard" / NAME


class Journal:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
            self._fd = os.open(path, flags, 0o600)
            os.chmod(path, 0o600)  # an older file made under another umask is made private
        except OSError as exc:
            raise JournalError(
                f"{path}: cannot open the guard's journal: {exc.strerror or exc} — choose "
                "another file with --journal FILE"
            ) from exc

    def write(self, entry: dict[str, Any]) -> None:
        line = json.dumps(entry, ensure_ascii=False, default=str, separators=(",", ":")) + "\n"
        os.write(self._fd, line.encode("utf-8", "backslashreplace"))

    def close(self) -> None:
        os.close(self._fd)


def entries(path: Path) -> Iterator[dict[str, Any]]:
    """Every entry, oldest first (a line that is not an entry is skipped)."""
    try:
        lines = path.read_bytes().splitlines()
    except FileNotFoundError:
        return
    for raw in lines:
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict):
            yield entry


def on_day(path: Path, day: datetime) -> list[dict[str, Any]]:
    """The entries whose ``at`` falls on ``day``'s date (in ``day``'s time zone)."""
    out = []
    for entry in entries(path):
        try:
            at = datetime.fromisoformat(str(entry.get("at")))
        except ValueError:
            continue
        if at.astimezone(day.tzinfo).date() == day.date():
            out.append(entry)
    return out


def line(entry: dict[str, Any]) -> str:
    """One entry as a line of the timeline (escaped for a terminal)."""
    from ..display import for_terminal

    at = str(entry.get("at", ""))[11:19]
    what = f"{entry.get('tool')} {entry.get('action')}"
    limits = ",".join(str(x) for x in entry.get("limits") or ())
    said = f" [{limits}]" if limits else ""
    return for_terminal(f"{at} {entry.get('decision'):<15} {what}{said}")
