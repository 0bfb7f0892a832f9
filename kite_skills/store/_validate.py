"""Input rules for names, descriptions, bodies, search text and limits.

Every check looks at the length first, so a 10 MB argument is refused before anything else
touches it. Messages name the rule and say what to do.

Text a person will review must look on screen exactly as it is stored, so every text written
to the store (by an agent or a person) is refused when it holds a character that a terminal or
a browser would act on or hide: C0 and C1 control characters and DEL anywhere (a body may hold
line breaks and tabs, a description only tabs), and every invisible character anywhere
(:mod:`kite_skills.invisible`: Unicode format characters, category Cf, such as bidi marks and
overrides, zero-width and tag characters; and default-ignorable code points such as variation
selectors and Hangul fillers), except the joiners and selectors inside an emoji. Whoever shows
text written before these rules makes such characters visible (:mod:`kite_skills.display`).

A line that mixes right-to-left characters (:mod:`kite_skills.rtl`: Hebrew, Arabic, …, their
punctuation and Arabic-Indic digits) with left-to-right letters or European digits is refused
too: a browser or a terminal that does bidi reverses the run holding its numbers, so a reader
who reads left to right would see another line than the one an agent reads (issue 38). A line
written wholly in a right-to-left script stays writable.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from kite_skills.display import quoted
from kite_skills.errors import InvalidQuery, InvalidSkill
from kite_skills.invisible import invisible_at
from kite_skills.rtl import mixed_at
from kite_skills.skill_rules import MAX_DESCRIPTION_CHARS, NAME_RULE, is_skill_name

MAX_BODY_BYTES: Final = 64 * 1024
MAX_QUERY_CHARS: Final = 1000
MAX_WHO_CHARS: Final = 200
DEFAULT_LIMIT: Final = 20
MAX_LIMIT: Final = 100
MAX_AUDIT_LIMIT: Final = 10_000

_SEPARATORS: Final = "\u2028\u2029"
_LINE_BREAKS: Final = frozenset(f"\n\r\v\f\x1c\x1d\x1e\x85{_SEPARATORS}")

_C0_NAMES: Final = (
    "NUL SOH STX ETX EOT ENQ ACK BEL BS HT LF VT FF CR SO SI "
    "DLE DC1 DC2 DC3 DC4 NAK SYN ETB CAN EM SUB ESC FS GS RS US"
).split()
_C1_NAMES: Final = (
    "PAD HOP BPH NBH IND NEL SSA ESA HTS HTJ VTS PLD PLU RI SS2 SS3 "
    "DCS PU1 PU2 STS CCH MW SPA EPA SOS SGC SCI CSI ST OSC PM APC"
).split()
_C1_AND_DEL: Final = "\x7f-\x9f"
_INVISIBLE: Final = "\u200b-\u200d\u2060\ufeff\u202a-\u202e\u2066-\u2069"
BODY_FORBIDDEN: Final = re.compile(f"[\x00-\x08\x0b-\x1f{_C1_AND_DEL}{_SEPARATORS}]")
"""In a body: every control character except line feed and tab, and the line and paragraph
separators (a line break that is not \\n)."""
LINE_FORBIDDEN: Final = re.compile(f"[\x00-\x08\x0a-\x1f{_C1_AND_DEL}{_INVISIBLE}]")
"""In a name or a description: every control character but tab, bidi and zero-width ones (a
description is also checked for every invisible character, :func:`invisible_at`)."""
_LINE_CONTROLS: Final = re.compile(f"[\x00-\x08\x0a-\x1f{_C1_AND_DEL}]")


def char_name(ch: str) -> str:
    """``U+001B ESC``, ``U+202E RIGHT-TO-LEFT OVERRIDE``: a character named for a message."""
    code = ord(ch)
    if code < 0x20:
        label = _C0_NAMES[code]
    elif code == 0x7F:
        label = "DEL"
    elif 0x80 <= code <= 0x9F:
        label = _C1_NAMES[code - 0x80]
    else:
        label = unicodedata.name(ch, "") or "(unassigned)"
    return f"U+{code:04X} {label}"


def check_name(name: object) -> str:
    if not isinstance(name, str):
        raise InvalidSkill(f"skill name must be text, not {type(name).__name__}; {NAME_RULE}")
    if not is_skill_name(name):
        bad = LINE_FORBIDDEN.search(name) if len(name) <= MAX_DESCRIPTION_CHARS * 4 else None
        if bad is not None:
            raise InvalidSkill(
                f"skill name {quoted(name)} contains {char_name(bad.group())} at index "
                f"{bad.start()}, which would hide or rearrange text on screen: {NAME_RULE}"
            )
        raise InvalidSkill(f"skill name {quoted(name)} is not allowed: {NAME_RULE}")
    return name


def _position(text: str, index: int) -> str:
    """``line 3, column 7`` (both from 1; columns count characters)."""
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}"


def _first_hidden(field: str, text: str) -> int | None:
    """Where the first refused character of ``text`` is (a control or an invisible one)."""
    bad = (BODY_FORBIDDEN if field == "body" else _LINE_CONTROLS).search(text)
    invisible = invisible_at(text)
    found = [i for i in (bad.start() if bad else None, invisible[0] if invisible else None)]
    return min((i for i in found if i is not None), default=None)


def _refuse_characters(name: str, field: str, text: str, offset: int = 0) -> None:
    """Refuse characters a terminal or browser would act on or hide (see the module doc).
    ``offset``: where ``text`` starts in what the caller sent (a description is stripped)."""
    index = _first_hidden(field, text)
    if index is None:
        return
    ch = text[index]
    control = ord(ch) < 0xA0 or ch in _SEPARATORS
    if field == "body":
        where = _position(text, index)
        allowed = (
            "only line breaks (\\n) and tabs may appear in a body"
            if control
            else "a body holds visible text only (no bidi marks or overrides, no zero-width, "
            "tag or filler characters, no variation selectors outside an emoji)"
        )
    else:
        where = f"character {offset + index + 1}"
        allowed = (
            f"a {field} is one line of visible text (tabs allowed; no control, "
            "bidirectional-override, zero-width, tag or other invisible characters)"
        )
    kind = "a control character" if control else "an invisible character"
    hint = " (write line breaks as \\n alone)" if ch in _LINE_BREAKS and field == "body" else ""
    raise InvalidSkill(
        f"the {field} of '{name}' contains {kind}, {char_name(ch)}, at {where}: remove it"
        f"{hint} — {allowed}, so a person reviewing it sees exactly what is stored"
    )


def _refuse_mixed_lines(name: str, field: str, text: str, offset: int = 0) -> None:
    """Refuse a line that mixes right-to-left characters with left-to-right letters or
    European digits (see the module doc; the rule is :func:`kite_skills.rtl.mixed_at`)."""
    if text.isascii():
        return
    start = 0
    for line in text.split("\n"):
        index = mixed_at(line)
        if index is not None:
            at = start + index
            where = _position(text, at) if field == "body" else f"character {offset + at + 1}"
            raise InvalidSkill(
                f"the {field} of '{name}' mixes right-to-left characters with left-to-right "
                f"letters or digits ({char_name(line[index])} at {where}): a browser or a "
                "terminal reorders such a line, so a person could read its numbers swapped — "
                "write each line in one script: right-to-left text on a line of its own, "
                "with no Latin letters and no digits 0–9"
            )
        start += len(line) + 1


def _check_text(name: str, field: str, value: object) -> str:
    if not isinstance(value, str):
        raise InvalidSkill(f"the {field} of '{name}' must be text, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidSkill(
            f"the {field} of '{name}' is not valid Unicode text (it contains a lone surrogate); "
            "send it as UTF-8"
        ) from None
    return value


def check_description(name: str, description: object) -> str:
    """One line, 1–1024 characters; surrounding whitespace is dropped."""
    if isinstance(description, str) and len(description) > MAX_DESCRIPTION_CHARS * 4:
        raise InvalidSkill(
            f"the description of '{name}' is {len(description)} characters; the limit is "
            f"{MAX_DESCRIPTION_CHARS}: write one line saying when to use the skill"
        )
    sent = _check_text(name, "description", description)
    text = sent.strip()
    offset = len(sent) - len(sent.lstrip())
    if not text:
        raise InvalidSkill(
            f"the description of '{name}' is empty: write one line (up to "
            f"{MAX_DESCRIPTION_CHARS} characters) saying when to use the skill"
        )
    brk = next((i for i, ch in enumerate(text) if ch in _LINE_BREAKS), None)
    if brk is not None:
        raise InvalidSkill(
            f"the description of '{name}' has a line break, {char_name(text[brk])}, at "
            f"character {offset + brk + 1}: write it as one line (up to "
            f"{MAX_DESCRIPTION_CHARS} characters) and put details in the body"
        )
    if len(text) > MAX_DESCRIPTION_CHARS:
        raise InvalidSkill(
            f"the description of '{name}' is {len(text)} characters; the limit is "
            f"{MAX_DESCRIPTION_CHARS}: shorten it and put details in the body"
        )
    _refuse_characters(name, "description", text, offset)
    _refuse_mixed_lines(name, "description", text, offset)
    return text


def check_body(name: str, body: object) -> str:
    """Markdown, non-empty after stripping, at most 64 KiB of UTF-8."""
    if isinstance(body, str) and len(body) > MAX_BODY_BYTES:
        raise InvalidSkill(
            f"the body of '{name}' is {len(body)} characters, over the limit of "
            f"{MAX_BODY_BYTES} bytes (64 KiB) of UTF-8: shorten the procedure or split it "
            "into several skills"
        )
    text = _check_text(name, "body", body).replace("\r\n", "\n")
    _refuse_characters(name, "body", text)
    _refuse_mixed_lines(name, "body", text)
    if not text.strip():
        raise InvalidSkill(f"the body of '{name}' is empty: write the procedure in Markdown")
    size = len(text.encode("utf-8"))
    if size > MAX_BODY_BYTES:
        raise InvalidSkill(
            f"the body of '{name}' is {size} bytes of UTF-8; the limit is {MAX_BODY_BYTES} "
            "(64 KiB): shorten the procedure or split it into several skills"
        )
    return text


def check_limit(limit: object, maximum: int = MAX_LIMIT) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise InvalidQuery(
            f"limit must be a whole number from 1 to {maximum} (got {limit!r:.40}); "
            f"leave it out for {DEFAULT_LIMIT}"
        )
    return limit


def check_query(q: object) -> str:
    if not isinstance(q, str):
        raise InvalidQuery(f"search text must be a string, not {type(q).__name__}")
    if len(q) > MAX_QUERY_CHARS:
        raise InvalidQuery(
            f"search text is {len(q)} characters; the limit is {MAX_QUERY_CHARS}: "
            "search with a few words"
        )
    if "\x00" in q:
        raise InvalidQuery(
            f"search text contains a NUL character (U+0000) at character {q.index(chr(0)) + 1}:"
            " remove it and search with words"
        )
    return q


def check_via(via: str, allowed: frozenset[str]) -> str:
    if via not in allowed:
        # A programming error in an adapter, not user input: keep the traceback.
        raise ValueError(f"via must be one of {sorted(allowed)}, not {via!r}")
    return via


def clean_who(who: object) -> str:
    """Who did it, for the audit log: any text, cut to 200 characters, never empty."""
    text = who if isinstance(who, str) else ""
    text = "".join(ch if ch.isprintable() else " " for ch in text[:MAX_WHO_CHARS]).strip()
    return text or "unknown"
