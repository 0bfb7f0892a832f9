"""Which characters are right-to-left: the one rule the store's refusal and every display ask.

A browser (and a terminal that does bidi) lays out a line with the Unicode bidirectional
algorithm: a right-to-left character makes the run around it, numbers and punctuation
included, read from right to left. ``stop-loss ׀ 1200 ׀ target ׃ 900`` (U+05C0 and U+05C3 look
like ``|`` and ``:``) then shows the two numbers swapped, while an agent reads the characters
in the order they are stored (issue 38). A character is *right-to-left* here when its bidi
class (:func:`unicodedata.bidirectional`) is

- ``R`` (Hebrew, NKo, Samaritan, Mandaic, Adlam, … and their
  punctuation: U+05C0, U+05C3, U+05F3),
- ``AL`` (Arabic, Syriac, Thaana and their presentation forms), or
- ``AN`` (Arabic-Indic digits and separators, U+0600–U+0605: they pull the neutral
  characters between them into a right-to-left run even on a left-to-right line),

or when it is unassigned in the ranges whose unassigned code points Unicode gives a
right-to-left default class (DerivedBidiClass.txt), so a browser with a newer Unicode than this
Python's treats them as right-to-left too. Right-to-left controls (U+200F, U+061C, U+202B,
U+202E, U+2067) are invisible characters (:mod:`kite_skills.invisible`), refused and escaped
apart.

The displays show each run of such characters in stored order (the dashboard isolates it
left-to-right, the CLI prints its escapes), and the store refuses a line that mixes them with
left-to-right letters or European digits (:func:`mixed_at`), the lines where the reordering
deceives a reader who reads left to right.
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Final

__all__ = ["is_rtl", "lines_with_rtl", "mixed_at", "rtl_runs"]

RTL_CLASSES: Final = frozenset({"R", "AL", "AN"})
_DEFAULT_RTL: Final = (  # unassigned code points here default to R or AL (DerivedBidiClass.txt)
    (0x0590, 0x08FF),
    (0xFB1D, 0xFDFF),
    (0xFE70, 0xFEFF),
    (0x10800, 0x10FFF),
    (0x1E800, 0x1EFFF),
)
_FOLLOWERS: Final = frozenset({"NSM", "BN"})  # combining marks and joiners stay with their letter
_LEFT_TO_RIGHT: Final = frozenset({"L", "EN"})


@functools.lru_cache(maxsize=4096)
def is_rtl(ch: str) -> bool:
    """Whether ``ch`` is a right-to-left character (see the module doc)."""
    bidi = unicodedata.bidirectional(ch)
    if bidi in RTL_CLASSES:
        return True
    code = ord(ch)
    return not bidi and any(low <= code <= high for low, high in _DEFAULT_RTL)


def rtl_runs(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of right-to-left characters in ``text``, with the
    combining marks and joiners that follow one; nothing else (no space, no digit) joins a
    run. Cheap for ASCII text (the common case)."""
    if text.isascii():
        return []
    runs: list[tuple[int, int]] = []
    start = -1
    for index, ch in enumerate(text):
        if is_rtl(ch):
            if start < 0:
                start = index
        elif start >= 0 and unicodedata.bidirectional(ch) not in _FOLLOWERS:
            runs.append((start, index))
            start = -1
    if start >= 0:
        runs.append((start, len(text)))
    return runs


def lines_with_rtl(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` for each line of ``text`` that holds a right-to-left
    character (numbered from 1, as the dashboard's source and the CLI number them)."""
    if text.isascii():
        return []
    return [(n, line) for n, line in enumerate(text.split("\n"), start=1) if rtl_runs(line)]


def mixed_at(line: str) -> int | None:
    """Where the first right-to-left character of ``line`` is, when the line also holds a
    left-to-right letter (bidi class ``L``: Latin, Devanagari, …) or a European digit
    (``EN``: 0–9 and its kin); ``None`` when it holds no such mix."""
    runs = rtl_runs(line)
    if not runs:
        return None
    if any(unicodedata.bidirectional(ch) in _LEFT_TO_RIGHT for ch in line):
        return runs[0][0]
    return None
