"""Ranked search over a bounded candidate set, so a query costs about the same at 100,000 skills
as at 1,000, whatever its words.

bm25 over ``"a" OR "b"`` scores a skill with the sum of each phrase's contribution, and each
contribution depends only on the phrase, the skill and the whole table (its document frequency
and the average column lengths). So each phrase is scored by its own FTS5 query and the sums
are added up here. What bounds the cost: for each phrase only its ``PER_PHRASE`` newest skills
are scored. A phrase in fewer skills (every rare or topical word) is scored everywhere it
occurs, so the ranking is exactly bm25's; a phrase in more skills than that carries little
weight in bm25 (its inverse document frequency tends to zero as it nears every skill), and only
its newest skills are ranked for it. Scoring one phrase is a single pass over the newest part of
its doclist, with bm25's document frequency computed once, not once per row.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Final

from . import _sql
from .records import SkillSummary

PER_PHRASE: Final = 1000
"""How many skills (the newest) are scored for one phrase at most."""
_BATCH: Final = 100


def ranked(conn: sqlite3.Connection, phrases: list[str], limit: int) -> list[SkillSummary]:
    """The ``limit`` best live skills for any of ``phrases``, best first; ties by name."""
    scores: dict[int, float] = {}
    for phrase in phrases:
        for rowid, score in conn.execute(_sql.SEARCH_SCORES, (phrase, PER_PHRASE)):
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
    return [SkillSummary(name, description) for _, name, description in found[:limit]]
