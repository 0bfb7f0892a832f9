"""Text a person reads is shown, never executed: the one place that makes agent-written text
safe to put in front of a person.

Agent-written names, descriptions and bodies may hold characters that change what a terminal
or a page *shows* without being seen themselves: C0/C1 control characters (``ESC [2K`` erases
a line, ``CR`` returns to its start, ``BEL``, OSC sequences), line and paragraph separators
(U+2028/U+2029) and every invisible character (:mod:`kite_skills.invisible`: Unicode format
characters such as bidi overrides and marks (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F,
U+061C), zero-width characters, tag characters, and the default-ignorable code points such as
variation selectors and Hangul fillers). The store refuses the invisible ones on write, but a
store written by an older kite-skills or another tool can hold any of them, so every adapter
shows text through :func:`visible` (or :func:`for_terminal`), which replaces each such
character with its escape (``\\x1b``, ``\\r``, ``\\u202e``, ``\\U000e0073``), as ``git`` quotes
paths. Emoji sequences (a joiner between two pictographs, VS16 after a symbol) stay as they
are. Newlines and tabs stay in multi-line text (bodies); in one-line text (names,
descriptions) they are shown escaped too. HTML escaping is the template engine's job
(autoescape), on top of this.

Every helper that writes text for someone to read lives here, each named for what it does:

- :func:`visible` (and :func:`for_terminal`, what the CLI prints, right-to-left characters
  escaped too): agent-written text for a person, each hidden character as its escape; the
  dashboard marks the same ones with :func:`split_hidden` and :func:`count_hidden`;
- :func:`body_lines`, :func:`blank_runs`, :func:`blank_lines` and :func:`text_size`: a body's
  numbered lines, its runs of blank lines shown as one line, its length beside the buttons;
- :func:`quoted`: a refused value quoted in an error message, cut short when long, with every
  control, joiner and lone surrogate as a hex escape (a refusal shows exactly what it got);
- :func:`decoded`: a value as SQLite returned it, bytes that are not UTF-8 as ``\\xNN``;
- :func:`wire_safe` and :func:`clipped`: text for a JSON-RPC message (lone surrogates, which
  no UTF-8 encoder writes, as escapes), and a value cut to fit one;
- :func:`one_line`: text on one line (an error's message for a log);
- :func:`local_time`: a stored UTC time stamp as this machine's local time, to the second
  (the CLI and the dashboard show every time through it).
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache
from typing import Final

from kite_skills.invisible import invisible_at
from kite_skills.rtl import rtl_runs

__all__ = [
    "clipped",
    "count_hidden",
    "decoded",
    "for_terminal",
    "local_time",
    "one_line",
    "quoted",
    "split_hidden",
    "visible",
    "wire_safe",
]

_C0_C1: Final = "\x00-\x08\x0b-\x1f\x7f-\x9f"
_SEPARATORS: Final = "\u2028\u2029"
_MULTILINE_RE: Final = re.compile(f"[{_C0_C1}{_SEPARATORS}]")
_ONE_LINE_RE: Final = re.compile(f"[\t\n{_C0_C1}{_SEPARATORS}]")
_NAMED: Final = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape_char(ch: str) -> str:
    return _NAMED.get(ch) or _hex_escape(ch)


def _hex_escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _hidden(text: str, multiline: bool) -> list[int]:
    """The indexes of the characters :func:`visible` escapes, in order."""
    pattern = _MULTILINE_RE if multiline else _ONE_LINE_RE
    found = [m.start() for m in pattern.finditer(text)]
    invisible = invisible_at(text)
    if invisible:
        found = sorted(set(found).union(invisible))
    return found


def visible(text: str, *, multiline: bool = False) -> str:
    """``text`` with every control, separator and invisible character replaced by its escape.

    ``multiline=True`` (bodies) keeps ``\\n`` and ``\\t``; otherwise they are escaped too.
    """
    hidden = _hidden(text, multiline)
    if not hidden:
        return text
    return "".join(_escape_char(piece) if mark else piece for piece, mark in _runs(text, hidden))


def one_line(text: str) -> str:
    """``text`` on one line (an error's message for a log, a person's reason for the audit
    log): each run of white space, line breaks included, becomes one space, and none is left
    at either end."""
    return " ".join(text.split())


def error_line(exc: BaseException) -> str:
    """An exception for one log line: its message on one line, or its type's name when it
    has no message (``sqlite3.OperationalError()``, a bare ``OSError``)."""
    return one_line(str(exc)) or type(exc).__name__


def count_hidden(text: str, *, multiline: bool = False) -> int:
    """How many characters :func:`visible` would escape (to warn the person about them)."""
    return len(_hidden(text, multiline))


def for_terminal(text: str, *, multiline: bool = False) -> str:
    """What the CLI prints: :func:`visible`, and each right-to-left character
    (:mod:`kite_skills.rtl`) as its escape too (``\\u05c0``), so nothing in ``text`` can move
    the cursor, erase a line, set a window title, reorder or hide what the person reads (a
    terminal that does bidi would reverse a run of numbers between right-to-left
    characters, issue 38)."""
    shown = visible(text, multiline=multiline)
    runs = rtl_runs(shown)
    if not runs:
        return shown
    out: list[str] = []
    start = 0
    for low, high in runs:
        out += [shown[start:low], *(_hex_escape(ch) for ch in shown[low:high])]
        start = high
    out.append(shown[start:])
    return "".join(out)


def _runs(text: str, hidden: list[int]) -> list[tuple[str, bool]]:
    runs: list[tuple[str, bool]] = []
    start = 0
    for index in hidden:
        if index > start:
            runs.append((text[start:index], False))
        runs.append((text[index], True))
        start = index + 1
    if start < len(text):
        runs.append((text[start:], False))
    return runs


def split_hidden(text: str, *, multiline: bool = False) -> list[tuple[str, bool]]:
    """``text`` as runs of ``(piece, hidden)``: plain text as it is, and each character
    :func:`visible` would escape as its escape with ``hidden=True`` (so a page can mark it)."""
    return [
        (_escape_char(piece), True) if hidden else (piece, False)
        for piece, hidden in _runs(text, _hidden(text, multiline))
    ]


_QUOTED_ESCAPES: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200b-\u200d\u2060\ufeff\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def quoted(value: str, limit: int = 60) -> str:
    """``value`` quoted for an error message, cut short (with its length) when long; control
    and invisible characters appear as ``\\x1b`` / ``\\u202e``, never raw. Stricter than
    :func:`visible`: tabs and line feeds are ``\\x09`` / ``\\x0a``, a joiner is escaped even
    inside an emoji, and a lone surrogate is ``\\udcff``."""
    if len(value) <= limit:
        return "'" + _all_escaped(value) + "'"
    return "'" + _all_escaped(value[:limit]) + f"…' ({len(value)} characters)"


def _all_escaped(value: str) -> str:
    text = _QUOTED_ESCAPES.sub(lambda m: _hex_escape(m.group()), value)
    hidden = invisible_at(text)
    if not hidden:
        return text
    marks = set(hidden)
    return "".join(_hex_escape(ch) if i in marks else ch for i, ch in enumerate(text))


def decoded(value: object) -> str:
    """A value as SQLite returned it (the store reads text with ``surrogateescape``), as
    text: bytes that are not valid UTF-8 appear as ``\\xNN``; ``None`` as ``""``."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    if isinstance(value, str):
        if value.isascii() or not _LONE_SURROGATE.search(value):
            return value
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "" if value is None else str(value)


