"""The skill lifecycle as one data table: every action, from every state, for every actor.

States are ``draft``, ``live`` and ``archived`` (plus ``ABSENT`` for a name not in the store).
Each :class:`Rule` says what one actor's action does from one state: it is allowed (and to which
state it moves), a no-op (nothing changes, no audit row), or refused (``IllegalTransition``).
The message template is the text shown to the caller in every case; placeholders are
``{name}``, ``{state}`` and ``{kite}`` (the command that starts kite-skills on this machine,
:attr:`Store.command <kite_skills.store.db.Store.command>`). An agent's messages never tell it
to run a command: they say what to ask the person.

Two actors exist. ``AGENT`` rules are what an MCP client may do through
:mod:`kite_skills.store.agent`; ``HUMAN`` rules are what a person does through
:mod:`kite_skills.store.human` (dashboard or CLI). Only human rules may set ``published_at`` or
move a skill into ``live`` from ``draft``, and an agent replaces the text only of a draft no
person ever published *and* whose current text an agent wrote (any other save, including one
over a person's own new draft, is a proposed revision) — :func:`_check_table` enforces both at
import time.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

DRAFT: Final = "draft"
LIVE: Final = "live"
ARCHIVED: Final = "archived"
STATES: Final[tuple[str, ...]] = (DRAFT, LIVE, ARCHIVED)
ABSENT: Final = "absent"
"""Pseudo-state: no skill by that name exists yet."""
DELETED: Final = "deleted"
"""Pseudo-state a ``delete`` moves to (the row is gone; the audit row says ``to_status`` NULL)."""

VIA_MCP: Final = "mcp"
VIA_CLI: Final = "cli"
VIA_DASHBOARD: Final = "dashboard"
HUMAN_VIAS: Final[frozenset[str]] = frozenset({VIA_CLI, VIA_DASHBOARD})
VIAS: Final[tuple[str, ...]] = (VIA_MCP, VIA_DASHBOARD, VIA_CLI)
"""Every way a change reaches the store, as the audit log's ``via`` column records it: an agent
over MCP, a person on the dashboard or with the CLI."""


class Actor(StrEnum):
    AGENT = "agent"
    HUMAN = "human"


class Action(StrEnum):
    """What the caller asked for (the audit ``action`` column is :attr:`Rule.audit`)."""

    SAVE = "save"  # agent: new draft, update a draft, or propose a revision
    UNPUBLISH = "unpublish"  # agent: live -> archived
    REPUBLISH = "republish"  # agent: archived (published before) -> live
    PUBLISH = "publish"  # human: draft -> live
    ACCEPT = "accept"  # human: proposed revision replaces the text
    REJECT = "reject"  # human: proposed revision is dropped, or an agent's new draft sent back
    MOVE_TO_DRAFT = "move_to_draft"  # human: live/archived -> draft
    ARCHIVE = "archive"  # human: live -> archived
    RESTORE = "restore"  # human: archived -> live
    EDIT = "edit"  # human: change the text directly
    DELETE = "delete"  # human: remove the skill
    IMPORT = "import"  # human: add a skill straight into service (bulk import)
    CREATE = "create"  # human: write a new skill as a draft (dashboard New, skills new/import)
    REVERT = "revert"  # human: an earlier text from the skill's history becomes its text


class Outcome(StrEnum):
    ALLOW = "allow"
    NOOP = "noop"
    REFUSE = "refuse"


class Effect(StrEnum):
    """What an allowed rule does to the row besides moving its status."""

    CREATE = "create"  # insert a new row with the given text
    SET_TEXT = "set_text"  # replace description/body
    PROPOSE = "propose"  # store a proposed revision beside the current text
    ACCEPT = "accept"  # proposed revision becomes the text
    REJECT = "reject"  # proposed revision is cleared
    REJECT_DRAFT = "reject_draft"  # an agent's new draft is sent back: its text stays, marked
    STATUS = "status"  # only the status (and timestamps) change
    DELETE = "delete"  # the row is removed


@dataclass(frozen=True)
class Rule:
    action: Action
    actor: Actor
    from_state: str
    outcome: Outcome
    message: str
    to_state: str | None = None
    effect: Effect = Effect.STATUS
    audit: str = ""
    """Audit ``action`` written when allowed (defaults to the action's value)."""
    published: bool | None = None
    """Match only skills whose ``published_at`` is set (True) / NULL (False); None = either."""
    agent_text: bool | None = None
    """Match only skills whose current text an agent wrote (True) / a person wrote or nobody
    knows who (False); None = either."""
    proposed: bool | None = None
    """Match only skills with (True) / without (False) a proposed revision; None = either."""
    sets_published_at: bool = False

    @property
    def audit_action(self) -> str:
        return self.audit or self.action.value


_ASK = (
    "ask the person to open their kite-skills dashboard (they can start it with: {kite} dashboard)"
)
_PUBLISH_HINT = "a person publishes it: " + _ASK + " and publish '{name}' there"
_ACCEPT_HINT = "a person accepts it: " + _ASK + " and accept the revision of '{name}' there"
NO_PROPOSAL: Final = (
    "'{name}' has no proposed revision; an agent proposes one by saving over a live or "
    "archived skill"
)
_DELETE_HINT = "delete it with '{kite} skills delete {name}' if you no longer want it"

A, H = Actor.AGENT, Actor.HUMAN
ALLOW, NOOP, REFUSE = Outcome.ALLOW, Outcome.NOOP, Outcome.REFUSE

RULES: Final[tuple[Rule, ...]] = (
    # ---- agent (MCP) --------------------------------------------------------------------
    Rule(
        Action.SAVE,
        A,
        ABSENT,
        ALLOW,
        "saved '{name}' as a new draft; agents cannot list or read it until " + _PUBLISH_HINT,
        to_state=DRAFT,
        effect=Effect.CREATE,
        audit="create",
    ),
    Rule(
        Action.SAVE,
        A,
        DRAFT,
        ALLOW,
        "updated the draft '{name}'; it stays a draft until " + _PUBLISH_HINT,
        to_state=DRAFT,
        effect=Effect.SET_TEXT,
        audit="save_draft",
        published=False,  # only a draft no person ever published
        agent_text=True,  # and whose text an agent wrote: an agent's own draft
    ),
    Rule(
        Action.SAVE,
        A,
        DRAFT,
        ALLOW,
        "saved a proposed revision of '{name}' beside its text, which is unchanged: a person "
        "wrote this draft, so only a person changes its text; " + _ACCEPT_HINT,
        to_state=DRAFT,
        effect=Effect.PROPOSE,
        audit="propose",
        published=False,
        agent_text=False,
    ),
    Rule(
        Action.SAVE,
        A,
        DRAFT,
        ALLOW,
        "saved a proposed revision of '{name}' beside its text, which is unchanged: a person "
        "published it before and moved it back to draft for review, so only a person changes "
        "its text; " + _ACCEPT_HINT,
        to_state=DRAFT,
        effect=Effect.PROPOSE,
        audit="propose",
        published=True,
    ),
    Rule(
        Action.SAVE,
        A,
        LIVE,
        ALLOW,
        "saved a proposed revision of '{name}' beside its live text, which keeps serving "
        "until " + _ACCEPT_HINT,
        to_state=LIVE,
        effect=Effect.PROPOSE,
        audit="propose",
    ),
    Rule(
        Action.SAVE,
        A,
        ARCHIVED,
        ALLOW,
        "saved a proposed revision of '{name}' beside its archived text; nothing changes "
        "until " + _ACCEPT_HINT,
        to_state=ARCHIVED,
        effect=Effect.PROPOSE,
        audit="propose",
    ),
    Rule(
        Action.UNPUBLISH,
        A,
        LIVE,
        ALLOW,
        "took '{name}' out of service (live -> archived); skillPublish puts it back",
        to_state=ARCHIVED,
    ),
    Rule(Action.UNPUBLISH, A, ARCHIVED, NOOP, "'{name}' is already archived; nothing changed"),
    Rule(
        Action.UNPUBLISH,
        A,
        DRAFT,
        REFUSE,
        "cannot unpublish '{name}': it is a draft, so it is not in service; nothing changed",
    ),
    Rule(
        Action.REPUBLISH,
        A,
        ARCHIVED,
        ALLOW,
        "put '{name}' back in service (archived -> live)",
        to_state=LIVE,
        published=True,
    ),
    Rule(
        Action.REPUBLISH,
        A,
        ARCHIVED,
        REFUSE,
        "cannot publish '{name}': a person has never put it into service; " + _PUBLISH_HINT,
        published=False,
    ),
    Rule(Action.REPUBLISH, A, LIVE, NOOP, "'{name}' is already live; nothing changed"),
    Rule(
        Action.REPUBLISH,
        A,
        DRAFT,
        REFUSE,
        "cannot publish '{name}': it is a draft that a person has never published; "
        + _PUBLISH_HINT,
        published=False,
    ),
    Rule(
        Action.REPUBLISH,
        A,
        DRAFT,
        REFUSE,
        "cannot publish '{name}': a person moved it back to draft for review, so only a "
        "person can publish it again; " + _PUBLISH_HINT,
        published=True,
    ),
    # ---- human (dashboard, CLI) -----------------------------------------------------------
    Rule(
        Action.PUBLISH,
        H,
        DRAFT,
        ALLOW,
        "published '{name}' (draft -> live)",
        to_state=LIVE,
        sets_published_at=True,
    ),
    Rule(Action.PUBLISH, H, LIVE, NOOP, "'{name}' is already live; nothing changed"),
    Rule(
        Action.PUBLISH,
        H,
        ARCHIVED,
        REFUSE,
        "cannot publish '{name}': it is archived; put it back with "
        "'{kite} skills restore {name}' (Restore on the dashboard)",
    ),
    Rule(
        Action.RESTORE,
        H,
        ARCHIVED,
        ALLOW,
        "restored '{name}' (archived -> live)",
        to_state=LIVE,
        sets_published_at=True,
    ),
    Rule(Action.RESTORE, H, LIVE, NOOP, "'{name}' is already live; nothing changed"),
    Rule(
        Action.RESTORE,
        H,
        DRAFT,
        REFUSE,
        "cannot restore '{name}': it is a draft; publish it with "
        "'{kite} skills publish {name}' (Publish on the dashboard)",
    ),
    Rule(Action.ARCHIVE, H, LIVE, ALLOW, "archived '{name}' (live -> archived)", to_state=ARCHIVED),
    Rule(Action.ARCHIVE, H, ARCHIVED, NOOP, "'{name}' is already archived; nothing changed"),
    Rule(
        Action.ARCHIVE,
        H,
        DRAFT,
        REFUSE,
        "cannot archive '{name}': it is a draft, so it is not in service; delete it with "
        "'{kite} skills delete {name}' if you no longer want it",
    ),
    Rule(
        Action.MOVE_TO_DRAFT,
        H,
        LIVE,
        ALLOW,
        "moved '{name}' back to draft (live -> draft); agents can no longer read it or publish it",
        to_state=DRAFT,
    ),
    Rule(
        Action.MOVE_TO_DRAFT,
        H,
        ARCHIVED,
        ALLOW,
        "moved '{name}' back to draft (archived -> draft); agents can no longer publish it",
        to_state=DRAFT,
    ),
    Rule(Action.MOVE_TO_DRAFT, H, DRAFT, NOOP, "'{name}' is already a draft; nothing changed"),
    # Reject without a proposal: only an agent's new draft (never published, its text an
    # agent's) is sent back with the person's reason; the draft stays until a person deletes it.
    Rule(
        Action.REJECT,
        H,
        DRAFT,
        ALLOW,
        "rejected the draft '{name}': it stays a draft, and the agent's next save of it is "
        "told your reason; " + _DELETE_HINT,
        to_state=DRAFT,
        effect=Effect.REJECT_DRAFT,
        audit="reject_draft",
        published=False,
        agent_text=True,
        proposed=False,
    ),
    Rule(
        Action.REJECT,
        H,
        DRAFT,
        REFUSE,
        "cannot reject '{name}': it has no proposed revision, and its text was written by a "
        "person, not an agent; edit it, or " + _DELETE_HINT,
        agent_text=False,
        proposed=False,
    ),
    Rule(
        Action.REJECT,
        H,
        DRAFT,
        REFUSE,
        NO_PROPOSAL + "; a person published this draft before, so only a proposed revision of "
        "it can be rejected",
        published=True,
        agent_text=True,
        proposed=False,
    ),
    *(
        Rule(Action.REJECT, H, state, REFUSE, NO_PROPOSAL, proposed=False)
        for state in (LIVE, ARCHIVED)
    ),
    *(
        rule
        for state in STATES
        for rule in (
            Rule(
                Action.ACCEPT,
                H,
                state,
                ALLOW,
                "accepted the proposed revision of '{name}'; it is now the text ({state})",
                to_state=state,
                effect=Effect.ACCEPT,
                proposed=True,
            ),
            Rule(Action.ACCEPT, H, state, REFUSE, NO_PROPOSAL, proposed=False),
            Rule(
                Action.REJECT,
                H,
                state,
                ALLOW,
                "rejected the proposed revision of '{name}'; the text is unchanged ({state})",
                to_state=state,
                effect=Effect.REJECT,
                proposed=True,
            ),
            Rule(
                Action.EDIT,
                H,
                state,
                ALLOW,
                "edited '{name}' ({state})",
                to_state=state,
                effect=Effect.SET_TEXT,
            ),
            Rule(
                Action.REVERT,
                H,
                state,
                ALLOW,
                "restored an earlier text of '{name}' as its text ({state}); the text it "
                "replaces stays in its history",
                to_state=state,
                effect=Effect.SET_TEXT,
            ),
            Rule(
                Action.DELETE,
                H,
                state,
                ALLOW,
                "deleted '{name}' (was {state})",
                to_state=DELETED,
                effect=Effect.DELETE,
            ),
            Rule(
                Action.IMPORT,
                H,
                state,
                REFUSE,
                "cannot import '{name}': a skill by that name already exists ({state})",
            ),
            Rule(
                Action.CREATE,
                H,
                state,
                REFUSE,
                "cannot create '{name}': a skill by that name already exists ({state}); "
                "edit it instead ('{kite} skills edit {name}', or Edit on the dashboard)",
            ),
        )
    ),
    Rule(
        Action.IMPORT,
        H,
        ABSENT,
        ALLOW,
        "imported '{name}' (live)",
        to_state=LIVE,
        effect=Effect.CREATE,
        sets_published_at=True,
    ),
    Rule(
        Action.CREATE,
        H,
        ABSENT,
        ALLOW,
        "saved '{name}' as a new draft; publish it when it is ready "
        "('{kite} skills publish {name}', or Publish on the dashboard)",
        to_state=DRAFT,
        effect=Effect.CREATE,
    ),
)


def _matches(rule: Rule, published: bool, agent_text: bool, proposed: bool) -> bool:
    return (
        (rule.published is None or rule.published == published)
        and (rule.agent_text is None or rule.agent_text == agent_text)
        and (rule.proposed is None or rule.proposed == proposed)
    )


def find_rule(
    action: Action,
    actor: Actor,
    state: str,
    published: bool,
    agent_text: bool = False,
    proposed: bool = False,
) -> Rule | None:
    """The rule for ``action`` by ``actor`` from ``state``; None when the table has none
    (for ``ABSENT`` that means the skill is unknown). ``agent_text``: an agent wrote the
    skill's current text; ``proposed``: a revision waits beside it."""
    for rule in RULES:
        if (
            rule.action is action
            and rule.actor is actor
            and rule.from_state == state
            and _matches(rule, published, agent_text, proposed)
        ):
            return rule
    return None


def person_actions(
    state: str, *, proposed: bool, published: bool, agent_text: bool
) -> frozenset[Action]:
    """What a person may do to a skill in ``state``, as the table says: each action with an
    allowing rule from it for a skill like this one (``published`` before, its text written
    by an agent, a revision ``proposed``): accept and reject a proposed revision, reject an
    agent's new draft. The dashboard shows a button for each."""
    return frozenset(
        rule.action
        for rule in RULES
        if rule.actor is Actor.HUMAN
        and rule.from_state == state
        and rule.outcome is Outcome.ALLOW
        and _matches(rule, published, agent_text, proposed)
    )


def puts_text_in_service(action: Action, state: str) -> bool:
    """Whether a person's ``action`` from ``state`` puts text into service, as the table says:
    it makes the skill live, or changes the text of a skill agents read (live) or may put
    back themselves (archived). The CLI asks the person at its controlling terminal before
    each such action, so that an agent with a shell cannot take it (issue 38)."""
    return any(
        rule.actor is Actor.HUMAN
        and rule.action is action
        and rule.from_state == state
        and rule.outcome is Outcome.ALLOW
        and (
            (rule.to_state == LIVE and state != LIVE)
            or (
                rule.effect in (Effect.SET_TEXT, Effect.ACCEPT)
                and rule.to_state in (LIVE, ARCHIVED)
            )
        )
        for rule in RULES
    )


FOR_AGENTS: Final[dict[tuple[Action, str], str]] = {
    # What a person's action means for agents, by the state it is taken from: the dashboard
    # shows it beside the button (person_action_meanings). Checked against RULES on import.
    (Action.ARCHIVE, LIVE): (
        "Takes it out of service: agents no longer list or read it (skills, skillRead, its "
        "prompt). Its text is kept, and you (Restore) or an agent (skillPublish) can put it "
        "back, since you published it before."
    ),
    (Action.MOVE_TO_DRAFT, LIVE): (
        "Takes it back for review: agents no longer list or read it, and only a person can "
        "publish it again."
    ),
    (Action.MOVE_TO_DRAFT, ARCHIVED): (
        "Keeps it out of service, and agents can no longer put it back (skillPublish): only "
        "a person can publish it again."
    ),
    (Action.RESTORE, ARCHIVED): "Puts it back in service: agents list and read it again.",
    # An earlier text restored (the history page says it before the person confirms).
    (Action.REVERT, LIVE): (
        "It is live, so agents read the restored text from the moment you confirm (the "
        "skills tool, skillRead, its prompt)."
    ),
    (Action.REVERT, DRAFT): "It stays a draft: agents cannot read it until you publish it.",
    (Action.REVERT, ARCHIVED): (
        "It stays archived: agents do not see it until it is put back in service."
    ),
}


def person_action_meanings(
    state: str, *, proposed: bool, published: bool, agent_text: bool
) -> dict[Action, str]:
    """For each action :func:`person_actions` allows from ``state`` that changes what agents
    see, what it means for them, in plain words (the dashboard shows it by the button)."""
    allowed = person_actions(state, proposed=proposed, published=published, agent_text=agent_text)
    return {a: FOR_AGENTS[(a, state)] for a in sorted(allowed) if (a, state) in FOR_AGENTS}


def waiting_audit_actions() -> frozenset[str]:
    """The audit ``action`` values that leave text waiting for a person, as the table says: a
    new draft (anyone's), an agent's update of its draft, an agent's proposed revision. The
    dashboard names who wrote what waits from the newest such row."""
    return frozenset(
        rule.audit_action
        for rule in RULES
        if rule.outcome is Outcome.ALLOW
        and (
            (rule.from_state == ABSENT and rule.to_state == DRAFT)
            or (rule.actor is Actor.AGENT and rule.effect in (Effect.SET_TEXT, Effect.PROPOSE))
        )
    )


def sends_back(audit_action: str) -> bool:
    """Whether an audit ``action`` sent an agent's new draft back with a person's reason (as
    the table says): until the agent saves it again, the draft waits for the agent."""
    return any(
        rule.effect is Effect.REJECT_DRAFT and rule.audit_action == audit_action for rule in RULES
    )


def moves(action: Action, actor: Actor = Actor.HUMAN) -> str:
    """``live/archived -> draft``: the states the table lets ``actor``'s ``action`` move a
    skill from, and where to (for the CLI's help)."""
    allowed = [r for r in RULES if r.action is action and r.actor is actor and r.outcome is ALLOW]
    sources = [s for s in STATES if any(r.from_state == s for r in allowed)]
    targets = sorted({str(r.to_state) for r in allowed}, key=_state_order)
    return f"{'/'.join(sources)} -> {'/'.join(targets)}"


def _state_order(state: str) -> int:
    return STATES.index(state) if state in STATES else len(STATES)


def _check_meanings() -> None:
    """Every meaning in :data:`FOR_AGENTS` belongs to a move a person may make."""
    for action, state in FOR_AGENTS:
        if not any(
            action in person_actions(state, proposed=False, published=p, agent_text=t)
            for p in (False, True)
            for t in (False, True)
        ):
            raise AssertionError(f"FOR_AGENTS explains {action} from {state}, which no rule allows")


def _check_table() -> None:
    """The draft boundary, checked on import: no agent rule sets ``published_at`` or makes a
    skill live except by putting back an archived skill a person published before, and no
    agent rule replaces the text of a skill a person ever published or a text a person wrote."""
    for rule in RULES:
        if rule.actor is Actor.AGENT and rule.outcome is Outcome.ALLOW:
            if rule.sets_published_at:
                raise AssertionError(f"agent rule {rule} sets published_at")
            if (
                rule.to_state == LIVE
                and rule.from_state != LIVE
                and not (rule.from_state == ARCHIVED and rule.published is True)
            ):
                raise AssertionError(f"agent rule {rule} makes a skill live")
            if rule.effect is Effect.SET_TEXT and rule.published is not False:
                raise AssertionError(f"agent rule {rule} overwrites text a person published")
            if rule.effect is Effect.SET_TEXT and rule.agent_text is not True:
                raise AssertionError(f"agent rule {rule} overwrites text a person wrote")
        if rule.outcome is Outcome.ALLOW and rule.to_state is None:
            raise AssertionError(f"allowed rule {rule} has no target state")


_check_table()
_check_meanings()
