"""Text a person reads is shown, never executed: the one place that makes agent-written text
safe to put in front of a person.

Agent-written names, descriptions and bodies may hold characters that change what a terminal
or a page *shows* without being seen themselves: C0/C1 control characters (``ESC [2K`` erases
a line, ``CR`` returns to its start, ``BEL``, OSC sequences), bidirectional overrides that
reorder text (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, U+061C) and zero-width characters
(U+200B–U+200D, U+2060, U+FEFF). A store written by another tool can hold any of them, so every
adapter shows text through :func:`visible` (or :func:`for_terminal`), which replaces each such
character with its escape (``\\x1b``, ``\\r``, ``\\u202e``), as ``git`` quotes paths. Newlines
and tabs stay in multi-line text (bodies); in one-line text (names, descriptions) they are shown
escaped too. HTML escaping is the template engine's job (autoescape), on top of this.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["count_hidden", "for_terminal", "split_hidden", "visible"]

_BIDI_AND_INVISIBLE: Final = (
    "\u061c\u200b\u200c\u200d\u200e\u200f\u2028\u2029"
    "\u202a\u202b\u202c\u202d\u202e\u2060\u2061\u2062\u2063\u2064"
    "\u2066\u2067\u2068\u2069\ufeff"
)
_C0_C1: Final = "\x00-\x08\x0b-\x1f\x7f-\x9f"
_MULTILINE_RE: Final = re.compile(f"[{_C0_C1}{_BIDI_AND_INVISIBLE}]")
_ONE_LINE_RE: Final = re.compile(f"[\t\n{_C0_C1}{_BIDI_AND_INVISIBLE}]")
_NAMED: Final = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str, *, multiline: bool = False) -> str:
    """``text`` with every control, bidi and zero-width character replaced by its escape.

    ``multiline=True`` (bodies) keeps ``\\n`` and ``\\t``; otherwise they are escaped too.
    """
    pattern = _MULTILINE_RE if multiline else _ONE_LINE_RE
    return pattern.sub(_escape, text)


def count_hidden(text: str, *, multiline: bool = False) -> int:
    """How many characters :func:`visible` would escape (to warn the person about them)."""
    pattern = _MULTILINE_RE if multiline else _ONE_LINE_RE
    if pattern.search(text) is None:
        return 0
    return sum(1 for _ in pattern.finditer(text))


def for_terminal(text: str, *, multiline: bool = False) -> str:
    """What the CLI prints: :func:`visible`, so nothing in ``text`` can move the cursor,
    erase a line, set a window title or reorder what the person reads."""
    return visible(text, multiline=multiline)


def split_hidden(text: str, *, multiline: bool = False) -> list[tuple[str, bool]]:
    """``text`` as runs of ``(piece, hidden)``: plain text as it is, and each character
    :func:`visible` would escape as its escape with ``hidden=True`` (so a page can mark it)."""
    pattern = _MULTILINE_RE if multiline else _ONE_LINE_RE
    runs: list[tuple[str, bool]] = []
    start = 0
    for match in pattern.finditer(text):
        if match.start() > start:
            runs.append((text[start : match.start()], False))
        runs.append((_escape(match), True))
        start = match.end()
    if start < len(text):
        runs.append((text[start:], False))
    return runs
