"""What a person may do to the store, from the dashboard or the CLI (``via``: ``"dashboard"`` or
``"cli"``). Only these actions publish a draft or set ``published_at``. The MCP server must never
import this module (a test enforces it)."""

from __future__ import annotations

from collections.abc import Iterable

from kite_skills.errors import InvalidSkill

from . import _engine
from ._validate import check_body, check_description, check_name
from .db import Store
from .lifecycle import Action, Actor
from .records import ActionResult

__all__ = [
    "accept_revision",
    "archive",
    "delete",
    "edit",
    "import_skills",
    "move_to_draft",
    "publish",
    "reject_revision",
    "restore",
]


def _human(store: Store, action: Action, name: str, via: str, who: str) -> ActionResult:
    return _engine.apply(store, Actor.HUMAN, action, name, via=via, who=who)


def publish(store: Store, name: str, *, via: str, who: str) -> ActionResult:
    """Draft -> live; records the first publication in ``published_at``."""
    return _human(store, Action.PUBLISH, name, via, who)


def accept_revision(store: Store, name: str, *, via: str, who: str) -> ActionResult:
    """The proposed revision replaces the skill's text; the status is unchanged."""
    return _human(store, Action.ACCEPT, name, via, who)


def reject_revision(store: Store, name: str, *, via: str, who: str) -> ActionResult:
    """The proposed revision is dropped; the text is unchanged."""
    return _human(store, Action.REJECT, name, via, who)


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
    description: str | None = None,
    body: str | None = None,
    via: str,
    who: str,
) -> ActionResult:
    """Change the text directly (either part, or both); the status is unchanged."""
    check_name(name)
    new_description = None if description is None else check_description(name, description)
    new_body = None if body is None else check_body(name, body)
    if new_description is None and new_body is None:
        raise InvalidSkill(f"nothing to change in '{name}': give a new description, body or both")
    with store._write() as conn:
        current = _engine.current_text(conn, name)
        text = _engine.Text(
            current.description if new_description is None else new_description,
            current.body if new_body is None else new_body,
        )
        return _engine.apply_in(
            conn, store, Actor.HUMAN, Action.EDIT, name, via=via, who=who, text=text
        )


def import_skills(
    store: Store, skills: Iterable[tuple[str, str, str]], *, via: str, who: str
) -> int:
    """Add ``(name, description, body)`` skills straight into service, all in one transaction
    (all or nothing), one audit row each. Returns how many were added."""
    count = 0
    with store._write() as conn:
        for name, description, body in skills:
            check_name(name)
            text = _engine.Text(check_description(name, description), check_body(name, body))
            _engine.apply_in(
                conn, store, Actor.HUMAN, Action.IMPORT, name, via=via, who=who, text=text
            )
            count += 1
    return count
