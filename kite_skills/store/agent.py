"""What an agent (an MCP client) may do to the store — the only writer the MCP server imports.

Saving never changes a skill's status: a new name becomes a draft, an agent's own draft (never
published, and its text written by an agent) takes the new text, and a save over any other
skill — one a person has published (live, archived, or moved back to draft) or a draft whose
text a person wrote — is a revision that waits beside its text for a person.
Unpublishing takes a live skill out of service; republishing puts back an archived skill a
person published before. Nothing here sets ``published_at`` or moves a draft to live: those
rows of :data:`.lifecycle.RULES` belong to ``Actor.HUMAN``, which this module never passes.
Every action records ``via="mcp"``.
"""

from __future__ import annotations

from typing import Final

from . import _engine, _history
from ._validate import check_body, check_description, check_name
from .db import Store
from .lifecycle import VIA_MCP, Action, Actor
from .records import ActionResult, Rejection, Revision, SaveOutcome, SaveResult

__all__ = ["ActionResult", "SaveResult", "republish", "save", "unpublish"]

_PENDING: Final = (
    "SELECT proposed_description, proposed_body, proposed_at, proposed_by FROM skills"
    " WHERE name = ? AND proposed_body IS NOT NULL"
)

_OUTCOMES: Final[dict[str, SaveOutcome]] = {
    "create": "created",
    "save_draft": "updated_draft",
    "propose": "proposed",
}


def save(store: Store, name: str, description: str, body: str, *, who: str) -> SaveResult:
    """Save a draft: a new name becomes a new draft; a draft no person has ever published and
    whose text an agent wrote gets the new text; any other skill (published by a person, or
    a draft a person wrote) gets a proposed revision beside its text, which is unchanged.

    A proposed revision that no person has reviewed yet is replaced, and the result says so
    (``replaced`` holds its text), so the agent never overwrites one silently.

    When a person rejected this agent's previous proposal of the skill (and no agent saved it
    since), ``rejected`` says when, by whom and why, so the agent learns from it.

    Raises ``InvalidSkill`` (nothing written) when the name, description or body breaks a rule.
    """
    check_name(name)
    text = _engine.Text(check_description(name, description), check_body(name, body))
    with store.transaction() as conn:
        pending = conn.execute(_PENDING, (name,)).fetchone()
        last = _history.last_rejection(conn, name)
        result = _engine.apply_in(
            conn, store, Actor.AGENT, Action.SAVE, name, via=VIA_MCP, who=who, text=text
        )
    status = result.to_status
    assert status is not None
    outcome = _OUTCOMES[result.action]
    replaced = None
    message = result.message
    if outcome == "proposed" and pending is not None:
        replaced = Revision(pending[0], pending[1], pending[2], pending[3] or "")
        message += (
            f". It replaced the revision proposed by {replaced.proposed_by} at "
            f"{replaced.proposed_at}, which no person had reviewed yet"
        )
    rejected = Rejection(*last) if last is not None else None
    return SaveResult(name, outcome, status, message, replaced, rejected)


def unpublish(store: Store, name: str, *, who: str) -> ActionResult:
    """Live -> archived. Already archived: ``changed=False`` and no audit row.
    A draft: ``IllegalTransition``. Unknown: ``UnknownSkill``."""
    return _engine.apply(store, Actor.AGENT, Action.UNPUBLISH, name, via=VIA_MCP, who=who)


def republish(store: Store, name: str, *, who: str) -> ActionResult:
    """Archived -> live, only for a skill a person published before (``published_at`` set).
    Already live: ``changed=False``. A draft (never published, or moved back to draft by a
    person): ``IllegalTransition`` pointing at the dashboard and the CLI."""
    return _engine.apply(store, Actor.AGENT, Action.REPUBLISH, name, via=VIA_MCP, who=who)
