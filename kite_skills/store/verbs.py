"""The person's verbs: what each word a person types (``kite-skills skills draft``) or clicks
(the dashboard's Draft button) does, as one table both doors read (issue 40).

Each :class:`Verb` names its lifecycle action, the typed library call it runs (a function of
:mod:`.human`, called by name in :func:`_publish` … below, so a reader follows each call), what
the call needs besides the skill's name (the revision the person reviewed, a reason), whether a
person is asked before it is done, and what it means (the CLI's help; the dashboard's button
title is the lifecycle table's meaning of the action).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Final

from . import human
from .db import Store
from .lifecycle import Action
from .records import ActionResult


class Needs(Enum):
    """What a verb's call needs besides the skill's name, the door and the person."""

    NOTHING = "nothing"
    REVISION = "revision"  # the full id of the text the person reviewed
    PROPOSED_REVISION = "proposed revision"  # the full id of the proposal they reviewed
    REASON = "reason"  # optional words for the agent's next save

    @property
    def names_a_revision(self) -> bool:
        return self in (Needs.REVISION, Needs.PROPOSED_REVISION)


@dataclass(frozen=True)
class Asked:
    """One request of a person at a door: who, through which door, and what they gave."""

    via: str
    who: str
    rev: str = ""
    reason: str = ""


@dataclass(frozen=True)
class Verb:
    word: str
    action: Action
    run: Callable[[Store, str, Asked], ActionResult]
    needs: Needs
    asks_first: bool  # a person confirms before it is done (a question page, the terminal)
    meaning: str


def _publish(store: Store, name: str, asked: Asked) -> ActionResult:
    return human.publish(store, name, rev=asked.rev, via=asked.via, who=asked.who)


def _accept(store: Store, name: str, asked: Asked) -> ActionResult:
    return human.accept_revision(store, name, rev=asked.rev, via=asked.via, who=asked.who)


def _reject(store: Store, name: str, asked: Asked) -> ActionResult:
    return human.reject_revision(store, name, via=asked.via, who=asked.who, reason=asked.reason)


def _draft(store: Store, name: str, asked: Asked) -> ActionResult:
    return human.move_to_draft(store, name, via=asked.via, who=asked.who)


def _archive(store: Store, name: str, asked: Asked) -> ActionResult:
    return human.archive(store, name, via=asked.via, who=asked.who)


def _restore(store: Store, name: str, asked: Asked) -> ActionResult:
    return human.restore(store, name, via=asked.via, who=asked.who)


def _delete(store: Store, name: str, asked: Asked) -> ActionResult:
    return human.delete(store, name, via=asked.via, who=asked.who)


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
