"""Ranked search over a bounded candidate set, so a query costs about the same at 100,000 skills
as at 1,000, whatever its words.

bm25 over ``"a" OR "b"`` scores a skill with the sum of each phrase's contribution, and each
contribution depends only on the phrase, the skill and the whole table (its document frequency
and the average column lengths). So each phrase is scored by its own FTS5 query and the sums
are added up here. What bounds the cost: for each phrase only its ``PER_PHRASE`` newest skills
are scored. A phrase in fewer skills (every rare or topical word) is scored everywhere it
occurs, so the ranking is exactly bm25's; a phrase in more skills than that carries little
weight in bm25 (its inverse document frequency tends to zero as it nears every skill), and only
its newest skills are ranked for it — the newest 100 when it is in more than half of them.
Scoring one phrase is a single pass over the newest part of its doclist, with bm25's document
frequency computed once, not once per row. The last word matches as a prefix only while it is
not a whole word of the index (``compa`` finds ``compare``; ``fund`` stays ``fund``).

The index holds live skills only (migration 0005): drafts, which agents write, and archived
skills are not in it, so they never change what a search finds — neither the candidates (520
drafts saying a person's words once filled each word's newest 500 and hid the person's live
skill) nor the ranking (bm25's document frequencies), nor what a search costs.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Final

from . import _sql

PER_PHRASE: Final = 500
"""How many skills (the newest) are scored for one phrase at most."""
NEAR_EVERY_SKILL: Final = 100
"""How many are scored for a phrase in more than half of the newest skills. FTS5's bm25 gives
such a phrase an inverse document frequency of 1e-6 (its formula goes negative past half the
rows), so it cannot change the order of skills that match anything else; scoring its newest
100 keeps it findable alone, and scoring 500 would cost ~10 µs each (bm25 reads every
scored row's column sizes) for nothing."""
_BATCH: Final = 100


def _how_many(conn: sqlite3.Connection, phrase: str) -> int:
    """How many of the phrase's newest skills to score (0: it is in none)."""
    newest = conn.execute(_sql.SEARCH_PROBE, (phrase, PER_PHRASE + 1)).fetchall()
    if len(newest) <= PER_PHRASE:
        return len(newest)
    # How many skills of the index the newest PER_PHRASE cover: counted in the index, not in
    # rowids, so rows outside it (drafts, deleted skills) never make a word look rarer.
    bounds = (newest[PER_PHRASE - 1][0], newest[0][0], PER_PHRASE * 2)
    (span,) = conn.execute(_sql.INDEXED_BETWEEN, bounds).fetchone()
    return NEAR_EVERY_SKILL if PER_PHRASE * 2 > span else PER_PHRASE


def ranked(conn: sqlite3.Connection, phrases: list[str], limit: int) -> list[tuple[object, object]]:
    """The ``limit`` best live skills for any of ``phrases`` as raw ``(name, description)``
    rows, best first; ties by name (the store decodes and checks the text)."""
    scores: dict[int, float] = {}
    for phrase in phrases:
        if phrase.endswith("*") and conn.execute(_sql.SEARCH_PROBE, (phrase[:-1], 1)).fetchone():
            phrase = phrase[:-1]  # a whole word already: its prefix would merge every longer
            # word's doclist (~10 ms for a word in every skill), for a few more matches at most
        count = _how_many(conn, phrase)
        if count:
            for rowid, score in conn.execute(_sql.SEARCH_SCORES, (phrase, count)):
                scores[rowid] = scores.get(rowid, 0.0) + score
    order = sorted(scores, key=scores.__getitem__)  # bm25 is negative: lower is better
    found: list[tuple[float, str, str]] = []
    for start in range(0, len(order), _BATCH):
        if len(found) >= limit and scores[order[start]] > found[limit - 1][0]:
            break  # every skill left scores worse than the last one kept: no tie to settle
        batch = order[start : start + _BATCH]
        rows = conn.execute(_sql.LIVE_AMONG, (json.dumps(batch),)).fetchall()
        found.extend((scores[rowid], name, description) for rowid, name, description in rows)
        found.sort()
    return [(name, description) for _, name, description in found[:limit]]
