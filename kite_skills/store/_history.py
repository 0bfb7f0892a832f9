"""Every text a skill has had, kept in ``skill_texts`` (migration 0006) by the lifecycle engine
in the same transaction as the change and its audit row.

A ``text`` row is written whenever a skill's own text is written (a new draft, an agent's
draft update, a person's edit or import, an accepted revision, an earlier text restored); it
carries the status the skill had then (``rejected`` once a person sent an agent's new draft
back, with their reason), and ``live_at`` once that text served as live. A
``proposal`` row is written for each proposed revision and later marked ``accepted``,
``rejected`` (with the person's reason) or ``replaced`` (by the agent's next proposal).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Final

from .lifecycle import LIVE, VIA_MCP, Effect, Rule

PENDING: Final = "pending"
ACCEPTED: Final = "accepted"
REJECTED: Final = "rejected"
REPLACED: Final = "replaced"


@dataclass(frozen=True)
class Text:
    """Already-validated description and body for CREATE, SET_TEXT and PROPOSE."""

    description: str
    body: str


_INSERT_TEXT: Final = (
    "INSERT INTO skill_texts (skill, kind, action, status, description, body, at, via, who,"
    " live_at) VALUES (?, 'text', ?, ?, ?, ?, ?, ?, ?, ?)"
)
# The accepted text, copied as it is now stored (it was the proposal a moment ago).
_INSERT_ACCEPTED: Final = (
    "INSERT INTO skill_texts (skill, kind, action, status, description, body, at, via, who,"
    " live_at) SELECT name, 'text', 'accept', status, description, body, ?, ?, ?,"
    " CASE WHEN status = 'live' THEN ? END FROM skills WHERE name = ?"
)
_INSERT_PROPOSAL: Final = (
    "INSERT INTO skill_texts (skill, kind, action, status, description, body, at, via, who)"
    " VALUES (?, 'proposal', 'propose', 'pending', ?, ?, ?, ?, ?)"
)
_DECIDE: Final = (
    "UPDATE skill_texts SET status = ?, decided_at = ?, decided_via = ?, decided_by = ?,"
    " reason = ? WHERE skill = ? AND kind = 'proposal' AND status = 'pending'"
)
# An agent's new draft sent back: its newest text (the draft's own) is marked rejected.
_DECIDE_DRAFT: Final = (
    "UPDATE skill_texts SET status = ?, decided_at = ?, decided_via = ?, decided_by = ?,"
    " reason = ? WHERE id = (SELECT max(id) FROM skill_texts WHERE skill = ? AND kind = 'text')"
)
MAX_UNREVIEWED: Final = 50
MAX_UNREVIEWED_BYTES: Final = 1024 * 1024
"""Per skill, the agent texts no person ever acted on that are kept: its draft updates that
never served as live and its proposals replaced before review, the newest ones, at most
:data:`MAX_UNREVIEWED` of them and :data:`MAX_UNREVIEWED_BYTES` of description and body
(UTF-8) together; the newest is always kept (one text is at most 68 KiB). Everything a person
saw or decided on (live texts, accepted and rejected proposals, rejected drafts, people's texts)
is kept whatever the count, so an agent saving in a loop cannot grow the store without bound;
what a deleted skill kept, a person forgets with :func:`forget` (``kite-skills skills purge``)."""
_UNREVIEWED: Final = (
    "skill = ? AND live_at IS NULL AND ((kind = 'text' AND via = ? AND action IN"
    " ('create', 'save_draft') AND decided_at IS NULL)"
    " OR (kind = 'proposal' AND status = 'replaced'))"
)
_PRUNE: Final = (
    f"DELETE FROM skill_texts WHERE id IN (SELECT id FROM skill_texts WHERE {_UNREVIEWED}"
    " ORDER BY id DESC LIMIT -1 OFFSET ?)"
)
# The running size from the newest down; a text that takes it past the bound goes, with
# every older one.
_PRUNE_BYTES: Final = (
    "DELETE FROM skill_texts WHERE id IN (SELECT id FROM (SELECT id, sum("
    "length(CAST(description AS BLOB)) + length(CAST(body AS BLOB))) OVER (ORDER BY id DESC)"
    f" AS kept FROM skill_texts WHERE {_UNREVIEWED}) WHERE kept > ?)"
)
_WENT_LIVE: Final = (
    "UPDATE skill_texts SET live_at = ? WHERE live_at IS NULL AND id = ("
    "SELECT max(id) FROM skill_texts WHERE skill = ? AND kind = 'text')"
)


def record(
    conn: sqlite3.Connection,
    rule: Rule,
    name: str,
    now: str,
    via: str,
    who: str,
    text: Text | None,
    reason: str,
) -> None:
    """Keep what ``rule`` (already applied) wrote or decided in the skill's history."""
    effect = rule.effect
    live_at = now if rule.to_state == LIVE else None
    if effect in (Effect.CREATE, Effect.SET_TEXT) and text is not None:
        conn.execute(
            _INSERT_TEXT,
            (
                name,
                rule.audit_action,
                rule.to_state,
                text.description,
                text.body,
                now,
                via,
                who,
                live_at,
            ),
        )
    elif effect is Effect.PROPOSE and text is not None:
        conn.execute(_DECIDE, (REPLACED, now, via, who, None, name))
        conn.execute(_INSERT_PROPOSAL, (name, text.description, text.body, now, VIA_MCP, who))
    elif effect is Effect.ACCEPT:
        proposer = conn.execute(
            "SELECT who FROM skill_texts WHERE skill = ? AND kind = 'proposal'"
            " AND status = 'pending' ORDER BY id DESC LIMIT 1",
            (name,),
        ).fetchone()
        conn.execute(_DECIDE, (ACCEPTED, now, via, who, None, name))
        conn.execute(_INSERT_ACCEPTED, (now, VIA_MCP, proposer[0] if proposer else "", now, name))
    elif effect is Effect.REJECT:
        conn.execute(_DECIDE, (REJECTED, now, via, who, reason or None, name))
    elif effect is Effect.REJECT_DRAFT:
        conn.execute(_DECIDE_DRAFT, (REJECTED, now, via, who, reason or None, name))
    elif effect is Effect.STATUS and live_at is not None:
        conn.execute(_WENT_LIVE, (now, name))
    if via == VIA_MCP and effect in (Effect.CREATE, Effect.SET_TEXT, Effect.PROPOSE):
        conn.execute(_PRUNE, (name, VIA_MCP, MAX_UNREVIEWED))
        conn.execute(_PRUNE_BYTES, (name, VIA_MCP, MAX_UNREVIEWED_BYTES))


def forget(conn: sqlite3.Connection, name: str) -> int:
    """Delete every text ``name`` had from the history; returns how many. The caller checks
    that no skill by that name exists (a person purges a deleted skill's texts)."""
    return conn.execute("DELETE FROM skill_texts WHERE skill = ?", (name,)).rowcount


_LAST_REJECTION: Final = (
    "SELECT t.kind, t.status, t.reason, t.decided_at, t.decided_by, t.live_at"
    " FROM skill_texts AS t WHERE t.skill = ? AND (t.kind = 'proposal' OR t.via = ?)"
    " ORDER BY t.id DESC LIMIT 1"
)


def last_rejection(conn: sqlite3.Connection, name: str) -> tuple[str, str, str, bool] | None:
    """``(reason, decided_at, decided_by, draft)`` when the newest thing an agent wrote for
    ``name`` is a proposal, or a new draft (``draft``), that a person rejected since the skill
    was created: what the agent's next save is told. None otherwise — after one more agent
    save the rejection is no longer the newest, so it is told once; and a rejected draft a
    person published after all was not rejected in the end."""
    row = conn.execute(_LAST_REJECTION, (name, VIA_MCP)).fetchone()
    if row is None or row[1] != REJECTED or row[5] is not None:
        return None
    created = conn.execute("SELECT created_at FROM skills WHERE name = ?", (name,)).fetchone()
    if created is None or str(row[3]) < str(created[0]):
        return None
    return (str(row[2] or ""), str(row[3]), str(row[4] or ""), row[0] == "text")
