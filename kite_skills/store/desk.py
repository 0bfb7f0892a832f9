"""What a person may do to the store, as a type: the person's one entry point (issue 40).

The CLI and the dashboard each make every write of a person through a :class:`PersonDesk`:
the verbs of :data:`.verbs.PERSON_VERBS`, writing a text (create, edit, import, revert),
purging a deleted skill's texts and the read-receipt setting. A desk is opened for one door
(``via``: the CLI or the dashboard, never the MCP server's) and one person, so a door never
passes either again, and each method calls the :mod:`.human` function of the same name: a
reader follows each call from a door to the store by name.

The agent's entry point is :class:`.agent.AgentView`, and the read receipts' is
:class:`.receipts.ReceiptWriter`, which only an ``AgentView`` hands out. The MCP server never
imports this module (``tests/server/test_user_skills_boundary.py``).
"""

from __future__ import annotations

from collections.abc import Iterable

from . import human
from ._validate import check_via
from .db import Store
from .lifecycle import HUMAN_VIAS
from .records import ActionResult


class PersonDesk:
    """A person's writes to one store through one door (``via``), audited under ``who``.
    The store stays the caller's: the desk neither opens nor closes it, and hands it to
    nobody."""

    def __init__(self, store: Store, *, via: str, who: str) -> None:
        self._store = store
        self._via = check_via(via, HUMAN_VIAS)  # an agent's door is never a person's
        self._who = who

    # ---- checks before a reviewed action (the CLI asks them before it has the person
    # confirm at the terminal; the action checks again in its transaction) ----------------

    def resolve_revision(self, name: str, given: str, *, proposed: bool) -> str:
        """:func:`.human.resolve_revision`: the full revision id a typed prefix means."""
        return human.resolve_revision(self._store, name, given, proposed=proposed)

    def check_reviewed(self, name: str, rev: str, *, proposed: bool) -> None:
        """:func:`.human.check_reviewed`: refuse now unless ``rev`` is still the text."""
        human.check_reviewed(self._store, name, rev, proposed=proposed)

    # ---- the verbs of PERSON_VERBS -------------------------------------------------------

    def publish(self, name: str, *, rev: str) -> ActionResult:
        """:func:`.human.publish`: draft -> live, for the revision the person reviewed."""
        return human.publish(self._store, name, rev=rev, via=self._via, who=self._who)

    def accept_revision(self, name: str, *, rev: str) -> ActionResult:
        """:func:`.human.accept_revision`: the reviewed proposal becomes the text."""
        return human.accept_revision(self._store, name, rev=rev, via=self._via, who=self._who)

    def reject_revision(self, name: str, *, reason: str = "") -> ActionResult:
        """:func:`.human.reject_revision`: the waiting text is sent back, with ``reason``."""
        return human.reject_revision(self._store, name, via=self._via, who=self._who, reason=reason)

    def move_to_draft(self, name: str) -> ActionResult:
        """:func:`.human.move_to_draft`: taken back for review."""
        return human.move_to_draft(self._store, name, via=self._via, who=self._who)

    def archive(self, name: str) -> ActionResult:
        """:func:`.human.archive`: live -> archived."""
        return human.archive(self._store, name, via=self._via, who=self._who)

    def restore(self, name: str) -> ActionResult:
        """:func:`.human.restore`: archived -> live."""
        return human.restore(self._store, name, via=self._via, who=self._who)

    def delete(self, name: str) -> ActionResult:
        """:func:`.human.delete`: the skill goes; its audit history stays."""
        return human.delete(self._store, name, via=self._via, who=self._who)

    # ---- text and what a deleted skill kept ---------------------------------------------

    def create(self, name: str, *, description: str, body: str) -> ActionResult:
        """:func:`.human.create`: a new draft written by the person."""
        return human.create(
            self._store, name, description=description, body=body, via=self._via, who=self._who
        )

    def edit(
        self, name: str, *, rev: str, description: str | None = None, body: str | None = None
    ) -> ActionResult:
        """:func:`.human.edit`: new text over the revision the editor opened."""
        return human.edit(
            self._store,
            name,
            rev=rev,
            description=description,
            body=body,
            via=self._via,
            who=self._who,
        )

    def import_skills(self, skills: Iterable[tuple[str, str, str]], *, live: bool) -> int:
        """:func:`.human.import_skills`: all or nothing, live or as drafts."""
        return human.import_skills(self._store, skills, live=live, via=self._via, who=self._who)

    def revert(self, name: str, *, text_id: int) -> ActionResult:
        """:func:`.human.revert`: an earlier text becomes the text again."""
        return human.revert(self._store, name, text_id=text_id, via=self._via, who=self._who)

    def purge(self, name: str) -> ActionResult:
        """:func:`.human.purge`: forget every text a deleted skill had."""
        return human.purge(self._store, name, via=self._via, who=self._who)

    # ---- the person's settings -----------------------------------------------------------

    def set_read_receipts(self, on: bool) -> str:
        """:func:`.human.set_read_receipts`: recording on, or off (and forgotten)."""
        return human.set_read_receipts(self._store, on)
