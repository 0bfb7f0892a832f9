"""Frozen records the store returns. Timestamps are ISO-8601 UTC strings ending in ``Z``."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Literal

from .lifecycle import DRAFT, LIVE, VIA_MCP

SaveOutcome = Literal["created", "updated_draft", "proposed"]

REVISION_ID_CHARS = 32
"""A revision id is 32 hex digits (128 bits) of SHA-256: finding two texts with the same id
is out of reach, where 12 digits (48 bits, before issue 23) took an agent 92 s on one core."""
MIN_REVISION_PREFIX = 8
"""The fewest hex digits the CLI accepts for a revision (it expands them to the full id)."""
SHORT_REVISION_CHARS = 12
"""How many hex digits lists, tables and buttons show of a revision id (the dashboard keeps
the full id on hover and in what is copied; a person confirms by the full id)."""


def short_revision(revision: str) -> str:
    """A revision id as lists show it: its first :data:`SHORT_REVISION_CHARS` digits."""
    return revision[:SHORT_REVISION_CHARS]


def revision_id(description: str, body: str) -> str:
    """The id naming one text (description and body): the first 32 hex digits (128 bits) of a
    SHA-256 over both. A person's publish or accept names the revision they reviewed, and the
    store compares the whole id, so a text changed after they looked is refused rather than
    put into service."""
    digest = hashlib.sha256()
    for part in (description, body):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()[:REVISION_ID_CHARS]


@dataclass(frozen=True)
class Author:
    """Who wrote a text: an agent (``via="mcp"``; ``who`` is the name its MCP client gave,
    which it chose itself) or a person (``via`` ``"cli"`` or ``"dashboard"``; ``who`` is the
    account that ran the dashboard or the CLI). ``via=""``: written before kite-skills
    recorded authors, and not found in the audit log."""

    via: str
    who: str

    @property
    def is_agent(self) -> bool:
        return self.via == VIA_MCP

    def label(self) -> str:
        """How a person is shown who wrote it. An agent's self-chosen name is quoted as data
        (``agent: "root (dashboard)" via MCP``), so it never reads like a person's row
        (``person: root via dashboard``)."""
        if self.is_agent:
            return f"agent: {json.dumps(self.who, ensure_ascii=False)} via MCP"
        if self.via:
            return f"person: {self.who} via {self.via}"
        return "unknown (written before kite-skills recorded who wrote each text)"


@dataclass(frozen=True)
class SkillSummary:
    """What agents see in a listing or search: never the body."""

    name: str
    description: str


@dataclass(frozen=True)
class Revision:
    """A proposed change to an existing skill, waiting for a person to accept or reject it."""

    description: str
    body: str
    proposed_at: str
    proposed_by: str

    @property
    def revision(self) -> str:
        """The revision id of the proposed text (see :func:`revision_id`)."""
        return revision_id(self.description, self.body)

    @property
    def author(self) -> Author:
        """Who proposed it: always an agent (only an MCP save proposes a revision)."""
        return Author(VIA_MCP, self.proposed_by)


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str
    status: str  # "draft" | "live" | "archived"
    created_at: str
    updated_at: str
    published_at: str | None
    """First activation by a person; None until then. Nothing an agent can call sets it."""
    proposed: Revision | None = None
    written_by: Author = Author("", "")
    """Who wrote the current text (an agent's save, a person's new/edit/import, or the agent
    whose proposal a person accepted)."""

    @property
    def revision(self) -> str:
        """The revision id of the current text (see :func:`revision_id`)."""
        return revision_id(self.description, self.body)

    @property
    def facts(self) -> dict[str, bool]:
        """What the lifecycle table matches a skill on besides its status:
        ``person_actions(skill.status, **skill.facts)``."""
        return {
            "proposed": self.proposed is not None,
            "published": self.published_at is not None,
            "agent_text": self.written_by.is_agent,
        }

    @property
    def waiting(self) -> bool:
        """Waiting for a person: a draft to publish, or a proposed revision to accept or
        reject. The one definition the dashboard's list, ``skills list --pending`` and
        ``skills review`` ask."""
        return self.status == DRAFT or self.proposed is not None

    def document(self) -> str:
        """The skill as a SKILL.md-style Markdown document: frontmatter, then the body.
        Values are written as JSON strings, which YAML 1.2 reads back unchanged."""
        return (
            f"---\nname: {json.dumps(self.name)}\ndescription: "
            f"{json.dumps(self.description, ensure_ascii=False)}\n---\n{self.body}"
            + ("" if self.body.endswith("\n") else "\n")
        )


@dataclass(frozen=True)
class AuditEntry:
    id: int
    at: str
    skill: str
    action: str
    from_status: str | None
    to_status: str | None
    via: str  # "mcp" | "dashboard" | "cli"
    who: str
    detail: str
    revision: str | None = None
    """The revision id of the text this action wrote (or accepted); None for actions that
    write no text and for rows written before issue 23."""

    @property
    def author(self) -> Author:
        return Author(self.via, self.who)


@dataclass(frozen=True)
class ActionResult:
    """The outcome of an allowed or no-op action. ``changed`` is False for a no-op (nothing
    written, no audit row); ``message`` is ready to show a person or an agent."""

    name: str
    action: str
    from_status: str | None
    to_status: str | None
    changed: bool
    message: str


@dataclass(frozen=True)
class SaveResult:
    """The outcome of :func:`kite_skills.store.agent.save`.

    ``outcome``: ``"created"`` (a new draft), ``"updated_draft"`` (the draft's text replaced)
    or ``"proposed"`` (a revision stored beside the live or archived text, which is unchanged).
    ``status`` is the skill's status afterwards (never changed by a save).
    """

    name: str
    outcome: SaveOutcome
    status: str
    message: str
    replaced: Revision | None = None
    """The unreviewed proposed revision this save replaced (None when there was none)."""
    rejected: Rejection | None = None
    """A person rejected the agent's previous proposal or draft of this skill (told once)."""


@dataclass(frozen=True)
class Rejection:
    """A person rejected an agent's last proposed revision, or its new draft (``draft``):
    what its next save is told."""

    reason: str
    """The person's reason ("" when they gave none)."""
    at: str
    by: str
    draft: bool = False


@dataclass(frozen=True)
class PastText:
    """One text a skill has had (its history, ``Store.history``): a text the skill held
    (``kind="text"``; ``status`` the skill's status when it was written, or ``rejected`` for
    an agent's new draft a person sent back; ``live_at`` once it served as live) or a
    proposed revision (``kind="proposal"``; ``status`` ``pending``, ``accepted``,
    ``rejected`` or ``replaced``), decided by ``decided_by`` with ``reason``."""

    id: int
    skill: str
    kind: str
    action: str
    status: str
    description: str
    body: str
    at: str
    written_by: Author
    live_at: str | None = None
    decided_at: str | None = None
    decided_by: Author | None = None
    reason: str | None = None

    @property
    def revision(self) -> str:
        return revision_id(self.description, self.body)

    def label(self) -> str:
        """``text #3 (draft, was live)``, ``proposal #4 (rejected)``: how lists name it."""
        if self.kind == "proposal":
            return f"proposal #{self.id} ({self.status})"
        live = ", served as live" if self.live_at and self.status != LIVE else ""
        return f"text #{self.id} ({self.status}{live})"


@dataclass(frozen=True)
class ReadReceipt:
    """An agent read a live skill or a catalog recipe: the newest read per client.
    ``kind`` ``skill`` (``item`` its name) or ``recipe`` (a help key or a ``skill://`` URI);
    ``via`` how (``help``, ``resources/read``, ``skillRead``, ``prompts/get``); ``client``
    the name the MCP client gave in ``initialize`` (it chose it itself)."""

    kind: str
    item: str
    client: str
    via: str
    at: str


@dataclass(frozen=True)
class Waiting:
    """A text that waits for a person, and who wrote it (:meth:`Store.waiting
    <kite_skills.store.Store.waiting>`, so every door names the same author)."""

    skill: Skill
    kind: str  # "draft" | "revision" | "sent-back" (a draft a person sent back to its agent)
    by: Author
    at: str
