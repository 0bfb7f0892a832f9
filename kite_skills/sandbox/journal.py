"""The sandbox's journal: every tool call, its arguments, its result and the simulated time,
one JSON object a line, appended to a file.

Each entry is written with one unbuffered ``os.write`` of the whole line (``O_APPEND``)
*before* the reply is sent, so once a client has its answer the entry is in the file: a
crash of the process (even ``kill -9``) loses no acknowledged call. There is no fsync per
entry (it would cost every call a disk flush): an operating-system crash or power loss may
lose the last entries, which is out of scope for a rehearsal log.

Default file: ``journal.jsonl`` in ``kite-skills/sandbox/`` under the per-user data folder
(Linux ``$XDG_DATA_HOME`` or ``~/.local/share``; macOS ``~/Library/Application Support``;
Windows ``%LOCALAPPDATA%``), beside the user-skill store's folder; ``--journal FILE`` chooses
another. ``kite-skills sandbox journal [FILE]`` prints it as a timeline.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from .. import invocation, os_dirs
from ..display import for_terminal, one_line, wire_safe
from ..errors import KiteError

APP: Final = "kite-skills"
NAME: Final = "journal.jsonl"
SHOWN_CHARS: Final = 240  # of a result, in the timeline


class JournalError(KiteError):
    """The journal cannot be opened or read."""


def default_path(env: Mapping[str, str], platform: str | None = None) -> Path:
    """``kite-skills/sandbox/journal.jsonl`` in this OS's per-user data folder
    (:func:`kite_skills.os_dirs.data_dir`, the folder the user-skill store's
    ``default_db_path`` picks; the store itself is not imported: the sandbox never loads it)."""
    return os_dirs.data_dir(env, platform or sys.platform) / APP / "sandbox" / NAME


class Journal:
    """An append-only JSONL file; :meth:`write` returns once the line is in the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
            self._fd: int | None = os.open(path, flags, 0o600)
        except OSError as exc:
            raise JournalError(
                f"{path}: cannot open the sandbox journal: {exc.strerror or exc} — choose "
                "another file with --journal FILE"
            ) from exc
        if not _journal_or_empty(path):
            os.close(self._fd)
            self._fd = None
            raise JournalError(
                f"{path}: this file is not a sandbox journal, and the sandbox appends only to "
                "its own — choose another file with --journal FILE"
            )
        self.seq = 0

    def write(self, entry: Mapping[str, Any]) -> None:
        """Append ``entry`` as one line (lone surrogates and control characters escaped)."""
        if self._fd is None:
            return
        data = (
            json.dumps(entry, ensure_ascii=True, separators=(",", ":"), default=str) + "\n"
        ).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def call(
        self,
        *,
        sim_time: datetime,
        tool: str,
        arguments: Any,
        text: str,
        is_error: bool,
        kite_error: str | None = None,
    ) -> None:
        self.seq += 1
        entry: dict[str, Any] = {
            "kind": "call",
            "seq": self.seq,
            "at": _now(),
            "sim_time": sim_time.strftime("%Y-%m-%d %H:%M:%S"),
            "tool": tool,
            "arguments": arguments,
            "is_error": is_error,
            "result": text,
        }
        if kite_error is not None:
            entry["kite_error"] = kite_error
        self.write(entry)

    def start(self, **facts: Any) -> None:
        self.write({"kind": "start", "at": _now(), **facts})

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _journal_or_empty(path: Path) -> bool:
    """Whether the file is empty or starts with a journal entry (a mistyped --journal must
    not get JSON lines appended to someone's document)."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(65536)
    except OSError:
        return True  # unreadable but writable: nothing of a person's to protect that we see
    if not first:
        return True
    try:
        entry = json.loads(first.split(b"\n", 1)[0])
    except ValueError:
        return False
    return isinstance(entry, dict) and entry.get("kind") in ("start", "call")


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def entries(path: Path) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """(line number, entry) for each line; None for a line that is not an entry (a torn
    last line after a crash mid-write, or text someone added)."""
    try:
        handle = path.open("rb")
    except FileNotFoundError as exc:
        here = invocation.current()
        raise JournalError(
            f"{path}: no sandbox journal here yet — the sandbox starts it on its first launch "
            f"('{here.run('sandbox')}', or its entry in your MCP client); for another file: "
            f"{here.run('sandbox', 'journal')} FILE"
        ) from exc
    except OSError as exc:
        raise JournalError(
            f"{path}: cannot read the sandbox journal: {exc.strerror or exc} — give the file "
            f"'{invocation.current().run('sandbox', '--journal')} FILE' wrote"
        ) from exc
    with handle:
        for number, raw in enumerate(handle, 1):
            try:
                value = json.loads(raw)
            except ValueError:
                yield number, None
                continue
            yield number, value if isinstance(value, dict) else None


def _shorten(text: str, limit: int = SHOWN_CHARS) -> str:
    """One line for a terminal: whitespace runs as one space, control, invisible (bidi
    overrides, zero-width) characters and lone surrogates as escapes (a journal holds whatever
    a client sent), cut short when long."""
    text = for_terminal(wire_safe(one_line(text)))
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def _arguments(arguments: Any) -> str:
    if not isinstance(arguments, dict):
        return _shorten(json.dumps(arguments, ensure_ascii=False), 160)
    mode = arguments.get("mode")
    rest = {k: v for k, v in arguments.items() if k != "mode"}
    head = f"mode={mode} " if isinstance(mode, str) else ""
    shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in rest.items())
    return _shorten(head + shown, 200)


def timeline(path: Path) -> Iterator[str]:
    """The journal as lines for a person: each start, then each call at its simulated time."""
    for number, entry in entries(path):
        if entry is None:
            yield f"{path}:{number}: (not a journal entry; skipped)"
            continue
        # every field as whatever wrote the file left it: escaped and cut short
        field = {k: _shorten(str(v), 200) for k, v in entry.items()}
        if entry.get("kind") == "start":
            yield (
                f"== {field.get('at', '?')}: sandbox started: scenario {field.get('scenario')}, "
                f"tools {field.get('tools')}, clock {field.get('clock')} at "
                f"{field.get('speed')}x, {field.get('transport')}"
            )
            continue
        mark = "ERROR" if entry.get("is_error") else "ok"
        yield (
            f"{field.get('sim_time', '?')} IST  #{field.get('seq')}  "
            f"{_shorten(str(entry.get('tool')), 80)} "
            f"{_arguments(entry.get('arguments'))}"
        )
        yield f"    {mark}: {_shorten(str(entry.get('result', '')))}"
        if entry.get("kite_error"):
            yield f"    Kite said: {_shorten(str(entry['kite_error']))}"
