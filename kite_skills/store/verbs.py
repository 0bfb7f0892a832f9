"""The person's verbs: what each word a person types (``kite-skills skills draft``) or clicks
(the dashboard's Draft button) does, as one table both doors read (issue 40).

Each :class:`Verb` names its lifecycle action, the typed call it runs (a method of the person's
:class:`~.desk.PersonDesk`, called by name in :func:`_publish` … below, so a reader follows
each call from a door to the store), what the call needs besides the skill's name (the
revision the person reviewed, a reason), whether a person is asked before it is done, and
what it means (the CLI's help; the dashboard's button title is the lifecycle table's meaning
of the action).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Final

from .desk import PersonDesk
from .lifecycle import Action
from .records import ActionResult


class Needs(Enum):
    """What a verb's call needs besides the skill's name (the desk knows the door and the
    person)."""

    NOTHING = "nothing"
    REVISION = "revision"  # the full id of the text the person reviewed
    PROPOSED_REVISION = "proposed revision"  # the full id of the proposal they reviewed
    REASON = "reason"  # optional words for the agent's next save

    @property
    def names_a_revision(self) -> bool:
        return self in (Needs.REVISION, Needs.PROPOSED_REVISION)


@dataclass(frozen=True)
class Asked:
    """What a person gave with one request besides the skill's name (what the verb needs)."""

    rev: str = ""
    reason: str = ""


@dataclass(frozen=True)
class Verb:
    word: str
    action: Action
    run: Callable[[PersonDesk, str, Asked], ActionResult]
    needs: Needs
    asks_first: bool  # a person confirms before it is done (a question page, the terminal)
    meaning: str


def _publish(desk: PersonDesk, name: str, asked: Asked) -> ActionResult:
    return desk.publish(name, rev=asked.rev)


def _accept(desk: PersonDesk, name: str, asked: Asked) -> ActionResult:
    return desk.accept_revision(name, rev=asked.rev)


def _reject(desk: PersonDesk, name: str, asked: Asked) -> ActionResult:
    return desk.reject_revision(name, reason=asked.reason)


def _draft(desk: PersonDesk, name: str, asked: Asked) -> ActionResult:
    return desk.move_to_draft(name)


def _archive(desk: PersonDesk, name: str, asked: Asked) -> ActionResult:
    return desk.archive(name)


def _restore(desk: PersonDesk, name: str, asked: Asked) -> ActionResult:
    return desk.restore(name)


def _delete(desk: PersonDesk, name: str, asked: Asked) -> ActionResult:
    return desk.delete(name)


PERSON_VERBS: Final[dict[str, Verb]] = {
    v.word: v
    for v in (
        Verb(
            word="publish",
            action=Action.PUBLISH,
            run=_publish,
            needs=Needs.REVISION,
            asks_first=False,
            meaning="put a draft into service",
        ),
        Verb(
            word="accept",
            action=Action.ACCEPT,
            run=_accept,
            needs=Needs.PROPOSED_REVISION,
            asks_first=False,
            meaning="accept a proposed revision",
        ),
        Verb(
            word="reject",
            action=Action.REJECT,
            run=_reject,
            needs=Needs.REASON,
            asks_first=False,
            meaning="send a waiting text back",
        ),
        Verb(
            word="draft",
            action=Action.MOVE_TO_DRAFT,
            run=_draft,
            needs=Needs.NOTHING,
            asks_first=False,
            meaning="take a skill back for review",
        ),
        Verb(
            word="archive",
            action=Action.ARCHIVE,
            run=_archive,
            needs=Needs.NOTHING,
            asks_first=False,
            meaning="take a live skill out of service",
        ),
        Verb(
            word="restore",
            action=Action.RESTORE,
            run=_restore,
            needs=Needs.NOTHING,
            asks_first=True,
            meaning="put an archived skill back",
        ),
        Verb(
            word="delete",
            action=Action.DELETE,
            run=_delete,
            needs=Needs.NOTHING,
            asks_first=True,
            meaning="delete a skill",
        ),
    )
}
"""Every verb a person has for a skill's state, by the word both doors use."""
