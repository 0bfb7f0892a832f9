"""Input rules for names, descriptions, bodies, search text and limits.

Every check looks at the length first, so a 10 MB argument is refused before anything else
touches it. Messages name the rule and say what to do.
"""

from __future__ import annotations

import re
from typing import Final

from kite_skills.errors import InvalidQuery, InvalidSkill

MAX_NAME_CHARS: Final = 64
MAX_DESCRIPTION_CHARS: Final = 1024
MAX_BODY_BYTES: Final = 64 * 1024
MAX_QUERY_CHARS: Final = 1000
MAX_WHO_CHARS: Final = 200
DEFAULT_LIMIT: Final = 20
MAX_LIMIT: Final = 100
MAX_AUDIT_LIMIT: Final = 10_000

NAME_RE: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_LINE_BREAKS: Final = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
_NAME_RULE: Final = "use 1–64 lowercase letters, digits and single hyphens (e.g. 'compare-funds')"


def shown(value: str, limit: int = 60) -> str:
    """``value`` quoted for a message, cut short (with its length) when long."""
    if len(value) <= limit:
        return f"'{value}'"
    return f"'{value[:limit]}…' ({len(value)} characters)"


def check_name(name: object) -> str:
    if not isinstance(name, str):
        raise InvalidSkill(f"skill name must be text, not {type(name).__name__}; {_NAME_RULE}")
    if len(name) > MAX_NAME_CHARS or not NAME_RE.fullmatch(name):
        raise InvalidSkill(f"skill name {shown(name)} is not allowed: {_NAME_RULE}")
    return name


def _check_text(name: str, field: str, value: object) -> str:
    if not isinstance(value, str):
        raise InvalidSkill(f"the {field} of '{name}' must be text, not {type(value).__name__}")
    if "\x00" in value:
        raise InvalidSkill(f"the {field} of '{name}' contains a NUL character; remove it")
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
    text = _check_text(name, "description", description).strip()
    if not text:
        raise InvalidSkill(
            f"the description of '{name}' is empty: write one line (up to "
            f"{MAX_DESCRIPTION_CHARS} characters) saying when to use the skill"
        )
    if any(ch in _LINE_BREAKS for ch in text):
        raise InvalidSkill(
            f"the description of '{name}' has a line break: write it as one line (up to "
            f"{MAX_DESCRIPTION_CHARS} characters) and put details in the body"
        )
    if len(text) > MAX_DESCRIPTION_CHARS:
        raise InvalidSkill(
            f"the description of '{name}' is {len(text)} characters; the limit is "
            f"{MAX_DESCRIPTION_CHARS}: shorten it and put details in the body"
        )
    return text


def check_body(name: str, body: object) -> str:
    """Markdown, non-empty after stripping, at most 64 KiB of UTF-8."""
    if isinstance(body, str) and len(body) > MAX_BODY_BYTES:
        raise InvalidSkill(
            f"the body of '{name}' is {len(body)} characters, over the limit of "
            f"{MAX_BODY_BYTES} bytes (64 KiB) of UTF-8: shorten the procedure or split it "
            "into several skills"
        )
    text = _check_text(name, "body", body)
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
            f"search text contains a NUL character (position {q.index(chr(0)) + 1}); "
            "remove it and search with words"
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
