"""What a person may do to the store, from the dashboard or the CLI (``via``: ``"dashboard"`` or
``"cli"``). Only these actions publish a draft or set ``published_at``. The MCP server must never
import this module (a test enforces it)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable

from kite_skills.display import one_line, quoted
from kite_skills.errors import IllegalTransition, InvalidSkill, StaleRevision, StoreError

from . import _engine, _history, _sql, receipts
from ._validate import check_body, check_description, check_name, check_via, clean_who
from .db import Store
from .lifecycle import HUMAN_VIAS, Action, Actor
from .records import MIN_REVISION_PREFIX, REVISION_ID_CHARS, ActionResult, revision_id

__all__ = [
    "accept_revision",
    "archive",
    "check_reviewed",
    "create",
    "delete",
    "edit",
    "field_problems",
    "import_skills",
    "move_to_draft",
    "publish",
    "purge",
    "reject_revision",
    "resolve_revision",
    "restore",
    "revert",
    "set_read_receipts",
]

_HEX = re.compile("[0-9a-f]+")
_TEXTS = "SELECT description, body, proposed_description, proposed_body FROM skills WHERE name = ?"


def _human(store: Store, action: Action, name: str, via: str, who: str) -> ActionResult:
    return _engine.apply(store, Actor.HUMAN, action, name, via=via, who=who)


def _full_id(name: str, rev: str, current: str, command: str, kite: str) -> str:
    """``rev`` as a full revision id (lowercase), or ``StaleRevision`` when it is not one: the
    check compares every one of the 128 bits the person was shown, never a prefix."""
    given = rev.strip().lower()
    if not given:
        raise StaleRevision(
            name,
            rev,
            current,
            f"no revision id given for '{name}': name the revision you reviewed (it is now "
            f"{current}, as '{kite} skills {command} {name}' shows); nothing changed",
        )
    if len(given) != REVISION_ID_CHARS or not _HEX.fullmatch(given):
        raise StaleRevision(
            name,
            rev,
            current,
            f"{quoted(given, 40)} is not a full revision id of '{name}': give all "
            f"{REVISION_ID_CHARS} hex digits that '{kite} skills {command} {name}' "
            f"shows (the CLI expands a prefix of {MIN_REVISION_PREFIX} or more digits when it "
            "is unambiguous); "
            "nothing changed",
        )
    return given


def _check_reviewed(
    conn: sqlite3.Connection, name: str, rev: str, *, proposed: bool, command: str, kite: str
) -> None:
    """Refuse (``StaleRevision``) unless the text the person is acting on is revision ``rev``
    (the full id: every digit is compared)."""
    row = conn.execute(_TEXTS, (check_name(name),)).fetchone()
    if row is None:
        return  # apply_in raises UnknownSkill
    description, body = (row[2], row[3]) if proposed else (row[0], row[1])
    if body is None:
        if proposed:
            raise StaleRevision(
                name,
                rev,
                None,
                f"cannot accept revision {rev} of '{name}': it has no proposed revision any "
                "more (it was accepted or rejected since you reviewed it); nothing changed",
            )
        return
    current = revision_id(description, body)
    if _full_id(name, rev, current, command, kite) != current:
        what = "proposed revision" if proposed else "text"
        raise StaleRevision(
            name,
            rev,
            current,
            f"the {what} of '{name}' changed since you reviewed it (you reviewed revision "
            f"{rev}, it is now {current}); nothing changed — review it again with "
            f"'{kite} skills {command} {name}' (or reload its dashboard page) and "
            f"{'accept' if proposed else 'publish'} revision {current} if it is what you want",
        )


def publish(store: Store, name: str, *, rev: str, via: str, who: str) -> ActionResult:
    """Draft -> live; records the first publication in ``published_at``.

    ``rev``: the full revision id of the text the person reviewed (``Skill.revision``); when
    the text is no longer that revision, or ``rev`` is not a full id, ``StaleRevision`` and
    nothing changes. Checked inside the write transaction.
    """
    with store.transaction() as conn:
        _check_reviewed(conn, name, rev, proposed=False, command="show", kite=store.command)
        return _engine.apply_in(conn, store, Actor.HUMAN, Action.PUBLISH, name, via=via, who=who)


def accept_revision(store: Store, name: str, *, rev: str, via: str, who: str) -> ActionResult:
    """The proposed revision replaces the skill's text; the status is unchanged.

    ``rev``: the full revision id of the proposed text the person reviewed
    (``Revision.revision``); a different or missing proposal, or a ``rev`` that is not a full
    id, raises ``StaleRevision`` and nothing changes.
    """
    with store.transaction() as conn:
        _check_reviewed(conn, name, rev, proposed=True, command="diff", kite=store.command)
        return _engine.apply_in(conn, store, Actor.HUMAN, Action.ACCEPT, name, via=via, who=who)


def check_reviewed(store: Store, name: str, rev: str, *, proposed: bool) -> None:
    """Refuse now (``StaleRevision``) unless ``rev`` is still the text (``proposed``: the
    proposed revision) of ``name``: the CLI asks before it has the person confirm at the
    terminal; :func:`publish` and :func:`accept_revision` check again in their transaction."""
    with store.transaction() as conn:
        command = "diff" if proposed else "show"
        _check_reviewed(conn, name, rev, proposed=proposed, command=command, kite=store.command)


def resolve_revision(store: Store, name: str, given: str, *, proposed: bool) -> str:
    """The full revision id a person means by ``given`` (for the CLI, where people type):
    a full id as it is; a prefix of at least 8 hex digits expanded to the current text's
    (``proposed``: the proposed revision's) full id, only when no other text ``name`` has
    held or been proposed as starts with it (an agent that made two texts share a prefix
    makes that prefix refused). The publish or accept that follows still compares the full
    id inside its transaction. Raises ``StaleRevision`` (nothing changes)."""
    kite = store.command
    skill = store.get(name)
    target = skill.proposed.revision if proposed and skill.proposed else skill.revision
    command = "diff" if proposed else "show"
    typed = given.strip().lower()
    if len(typed) >= REVISION_ID_CHARS or not _HEX.fullmatch(typed or "-"):
        return typed
    if len(typed) < MIN_REVISION_PREFIX:
        raise StaleRevision(
            name,
            given,
            target,
            f"revision '{typed}' is too short: type at least {MIN_REVISION_PREFIX} of the "
            f"{REVISION_ID_CHARS} hex digits that '{kite} skills {command} {name}' shows; "
            "nothing changed",
        )
    matches = sorted(r for r in store.revisions_held(name) if r.startswith(typed))
    if len(matches) > 1:
        raise StaleRevision(
            name,
            given,
            target,
            f"revision '{typed}' is ambiguous: {len(matches)} texts '{name}' has held start "
            f"with it ({', '.join(matches)}); give the full id that '{kite} skills "
            f"{command} {name}' shows; nothing changed",
        )
    if not matches:
        raise StaleRevision(
            name,
            given,
            target,
            f"no revision of '{name}' starts with '{typed}' (it is now {target}); review it "
            f"with '{kite} skills {command} {name}'; nothing changed",
        )
    return matches[0]


MAX_REASON_CHARS = 1000
"""The longest reason a person may give for a rejection (the agent is told it)."""


def reject_revision(
    store: Store, name: str, *, via: str, who: str, reason: str = ""
) -> ActionResult:
    """The proposed revision is dropped; the text is unchanged. Without a proposed revision,
    an agent's new draft is sent back ("request changes"): it stays a draft, its text marked
    rejected in the history (deleting it is a separate act). ``reason`` (optional, one
    paragraph up to :data:`MAX_REASON_CHARS` characters) is kept in the skill's history and
    the audit log, and the agent's next save of the skill is told it, once."""
    text = one_line(reason or "")
    if len(text) > MAX_REASON_CHARS:
        raise InvalidSkill(
            f"the reason for rejecting '{name}' is {len(text)} characters; the limit is "
            f"{MAX_REASON_CHARS}: say in a few sentences what the agent should change; "
            "nothing changed"
        )
    return _engine.apply(store, Actor.HUMAN, Action.REJECT, name, via=via, who=who, reason=text)


def revert(store: Store, name: str, *, text_id: int, via: str, who: str) -> ActionResult:
    """An earlier text from the skill's history (``Store.history``; a text it held or a
    proposal, whatever became of it) becomes its text again, as a new revision written by
    this person; the status is unchanged, and the text it replaces stays in the history."""
    past = store.history_text(name, text_id)
    text = _engine.Text(check_description(name, past.description), check_body(name, past.body))
    current = store.get(name)
    if past.revision == current.revision:
        return ActionResult(
            name,
            Action.REVERT.value,
            current.status,
            current.status,
            False,
            f"text #{text_id} of '{name}' is its text already (revision {past.revision}); "
            "nothing changed",
        )
    return _engine.apply(store, Actor.HUMAN, Action.REVERT, name, via=via, who=who, text=text)


def purge(store: Store, name: str, *, via: str, who: str) -> ActionResult:
    """Forget every text a deleted skill had (its history, drafts and proposals included),
    so the space they took is reused; the audit log keeps its record, and this adds a
    ``purge`` row. Refused (``IllegalTransition``) while a skill by that name exists."""
    check_name(name)
    check_via(via, HUMAN_VIAS)
    with store.transaction() as conn:
        row = conn.execute("SELECT status FROM skills WHERE name = ?", (name,)).fetchone()
        if row is not None:
            raise IllegalTransition(
                name,
                f"cannot purge '{name}': it is {row[0]}, and a skill's history is kept while "
                f"it exists; delete it first ('{store.command} skills delete {name}'); "
                "nothing changed",
            )
        forgotten = _history.forget(conn, name)
        if not forgotten:
            return ActionResult(
                name, "purge", None, None, False, f"'{name}' keeps no texts; nothing changed"
            )
        detail = f"forgot {forgotten} text(s) of the deleted skill"
        conn.execute(
            _sql.INSERT_AUDIT,
            (store.now(), name, "purge", None, None, via, clean_who(who), detail, None),
        )
    return ActionResult(
        name,
        "purge",
        None,
        None,
        True,
        f"forgot the {forgotten} text(s) '{name}' had; the audit log keeps its record",
    )


def set_read_receipts(store: Store, on: bool) -> str:
    """Turn read receipts on or off. Off also forgets the receipts kept so far."""
    with store.transaction() as conn:
        receipts.set_recording(conn, on)
    if on:
        return "read receipts are on: the server records which client last read each skill"
    return "read receipts are off: nothing is recorded, and the receipts kept so far are deleted"


def move_to_draft(store: Store, name: str, *, via: str, who: str) -> ActionResult:
    """Live or archived -> draft: taken back for review; agents cannot republish it."""
    return _human(store, Action.MOVE_TO_DRAFT, name, via, who)


def archive(store: Store, name: str, *, via: str, who: str) -> ActionResult:
    """Live -> archived."""
    return _human(store, Action.ARCHIVE, name, via, who)


def restore(store: Store, name: str, *, via: str, who: str) -> ActionResult:
    """Archived -> live."""
    return _human(store, Action.RESTORE, name, via, who)


def delete(store: Store, name: str, *, via: str, who: str) -> ActionResult:
    """Remove the skill (any state). Its audit history stays."""
    return _human(store, Action.DELETE, name, via, who)


def edit(
    store: Store,
    name: str,
    *,
    rev: str,
    description: str | None = None,
    body: str | None = None,
    via: str,
    who: str,
) -> ActionResult:
    """Change the text directly (either part, or both); the status is unchanged.

    ``rev``: the full revision id of the text the person started from (what the editor
    opened); when the text changed since, ``StaleRevision`` and nothing changes (checked
    inside the write transaction, so an agent's save in between is never overwritten)."""
    check_name(name)
    new_description = None if description is None else check_description(name, description)
    new_body = None if body is None else check_body(name, body)
    if new_description is None and new_body is None:
        raise InvalidSkill(f"nothing to change in '{name}': give a new description, body or both")
    with store.transaction() as conn:
        current = _engine.current_text(conn, name, store.command)
        started = revision_id(current.description, current.body)
        if _full_id(name, rev, started, "show", store.command) != started:
            raise StaleRevision(
                name,
                rev,
                started,
                f"the text of '{name}' changed since you started editing it (you started "
                f"from revision {rev}, it is now {started}); nothing was saved — see the new "
                f"text with '{store.command} skills show {name}' (or its dashboard page) and edit "
                "that",
            )
        text = _engine.Text(
            current.description if new_description is None else new_description,
            current.body if new_body is None else new_body,
        )
        return _engine.apply_in(
            conn, store, Actor.HUMAN, Action.EDIT, name, via=via, who=who, text=text
        )


def create(
    store: Store, name: str, *, description: str, body: str, via: str, who: str
) -> ActionResult:
    """Write a new skill as a draft (validated exactly like an agent's save); a person then
    publishes it. An existing name: ``IllegalTransition``."""
    check_name(name)
    text = _engine.Text(check_description(name, description), check_body(name, body))
    return _engine.apply(store, Actor.HUMAN, Action.CREATE, name, via=via, who=who, text=text)


def field_problems(name: str, description: str, body: str) -> dict[str, str]:
    """Every rule the three fields break, by field (``name``, ``description``, ``body``):
    the same checks as an agent's save, for a form that shows each error next to its field."""
    problems: dict[str, str] = {}
    label = name or "the new skill"
    for field in ("name", "description", "body"):
        try:
            if field == "name":
                check_name(name)
            elif field == "description":
                check_description(label, description)
            else:
                check_body(label, body)
        except StoreError as exc:
            problems[field] = str(exc)
    return problems


def import_skills(
    store: Store,
    skills: Iterable[tuple[str, str, str]],
    *,
    live: bool = True,
    via: str,
    who: str,
) -> int:
    """Add ``(name, description, body)`` skills, all in one transaction (all or nothing), one
    audit row each: straight into service (``live=True``) or as drafts a person publishes
    later. Returns how many were added."""
    action = Action.IMPORT if live else Action.CREATE
    count = 0
    with store.transaction() as conn:
        for name, description, body in skills:
            check_name(name)
            text = _engine.Text(check_description(name, description), check_body(name, body))
            _engine.apply_in(conn, store, Actor.HUMAN, action, name, via=via, who=who, text=text)
            count += 1
    return count
