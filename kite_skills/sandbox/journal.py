"""The sandbox's journal: every tool call, its arguments, its result and the simulated time,
one JSON object a line, appended to a file.

Each entry is written with one unbuffered ``os.write`` of the whole line (``O_APPEND``)
*before* the reply is sent, so once a client has its answer the entry is in the file: a
crash of the process (even ``kill -9``) loses no acknowledged call. There is no fsync per
entry (it would cost every call a disk flush): an operating-system crash or power loss may
lose the last entries, which is out of scope for a rehearsal log.

What an agent sends cannot grow it without bound: each value of a tool's parameter is kept up
to :data:`MAX_VALUE_CHARS` of JSON, an argument that is no parameter of the tool by its name
only (the first :data:`MAX_UNKNOWN`), a result up to :data:`MAX_RESULT_CHARS`; and a file that
would pass :data:`MAX_BYTES` is renamed ``FILE.1`` (replacing the one before) and a new one
begun, so a journal takes at most twice that on disk.

When an entry cannot be written (a full disk), the call it records was already done, and is
answered as done; :attr:`Journal.failure` then says why, and the sandbox runs no further call.

Default file: ``journal.jsonl`` in ``kite-skills/sandbox/`` under the per-user data folder
(Linux ``$XDG_DATA_HOME`` or ``~/.local/share``; macOS ``~/Library/Application Support``;
Windows ``%LOCALAPPDATA%``), beside the user-skill store's folder; ``--journal FILE`` chooses
another. ``kite-skills sandbox journal [FILE]`` prints it as a timeline.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from .. import invocation, os_dirs
from ..display import clipped, for_terminal, one_line, wire_safe
from ..errors import KiteError

APP: Final = "kite-skills"
NAME: Final = "journal.jsonl"
SHOWN_CHARS: Final = 240  # of a result, in the timeline
MAX_BYTES: Final = 32 * 1024 * 1024  # a journal file, before it is renamed FILE.1
MAX_VALUE_CHARS: Final = 1024  # of one argument's JSON, in the journal
MAX_UNKNOWN: Final = 16  # arguments that are no parameter of the tool, kept by name
KEPT_NAME_CHARS: Final = 64  # of a tool's or an unknown argument's name
MAX_RESULT_CHARS: Final = 64 * 1024
NOT_A_PARAMETER: Final = "(not a parameter of this tool; its value is not recorded)"


class JournalError(KiteError):
    """The journal cannot be opened or read."""


def default_path(env: Mapping[str, str], platform: str | None = None) -> Path:
    """``kite-skills/sandbox/journal.jsonl`` in this OS's per-user data folder
    (:func:`kite_skills.os_dirs.data_dir`, the folder the user-skill store's
    ``default_db_path`` picks; the store itself is not imported: the sandbox never loads it)."""
    return os_dirs.data_dir(env, platform or sys.platform) / APP / "sandbox" / NAME


class Journal:
    """An append-only JSONL file; :meth:`write` returns once the line is in the file.
    ``max_bytes`` for tests: :data:`MAX_BYTES`."""

    def __init__(self, path: Path, max_bytes: int = MAX_BYTES) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.failure: str | None = None  # why the last entry could not be written
        self._start: dict[str, Any] = {}
        with contextlib.suppress(OSError):  # none yet; or said below, where it is opened
            _refuse_a_stream(path, os.stat(path).st_mode)
        try:
            os_dirs.make_private(path.parent)
            fd = _open(path)
        except OSError as exc:
            raise JournalError(
                f"{path}: cannot open the sandbox journal: {exc.strerror or exc} — choose "
                "another file with --journal FILE"
            ) from exc
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # made a FIFO since os.stat, say
            os.close(fd)
            _refuse_a_stream(path, mode)
        self._fd: int | None = fd
        if not _journal_or_empty(path):
            os.close(self._fd)
            self._fd = None
            raise JournalError(
                f"{path}: this file is not a sandbox journal, and the sandbox appends only to "
                "its own — choose another file with --journal FILE"
            )
        self.seq = 0

    def write(self, entry: Mapping[str, Any]) -> None:
        """Append ``entry`` as one line (lone surrogates and control characters escaped),
        after renaming a file it would take past ``max_bytes``; :class:`JournalError` (and
        :attr:`failure` set) when the line cannot be written."""
        if self._fd is None:
            return
        data = (
            json.dumps(entry, ensure_ascii=True, separators=(",", ":"), default=str) + "\n"
        ).encode()
        try:
            if os.fstat(self._fd).st_size + len(data) > self.max_bytes and self._start:
                self._rotate()
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            self.failure = exc.strerror or str(exc)
            raise JournalError(
                f"{self.path}: cannot write the sandbox journal: {self.failure} — free space "
                "there, or choose another file with --journal FILE, and start the sandbox again"
            ) from exc

    def _rotate(self) -> None:
        """``FILE`` becomes ``FILE.1`` (replacing it), and a new ``FILE`` begins with the
        start entry again, so that each file reads on its own."""
        assert self._fd is not None
        os.replace(self.path, self.path.with_name(self.path.name + ".1"))
        os.close(self._fd)
        self._fd = None  # until the new file is open: a failure leaves no stale descriptor
        self._fd = _open(self.path)
        line = {**self._start, "at": _now(), "continued": True}
        data = (json.dumps(line, ensure_ascii=True, separators=(",", ":")) + "\n").encode()
        os.write(self._fd, data)

    def call(
        self,
        *,
        sim_time: datetime,
        tool: str,
        arguments: Any,
        text: str,
        is_error: bool,
        kite_error: str | None = None,
        writes: bool = False,
    ) -> None:
        self.seq += 1
        if len(text) > MAX_RESULT_CHARS:
            text = f"{text[:MAX_RESULT_CHARS]}… (clipped: {len(text)} characters)"
        entry: dict[str, Any] = {
            "kind": "call",
            "seq": self.seq,
            "at": _now(),
            "sim_time": _sim(sim_time),
            "tool": clipped(tool, KEPT_NAME_CHARS),
            "arguments": arguments,
            "is_error": is_error,
            "result": text,
        }
        if kite_error is not None:
            entry["kite_error"] = kite_error
        if writes:
            entry["writes"] = True
        self.write(entry)

    def event(self, *, sim_time: datetime, event: str, text: str, instruments: list[str]) -> None:
        """What the simulation did (a fill, a trigger, a square-off, a write's effect)."""
        self.write(
            {
                "kind": "event",
                "at": _now(),
                "sim_time": _sim(sim_time),
                "event": event,
                "text": text,
                "instruments": instruments,
            }
        )

    def watch(
        self,
        *,
        sim_time: datetime,
        rule: str,
        phase: str,
        instruments: list[str],
        detail: str,
        message: str,
        began: datetime,
    ) -> None:
        """A watch rule's state began, ended (with how long it lasted) or was refused."""
        self.write(
            {
                "kind": "watch",
                "at": _now(),
                "sim_time": _sim(sim_time),
                "rule": rule,
                "phase": phase,
                "instruments": instruments,
                "detail": detail,
                "message": message,
                "began": _sim(began),
                "lasted_seconds": int((sim_time - began).total_seconds()),
            }
        )

    def start(self, **facts: Any) -> None:
        self._start = {"kind": "start", **facts}
        self.write({"kind": "start", "at": _now(), **facts})

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def recorded(arguments: Any, parameters: frozenset[str]) -> Any:
    """What the journal keeps of a call's arguments: each of the tool's ``parameters`` with its
    value (its JSON cut at :data:`MAX_VALUE_CHARS`, and said so); any other argument by its
    name only, for the first :data:`MAX_UNKNOWN`, then how many more there were."""
    if not isinstance(arguments, dict):
        return _recorded_value(arguments)
    kept: dict[str, Any] = {}
    others = 0
    for key, value in arguments.items():
        if key in parameters:
            kept[key] = _recorded_value(value)
            continue
        others += 1
        if others <= MAX_UNKNOWN:
            kept[clipped(key, KEPT_NAME_CHARS)] = NOT_A_PARAMETER
    if others > MAX_UNKNOWN:
        kept["…"] = f"{others - MAX_UNKNOWN} more arguments that are not parameters of this tool"
    return kept


def _recorded_value(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=True, default=str)
    if len(text) <= MAX_VALUE_CHARS:
        return value
    return f"{text[:MAX_VALUE_CHARS]}… (clipped: {len(text)} characters of JSON)"


def _open(path: Path) -> int:
    """The journal's file, for appending (a FIFO without a reader fails rather than waits)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, 0o600)
    os.set_blocking(fd, True)
    return fd


def _refuse_a_stream(path: Path, mode: int) -> None:
    """A journal is a file: a FIFO, a pipe (``/dev/stdout``), a socket or a device would block
    the start, or take the journal where no one keeps it."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):  # a folder: opening it says so
        return
    kind = "a FIFO or pipe" if stat.S_ISFIFO(mode) else "not a regular file"
    raise JournalError(
        f"{path}: this is {kind}, and the sandbox journal must be a file it can read back "
        "and append to — choose a file with --journal FILE"
    )


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
    return isinstance(entry, dict) and entry.get("kind") in ("start", "call", "event", "watch")


def _sim(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")


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
        if entry.get("kind") == "event":
            yield (
                f"{field.get('sim_time', '?')} IST  ~ {_shorten(str(entry.get('event')), 40)}: "
                f"{_shorten(str(entry.get('text', '')))}"
            )
            continue
        if entry.get("kind") == "watch":
            yield from _watch_lines(entry)
            continue
        mark = "ERROR" if entry.get("is_error") else "ok"
        yield (
            f"{field.get('sim_time', '?')} IST  #{field.get('seq')}  "
            f"{'WRITE ' if entry.get('writes') else ''}{_shorten(str(entry.get('tool')), 80)} "
            f"{_arguments(entry.get('arguments'))}"
        )
        yield f"    {mark}: {_shorten(str(entry.get('result', '')))}"
        if entry.get("kite_error"):
            yield f"    Kite said: {_shorten(str(entry['kite_error']))}"


def _lasted(seconds: Any) -> str:
    total = int(seconds) if isinstance(seconds, int | float) else 0
    hours, rest = divmod(total, 3600)
    return (
        f"{hours}h{rest // 60:02d}m{rest % 60:02d}s" if hours else f"{rest // 60}m{rest % 60:02d}s"
    )


def _watch_lines(entry: dict[str, Any]) -> Iterator[str]:
    """A watch finding, marked ``!! WATCH`` so that it stands out in the timeline."""
    phase = entry.get("phase")
    rule = _shorten(str(entry.get("rule")), 40)
    head = f"{_shorten(str(entry.get('sim_time', '?')), 40)} IST  !! WATCH {rule}"
    if phase == "ended":
        yield f"{head} ended after {_lasted(entry.get('lasted_seconds'))}: " + _shorten(
            str(entry.get("detail", ""))
        )
        return
    verb = "refused the call (--watch strict)" if phase == "refused" else "began"
    yield f"{head} {verb}: {_shorten(str(entry.get('detail', '')))}"
    yield f"    {_shorten(str(entry.get('message', '')))}"


def summary(path: Path) -> dict[str, Any]:
    """The last launch of the journal, for a test or a script (``sandbox journal --json``):
    how many calls and writes, the events by kind, the watch's findings by rule (each state
    that began, or was refused, counts once) and each finding with how long it lasted (None:
    still open when the journal ends)."""
    calls = writes = 0
    events: dict[str, int] = {}
    counts: dict[str, int] = {}
    findings: list[dict[str, Any]] = []
    open_: dict[tuple[str, str, tuple[str, ...]], dict[str, Any]] = {}
    launches = 0
    for _number, entry in entries(path):
        if entry is None:
            continue
        kind = entry.get("kind")
        if kind == "start":
            launches += 1
            calls = writes = 0
            events, counts, findings, open_ = {}, {}, [], {}
        elif kind == "call":
            calls += 1
            writes += bool(entry.get("writes"))
        elif kind == "event":
            name = str(entry.get("event"))
            events[name] = events.get(name, 0) + 1
        elif kind == "watch":
            rule = str(entry.get("rule"))
            key = (rule, str(entry.get("began")), tuple(entry.get("instruments") or ()))
            if entry.get("phase") in ("began", "refused"):
                counts[rule] = counts.get(rule, 0) + 1
                found = {
                    "rule": rule,
                    "phase": entry.get("phase"),
                    "instruments": entry.get("instruments"),
                    "detail": entry.get("detail"),
                    "began": entry.get("began"),
                    "lasted_seconds": 0 if entry.get("phase") == "refused" else None,
                }
                findings.append(found)
                open_[key] = found
            elif entry.get("phase") == "ended" and key in open_:
                open_.pop(key)["lasted_seconds"] = entry.get("lasted_seconds")
    return {
        "launches": launches,
        "calls": calls,
        "writes": writes,
        "events": dict(sorted(events.items())),
        "watch": dict(sorted(counts.items())),
        "findings": findings,
    }
