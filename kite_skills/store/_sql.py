"""SQL text and the FTS query quoting. Identifiers are constants; values are always bound."""

from __future__ import annotations

from typing import Final

SKILL_COLUMNS: Final = (
    "name, description, body, status, created_at, updated_at, published_at, "
    "proposed_description, proposed_body, proposed_at, proposed_by, written_via, written_by"
)

SELECT_SKILL: Final = f"SELECT {SKILL_COLUMNS} FROM skills WHERE name = ?"
SELECT_ALL: Final = f"SELECT {SKILL_COLUMNS} FROM skills ORDER BY name"
ALL_NAMES: Final = "SELECT name FROM skills"
LIST_LIVE: Final = (
    "SELECT name, description FROM skills WHERE status = 'live' ORDER BY name LIMIT ?"
)
# CAST: a value another program stored as a BLOB still comes back as text (str).
LIVE_VERSIONS: Final = (
    "SELECT CAST(name AS TEXT), CAST(updated_at AS TEXT) FROM skills WHERE status = 'live'"
    " ORDER BY name"
)
LIVE_SUMMARIES: Final = "SELECT name, description FROM skills WHERE status = 'live' ORDER BY name"
# The same for some names only (``{}``: one ``?`` per name, at most NAMES_PER_QUERY).
LIVE_SUMMARIES_NAMED: Final = (
    "SELECT name, description FROM skills WHERE status = 'live' AND name IN ({})"
)
NAMES_PER_QUERY: Final = 500  # well under SQLite's limit of host parameters
# Search ranks with bm25, one query word (FTS phrase) at a time; a skill's score is the sum over
# the words it contains, which is what bm25 over the OR of all the words gives. Weights: a hit
# in the name counts most, then the description, then the body.
BM25_WEIGHTS: Final = "10.0, 4.0, 1.0"
# bm25 of one phrase for its newest skills (rowid descending, at most ``?``). FTS5 returns rows
# in rowid order itself, so only that many rows are read and scored, in one pass over the
# phrase's doclist with bm25's document frequency computed once, not once per row.
SEARCH_SCORES: Final = (
    f"SELECT rowid, bm25(skills_fts, {BM25_WEIGHTS}) FROM skills_fts"
    " WHERE skills_fts MATCH ? ORDER BY rowid DESC LIMIT ?"
)
# The rowids of the newest skills containing one phrase (how common is it, and how dense?).
SEARCH_PROBE: Final = (
    "SELECT rowid FROM skills_fts WHERE skills_fts MATCH ? ORDER BY rowid DESC LIMIT ?"
)
# How many skills of the index have a rowid in a range (counting stops at ``?``): its own row
# sizes table holds one row per indexed skill, so this reads at most that many rows.
INDEXED_BETWEEN: Final = (
    "SELECT count(*) FROM (SELECT 1 FROM skills_fts_docsize WHERE id BETWEEN ? AND ? LIMIT ?)"
)
# Names and descriptions of the live skills among candidate ids (a JSON array), looked up by
# primary key (CROSS JOIN keeps SQLite from scanning the status index instead). The index holds
# live skills only; the status test stays as a second guard.
LIVE_AMONG: Final = (
    "SELECT s.id, s.name, s.description FROM json_each(?) AS c"
    " CROSS JOIN skills AS s ON s.id = c.value WHERE s.status = 'live'"
)
AUDIT_COLUMNS: Final = "id, at, skill, action, from_status, to_status, via, who, detail, revision"
AUDIT_ALL: Final = f"SELECT {AUDIT_COLUMNS} FROM audit_log ORDER BY id DESC LIMIT ?"
AUDIT_FOR: Final = f"SELECT {AUDIT_COLUMNS} FROM audit_log WHERE skill = ? ORDER BY id DESC LIMIT ?"
AUDIT_VIA: Final = f"SELECT {AUDIT_COLUMNS} FROM audit_log WHERE via = ? ORDER BY id DESC LIMIT ?"
AUDIT_FOR_VIA: Final = (
    f"SELECT {AUDIT_COLUMNS} FROM audit_log WHERE skill = ? AND via = ? ORDER BY id DESC LIMIT ?"
)
INSERT_AUDIT: Final = (
    "INSERT INTO audit_log (at, skill, action, from_status, to_status, via, who, detail,"
    " revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
# Every revision id a skill's audit rows name (the texts it has held since issue 23).
AUDIT_REVISIONS: Final = (
    "SELECT DISTINCT revision FROM audit_log WHERE skill = ? AND revision IS NOT NULL"
)


MIN_PREFIX_CHARS: Final = 3


# Words too common in questions to say what a person is looking for ("how do I ...").
STOPWORDS: Final = frozenset(
    "a about all an and any are as at be by can could do does for from has have how i if in"
    " into is it its me much my of on or our should so than that the their them then there"
    " this to was we what when where which who why will with would you your".split()
)


def fts_phrases(q: str) -> list[str]:
    """Turn any user text into safe FTS5 phrases, one per word (duplicates dropped, order kept);
    ``[]`` when it has nothing to search for.

    Each whitespace-separated word becomes an FTS string (``"`` doubled), so operators such as
    ``AND``, ``NEAR(``, ``-``, ``*`` and parentheses are searched as text, never parsed. Words
    with no letter or digit are dropped (they would be empty phrases), and so are
    :data:`STOPWORDS` unless the query has nothing else. The last word also matches as a prefix
    when it has at least 3 letters or digits, so a query typed so far (``compa``) finds
    ``compare-funds``; shorter prefixes would expand to most of the index. (The search uses the
    prefix only while the word is not a whole word of the index: see :mod:`._search`.)
    """
    words = [w for w in q.split() if any(ch.isalnum() for ch in w)]
    if not words:
        return []
    quoted = ['"' + w.replace('"', '""') + '"' for w in words]
    if sum(ch.isalnum() for ch in words[-1]) >= MIN_PREFIX_CHARS:
        quoted[-1] += "*"
    meaningful = [p for w, p in zip(words, quoted, strict=True) if w.lower() not in STOPWORDS]
    return list(dict.fromkeys(meaningful or quoted))


# The history of texts (migration 0006), newest first; and one of them by id.
HISTORY_COLUMNS: Final = (
    "id, skill, kind, action, status, description, body, at, via, who, live_at, decided_at,"
    " decided_via, decided_by, reason"
)
HISTORY_FOR: Final = (
    f"SELECT {HISTORY_COLUMNS} FROM skill_texts WHERE skill = ? ORDER BY id DESC LIMIT ?"
)
HISTORY_ONE: Final = f"SELECT {HISTORY_COLUMNS} FROM skill_texts WHERE skill = ? AND id = ?"
# Read receipts (migration 0006): newest first.
READS_ALL: Final = "SELECT kind, item, client, via, at FROM read_receipts ORDER BY at DESC LIMIT ?"
READS_FOR: Final = (
    "SELECT kind, item, client, via, at FROM read_receipts WHERE kind = ? AND item = ?"
    " ORDER BY at DESC"
)
