"""What an agent (an MCP client) may do to the store — the only writer the MCP server imports.

Saving never changes a skill's status: a new name becomes a draft, an agent's own draft (never
published, and its text written by an agent) takes the new text, and a save over any other
skill — one a person has published (live, archived, or moved back to draft) or a draft whose
text a person wrote — is a revision that waits beside its text for a person.
Unpublishing takes a live skill out of service; republishing puts back an archived skill a
person published before. Nothing here sets ``published_at`` or moves a draft to live: those
rows of :data:`.lifecycle.RULES` belong to ``Actor.HUMAN``, which this module never passes.
Every action records ``via="mcp"``.

:class:`AgentView` is the whole of what the MCP server is given: these actions, the reads an
agent may make (live skills only), the live skills' changes (:class:`~.live.LiveSkills`) and
what read receipts need. It holds the :class:`~.db.Store` and never hands it out, so the
draft boundary is a type as well as an import.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import Final, Self

from kite_skills import invocation

from . import _engine, _history
from ._validate import DEFAULT_LIMIT, check_body, check_description, check_name
from .db import MEMORY, Clock, Store
from .lifecycle import VIA_MCP, Action, Actor
from .live import LiveSkills
from .receipts import ReceiptWriter
from .records import ActionResult, Rejection, Revision, SaveOutcome, SaveResult, Skill, SkillSummary

__all__ = ["ActionResult", "AgentView", "SaveResult", "republish", "save", "unpublish"]

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

    When a person rejected this agent's previous proposal of the skill, or its new draft
    (and no agent saved it since), ``rejected`` says when, by whom and why, so the agent
    learns from it.

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


class AgentView:
    """What an agent (an MCP client) may see and do in one store, and nothing more: search
    and read the live skills, save drafts, unpublish and republish, follow the live skills'
    changes (:attr:`live`), and stamp and write read receipts. Safe to share between threads,
    as the store is."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._live = LiveSkills(store)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: Clock | None = None,
        command: str = invocation.NAME,
    ) -> AgentView:
        """Open the store at ``path`` (see :meth:`Store.open <.db.Store.open>`, which raises
        what it raises) and view it as an agent; :meth:`close` closes it."""
        return cls(Store.open(path, clock=clock, command=command))

    def close(self) -> None:
        """Close the store this view holds."""
        self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ---- reads: live skills only ---------------------------------------------------------

    def search(self, q: str, limit: int = DEFAULT_LIMIT) -> list[SkillSummary]:
        """Live skills matching ``q``, best first (:meth:`Store.search <.db.Store.search>`)."""
        return self._store.search(q, limit)

    def list_live(self, limit: int = DEFAULT_LIMIT) -> list[SkillSummary]:
        """Live skills sorted by name, names and descriptions only; ``limit`` 1–100."""
        return self._store.list_live(limit)

    def read_live(self, name: str) -> Skill:
        """The live skill ``name``; ``SkillNotLive`` for a draft or an archived one."""
        return self._store.read_live(name)

    def live_skills(self) -> list[Skill]:
        """Every live skill with its text, sorted by name; an unreadable one left out."""
        return self._store.live_skills()

    def live_names(self) -> list[str]:
        """Every live skill's name, sorted, read without any text (so even when one row's
        text cannot be read)."""
        return list(self._store.live_versions())

    @property
    def live(self) -> LiveSkills:
        """The live skills' listing and changes: the one judge of whether they changed."""
        return self._live

    # ---- the agent's actions -------------------------------------------------------------

    def save(self, name: str, description: str, body: str, *, who: str) -> SaveResult:
        """:func:`save`: a draft, or a revision that waits for a person."""
        return save(self._store, name, description, body, who=who)

    def unpublish(self, name: str, *, who: str) -> ActionResult:
        """:func:`unpublish`: live -> archived."""
        return unpublish(self._store, name, who=who)

    def republish(self, name: str, *, who: str) -> ActionResult:
        """:func:`republish`: archived -> live, for a skill a person published before."""
        return republish(self._store, name, who=who)

    # ---- read receipts -------------------------------------------------------------------

    def now(self) -> str:
        """The store clock as ISO-8601 UTC: when a read happened."""
        return self._store.now()

    @property
    def keeps_receipts(self) -> bool:
        """Whether read receipts can be written: a store in memory has no file that a second
        connection (the receipts' own) could open."""
        return self._store.path != MEMORY

    def receipt_writer(self) -> ReceiptWriter:
        """A writer of read receipts on a connection of its own to this store's file (see
        :mod:`.receipts`); only when :attr:`keeps_receipts`."""
        if not self.keeps_receipts:
            raise ValueError("a store in memory keeps no read receipts")
        return ReceiptWriter(self._store.path)
