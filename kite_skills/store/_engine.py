"""Applies one lifecycle rule: look the rule up, refuse or no-op, or write the change and its
audit row in one transaction. Used by both :mod:`.agent` and :mod:`.human`; the ``actor`` a
module passes decides which rows of :data:`.lifecycle.RULES` it can reach."""

from __future__ import annotations

import logging
import sqlite3

from kite_skills.display import decoded
from kite_skills.errors import IllegalTransition, InvalidSkill, UnknownSkill, UnreadableSkill

from . import _history, _sql
from ._history import Text as Text
from ._validate import check_name, check_via, clean_who
from .db import MAX_LOOKUP_CHARS, Store, valid_text
from .lifecycle import (
    ABSENT,
    DELETED,
    HUMAN_VIAS,
    VIA_MCP,
    Action,
    Actor,
    Effect,
    Outcome,
    Rule,
    find_rule,
)
from .records import ActionResult, revision_id

log = logging.getLogger(__name__)

_CURRENT = (
    "SELECT status, published_at, proposed_at, proposed_by, written_via,"
    " proposed_description, proposed_body FROM skills WHERE name = ?"
)


def current_text(conn: sqlite3.Connection, name: str, kite: str) -> Text:
    """The description and body of ``name`` (``UnknownSkill`` if absent); ``kite`` is the
    command that starts kite-skills here, as a refusal names it."""
    row = conn.execute(
        "SELECT description, body FROM skills WHERE name = ?", (check_name(name),)
    ).fetchone()
    if row is None:
        raise UnknownSkill(name)
    description, body = valid_text(row[0]), valid_text(row[1])
    if description is None or body is None:
        fields = [f for f, ok in (("description", description), ("body", body)) if ok is None]
        raise UnreadableSkill.bad_utf8(
            name,
            fields,
            "give both a new description and a new body, or delete it with "
            f"'{kite} skills delete {name}'",
        )
    return Text(description, body)


def apply(
    store: Store,
    actor: Actor,
    action: Action,
    name: str,
    *,
    via: str,
    who: str,
    text: Text | None = None,
    reason: str = "",
) -> ActionResult:
    """Apply one action in its own transaction (see :func:`apply_in`)."""
    with store.transaction() as conn:
        return apply_in(
            conn, store, actor, action, name, via=via, who=who, text=text, reason=reason
        )


def apply_in(
    conn: sqlite3.Connection,
    store: Store,
    actor: Actor,
    action: Action,
    name: str,
    *,
    via: str,
    who: str,
    text: Text | None = None,
    reason: str = "",
) -> ActionResult:
    """Apply one action inside the caller's open write transaction on ``conn``. A person may
    delete a row another tool wrote under a name kite-skills refuses (it is bound, never
    spliced into SQL). Every text written or proposed is kept in the skill's history
    (``skill_texts``); ``reason`` is a person's reason for a rejection."""
    try:
        check_name(name)
    except InvalidSkill:
        if action is not Action.DELETE or not isinstance(name, str):
            raise
        if len(name) > MAX_LOOKUP_CHARS or conn.execute(_CURRENT, (name,)).fetchone() is None:
            raise
    check_via(via, frozenset({VIA_MCP}) if actor is Actor.AGENT else HUMAN_VIAS)
    who = clean_who(who)
    row = conn.execute(_CURRENT, (name,)).fetchone()
    state = row[0] if row is not None else ABSENT
    published = row is not None and row[1] is not None
    agent_text = row is not None and row[4] == VIA_MCP
    proposed = row is not None and row[2] is not None
    rule = find_rule(action, actor, state, published, agent_text, proposed)
    if rule is None:
        if state == ABSENT and actor is Actor.AGENT:
            raise UnknownSkill(name, f"no skill named '{name}'; find one with the skills tool")
        if state == ABSENT:
            raise store.unknown(name)
        raise IllegalTransition(name, f"cannot {action.value} '{name}': it is {state}")
    message = rule.message.format(name=name, state=state, kite=store.command)
    if rule.outcome is Outcome.REFUSE:
        raise IllegalTransition(name, message)
    if rule.outcome is Outcome.NOOP:
        return ActionResult(name, rule.audit_action, state, state, False, message)
    now = store.now()
    detail = _change(conn, rule, name, now, via, who, text, row, store.command)
    _history.record(conn, rule, name, now, via, who, text, reason)
    if reason:
        detail += f"; reason: {reason}"
    from_status = None if state == ABSENT else state
    to_status = None if rule.to_state == DELETED else rule.to_state
    revision = _written_revision(rule, text, row)
    conn.execute(
        _sql.INSERT_AUDIT,
        (
            now,
            name,
            rule.audit_action,
            from_status,
            to_status,
            via,
            who,
            decoded(detail),
            revision,
        ),
    )
    log.debug("%s %s via %s by %s", rule.audit_action, name, via, who)
    return ActionResult(name, rule.audit_action, from_status, to_status, True, message)


