"""SQL text and the FTS query quoting. Identifiers are constants; values are always bound."""

from __future__ import annotations

from typing import Final

SKILL_COLUMNS: Final = (
    "name, description, body, status, created_at, updated_at, published_at, "
    "proposed_description, proposed_body, proposed_at, proposed_by"
)

SELECT_SKILL: Final = f"SELECT {SKILL_COLUMNS} FROM skills WHERE name = ?"
SELECT_ALL: Final = f"SELECT {SKILL_COLUMNS} FROM skills ORDER BY name"
LIST_LIVE: Final = (
    "SELECT name, description FROM skills WHERE status = 'live' ORDER BY name LIMIT ?"
)
LIVE_VERSIONS: Final = "SELECT name, updated_at FROM skills WHERE status = 'live' ORDER BY name"
# bm25 weights: a hit in the name counts most, then the description, then the body.
SEARCH_LIVE: Final = (
    "SELECT s.name, s.description FROM skills_fts"
    " JOIN skills AS s ON s.id = skills_fts.rowid"
    " WHERE skills_fts MATCH ? AND s.status = 'live'"
    " ORDER BY bm25(skills_fts, 10.0, 4.0, 1.0), s.name"
    " LIMIT ?"
)
AUDIT_COLUMNS: Final = "id, at, skill, action, from_status, to_status, via, who, detail"
AUDIT_ALL: Final = f"SELECT {AUDIT_COLUMNS} FROM audit_log ORDER BY id DESC LIMIT ?"
AUDIT_FOR: Final = f"SELECT {AUDIT_COLUMNS} FROM audit_log WHERE skill = ? ORDER BY id DESC LIMIT ?"
INSERT_AUDIT: Final = (
    "INSERT INTO audit_log (at, skill, action, from_status, to_status, via, who, detail)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


MIN_PREFIX_CHARS: Final = 3


def fts_match(q: str) -> str | None:
    """Turn any user text into a safe FTS5 query, or None when it has nothing to search for.

    Each whitespace-separated word becomes an FTS string (``"`` doubled), so operators such as
    ``AND``, ``NEAR(``, ``-``, ``*`` and parentheses are searched as text, never parsed. Words
    with no letter or digit are dropped (they would be empty phrases). The last word also
    matches as a prefix when it has at least 3 letters or digits, so a query typed so far
    (``compa``) finds ``compare-funds``; shorter prefixes would expand to most of the index.
    """
    words = [w for w in q.split() if any(ch.isalnum() for ch in w)]
    if not words:
        return None
    quoted = ['"' + w.replace('"', '""') + '"' for w in words]
    if sum(ch.isalnum() for ch in words[-1]) >= MIN_PREFIX_CHARS:
        quoted[-1] += "*"
    return " ".join(quoted)