def wire_safe(text: str) -> str:
    """``text`` with each lone surrogate written as its escape (``\\ud800``): JSON's
    ``\\ud800`` decodes to one, and no UTF-8 encoder (the wire's) can write it."""
    if text.isascii() or not _LONE_SURROGATE.search(text):
        return text
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def clipped(value: object, limit: int = 100) -> str:
    """``value`` for a JSON-RPC error message: as text (``repr`` of anything else), cut short
    (with its length) when long, and never holding what the wire cannot carry
    (:func:`wire_safe`)."""
    text = wire_safe(value if isinstance(value, str) else repr(value))
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"


@lru_cache(maxsize=4096)
def local_time(stamp: str | None) -> str:
    """``2026-05-01T09:30:00.000000Z`` as the machine's local time, to the second
    (``2026-05-01 15:00:00 IST``); text that is no time stamp comes back as it is."""
    if not stamp:
        return ""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")


def body_lines(body: str) -> list[str]:
    """A body's lines as a person is shown them, numbered from 1 (a final line feed ends the
    last line; it starts no line of its own)."""
    lines = body.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


MIN_BLANK_RUN: Final = 3
"""A run of this many blank lines or more is shown as one line that says how many (issue 38:
400 blank lines pushed a body's last step out of the review box)."""


def blank_runs(lines: list[str]) -> dict[int, int]:
    """``{index of its first line: how many}`` for each run of at least
    :data:`MIN_BLANK_RUN` blank lines (nothing but white space)."""
    runs: dict[int, int] = {}
    start: int | None = None
    for index in range(len(lines) + 1):
        if index < len(lines) and not lines[index].strip():
            start = index if start is None else start
            continue
        if start is not None and index - start >= MIN_BLANK_RUN:
            runs[start] = index - start
        start = None
    return runs


def blank_lines(count: int, first: int | None = None) -> str:
    """What a collapsed run of blank lines says: ``400 blank lines (5–404)``."""
    where = "" if first is None else f" ({first}–{first + count - 1})"
    return f"{count} blank lines{where}"


def text_size(body: str) -> str:
    """A body's length, as a person is shown it beside publish and accept:
    ``404 lines, 1,520 bytes``."""
    count = len(body_lines(body))
    size = len(body.encode("utf-8", "surrogatepass"))
    return f"{count:,} line{'' if count == 1 else 's'}, {size:,} bytes"


def counted(number: int, noun: str) -> str:
    """``1 problem``, ``3 problems``: a count a person reads (nouns with a plain -s plural)."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