_Row = tuple[str, str | None, str | None, str | None, str | None, object, object]


def _written_revision(rule: Rule, text: Text | None, row: _Row | None) -> str | None:
    """The revision id of the text the rule writes (or accepts), for the audit row."""
    if rule.effect in (Effect.CREATE, Effect.SET_TEXT, Effect.PROPOSE) and text is not None:
        return revision_id(text.description, text.body)
    if rule.effect is Effect.ACCEPT and row is not None:
        description, body = valid_text(row[5]), valid_text(row[6])
        if description is not None and body is not None:
            return revision_id(description, body)
    return None


def _change(
    conn: sqlite3.Connection,
    rule: Rule,
    name: str,
    now: str,
    via: str,
    who: str,
    text: Text | None,
    row: _Row | None,
    kite: str,
) -> str:
    """Write the rule's effect; return the audit detail (``kite``: the command a refusal
    names)."""
    effect = rule.effect
    if effect in (Effect.CREATE, Effect.SET_TEXT, Effect.PROPOSE):
        if text is None:
            raise AssertionError(f"{rule.action} needs text")
        sizes = f"description {len(text.description)} chars, body {len(text.body.encode())} bytes"
        if effect is Effect.CREATE:
            conn.execute(
                "INSERT INTO skills (name, description, body, status, created_at, updated_at,"
                " published_at, written_via, written_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    name,
                    text.description,
                    text.body,
                    rule.to_state,
                    now,
                    now,
                    now if rule.sets_published_at else None,
                    via,
                    who,
                ),
            )
            return sizes
        if effect is Effect.SET_TEXT:
            conn.execute(
                "UPDATE skills SET description = ?, body = ?, updated_at = ?, written_via = ?,"
                " written_by = ? WHERE name = ?",
                (text.description, text.body, now, via, who, name),
            )
            return sizes
        conn.execute(
            "UPDATE skills SET proposed_description = ?, proposed_body = ?, proposed_at = ?,"
            " proposed_by = ? WHERE name = ?",
            (text.description, text.body, now, who, name),
        )
        if row is not None and row[2] is not None:
            return f"{sizes}; replaces the proposal by {row[3]} at {row[2]}"
        return sizes
    assert row is not None
    if effect is Effect.ACCEPT:
        conn.execute(
            "UPDATE skills SET description = proposed_description, body = proposed_body,"
            " written_via = ?, written_by = proposed_by,"
            " proposed_description = NULL, proposed_body = NULL, proposed_at = NULL,"
            " proposed_by = NULL, updated_at = ? WHERE name = ?",
            (VIA_MCP, now, name),
        )
        return f"revision proposed by {row[3]} at {row[2]}"
    if effect is Effect.REJECT:
        conn.execute(
            "UPDATE skills SET proposed_description = NULL, proposed_body = NULL,"
            " proposed_at = NULL, proposed_by = NULL WHERE name = ?",
            (name,),
        )
        return f"revision proposed by {row[3]} at {row[2]}"
    if effect is Effect.REJECT_DRAFT:
        draft = current_text(conn, name, kite)
        return f"draft revision {revision_id(draft.description, draft.body)}"
    if effect is Effect.DELETE:
        conn.execute("DELETE FROM skills WHERE name = ?", (name,))
        return ""
    if rule.sets_published_at:
        conn.execute(
            "UPDATE skills SET status = ?, updated_at = ?,"
            " published_at = COALESCE(published_at, ?) WHERE name = ?",
            (rule.to_state, now, now, name),
        )
    else:
        conn.execute(
            "UPDATE skills SET status = ?, updated_at = ? WHERE name = ?",
            (rule.to_state, now, name),
        )
    return ""
