"""The user's own skills over MCP: five tools and the ``user-skill://`` resources. Served from
an :class:`~kite_skills.store.AgentView` (the agent's reads and actions, never the store
itself): nothing here can publish a draft or set ``published_at``. Change notifications live
in :mod:`kite_skills.server.changes`.

A store that could not be opened leaves the tools listed: each call answers a tool error
with the cause and the fix, while the catalog is served as always."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, TypeVar

from mcp import types

from ..display import one_line, quoted
from ..errors import (
    IllegalTransition,
    InvalidQuery,
    InvalidSkill,
    SkillNotLive,
    StoreError,
    UnknownSkill,
    UnreadableSkill,
)
from ..mcpkit import Context, ToolRun, ToolSpec, argument_problems, text_result, tool_error
from ..store import DEFAULT_LIMIT, MAX_BODY_BYTES, MAX_LIMIT, AgentView, Skill
from . import store_thread
from .changes import URI_SCHEME, ChangeFeed, uri_of
from .negotiation import client_label
from .receipts import ReadReceipts

log = logging.getLogger("kite_skills.server")

Args = TypeVar("Args")


@dataclass(frozen=True)
class SkillsArgs:
    """``skills``' arguments: words to search for (none or blank: list them all), how many."""

    q: str | None
    limit: int

    @classmethod
    def of(cls, arguments: dict[str, Any]) -> SkillsArgs:
        return cls(arguments.get("q"), arguments.get("limit", DEFAULT_LIMIT))


@dataclass(frozen=True)
class NameArgs:
    """``skillRead``, ``skillUnpublish`` and ``skillPublish``'s argument: the skill's name."""

    name: str

    @classmethod
    def of(cls, arguments: dict[str, Any]) -> NameArgs:
        return cls(arguments["name"])


@dataclass(frozen=True)
class SaveArgs:
    """``skillSave``'s arguments: the draft's name, description and body."""

    name: str
    description: str
    body: str

    @classmethod
    def of(cls, arguments: dict[str, Any]) -> SaveArgs:
        return cls(arguments["name"], arguments["description"], arguments["body"])


__all__ = ["URI_SCHEME", "UserSkills", "uri_of"]

# What the store says when the input, the lifecycle or one skill's row is at fault: shown as
# it is (each message already names the skill and what to do).
REFUSALS = (
    InvalidSkill,
    UnknownSkill,
    SkillNotLive,
    IllegalTransition,
    InvalidQuery,
    UnreadableSkill,
)
# What the store (or SQLite under it) says when the file itself fails.
FAILURES = (StoreError, sqlite3.Error)

SKILL_MIME_TYPE: Final = "text/markdown"
"""What a live skill's document is, wherever it is served (resources, prompts)."""

_NAME = {"type": "string", "description": "The skill's name, e.g. 'compare-funds'."}
_WRITES = types.ToolAnnotations(read_only_hint=False, idempotent_hint=False, open_world_hint=False)


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


SKILLS_INPUT = _schema(
    {
        "q": {"type": "string", "description": "Words to search for; omit to list them all."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "default": DEFAULT_LIMIT,
        },
    },
    [],
)
NAME_INPUT = _schema({"name": _NAME}, ["name"])
SAVE_INPUT = _schema(
    {
        "name": _NAME,
        "description": {"type": "string", "description": "One line: when the skill applies."},
        "body": {
            "type": "string",
            "description": f"The procedure, in Markdown (≤ {MAX_BODY_BYTES // 1024} KiB).",
        },
    },
    ["name", "description", "body"],
)


class UserSkills:
    """Serves one store to MCP peers, as an agent sees it: the five tools and the live skills
    as resources.

    ``view`` is None when the store could not be opened; ``unavailable`` then says why."""

    def __init__(self, view: AgentView | None, unavailable: str | None = None) -> None:
        self.view = view
        self.unavailable = unavailable or "the skill store is not open"
        self.changes = ChangeFeed(view)
        self.receipts = ReadReceipts(view)
        self._reported: set[str] = set()  # unreadable skills already logged

    @classmethod
    def without_store(cls, cause: str) -> UserSkills:
        return cls(None, cause)

    # -- tools ------------------------------------------------------------------------------

    def tools(self) -> list[ToolSpec]:
        """The five tools, each handler taking its arguments as a typed value."""
        return [
            self._tool("skills", SKILLS_INPUT, _reads(), SkillsArgs.of, self._skills),
            self._tool("skillRead", NAME_INPUT, _reads(), NameArgs.of, self._read),
            self._tool("skillSave", SAVE_INPUT, _WRITES, SaveArgs.of, self._save),
            self._tool("skillUnpublish", NAME_INPUT, _destructive(), NameArgs.of, self._unpublish),
            self._tool("skillPublish", NAME_INPUT, _WRITES, NameArgs.of, self._publish),
        ]

    def _tool(
        self,
        name: str,
        schema: dict[str, Any],
        annotations: types.ToolAnnotations,
        parse: Callable[[dict[str, Any]], Args],
        run: Callable[[Context, Args], Awaitable[types.CallToolResult]],
    ) -> ToolSpec:
        """The tool ``name``: its declaration, and a handler that checks the arguments against
        ``schema``, makes them the typed value ``parse`` returns and gives it to ``run``."""
        declared = types.Tool(
            name=name,
            title=TITLES[name],
            description=DESCRIPTIONS[name],
            input_schema=schema,
            annotations=annotations,
        )
        return ToolSpec(declared, self._guarded(name, schema, parse, run))

    def _guarded(
        self,
        tool: str,
        schema: dict[str, Any],
        parse: Callable[[dict[str, Any]], Args],
        run: Callable[[Context, Args], Awaitable[types.CallToolResult]],
    ) -> ToolRun:
        async def guarded(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
            problems = argument_problems(schema, arguments)
            if problems:
                return tool_error("invalid arguments — " + "; ".join(problems))
            if self.view is None:
                return tool_error(
                    f"the user's own skills are unavailable: {self.unavailable}. The built-in "
                    "catalog (help, skills/list, skill:// resources) still works; restart the "
                    "MCP server (your client does) once the store is fixed"
                )
            try:
                return await run(ctx, parse(arguments))
            except REFUSALS as exc:
                return tool_error(str(exc))
            except FAILURES as exc:
                name = arguments.get("name")
                what = f"skill '{name}'" if isinstance(name, str) else "the user's skills"
                return tool_error(f"{tool} could not read or change {what}: {exc}")

        return guarded

    async def _skills(self, ctx: Context, args: SkillsArgs) -> types.CallToolResult:
        assert self.view is not None
        q, limit = args.q, args.limit
        if q is None or not q.strip():  # blank q lists, as no q does
            found = await store_thread.run(partial(self.view.list_live, limit))
            heading = f"{len(found)} live skill(s)" if found else "No live skills yet."
        else:
            found = await store_thread.run(partial(self.view.search, q, limit))
            heading = (
                f"{len(found)} live skill(s) match {q!r}"
                if found
                else (f"No live skill matches {q!r}.")
            )
        lines = [heading] + [f"- {s.name} — {s.description}" for s in found]
        if found:
            lines.append('Read one with skillRead {"name": …}.')
        structured = {"skills": [{"name": s.name, "description": s.description} for s in found]}
        return text_result("\n".join(lines), structured)

    async def _read(self, ctx: Context, args: NameArgs) -> types.CallToolResult:
        assert self.view is not None
        skill: Skill = await store_thread.run(partial(self.view.read_live, args.name))
        self.receipts.note(ctx, "skill", skill.name, "skillRead")
        structured = {"name": skill.name, "description": skill.description, "body": skill.body}
        return text_result(skill.document(), structured)

    async def _save(self, ctx: Context, args: SaveArgs) -> types.CallToolResult:
        assert self.view is not None
        save = partial(self.view.save, args.name, args.description, args.body)
        result = await store_thread.run(partial(save, who=client_label(ctx)))
        structured: dict[str, Any] = {
            "name": result.name,
            "outcome": result.outcome,
            "status": result.status,
            "replaced_pending": result.replaced is not None,
        }
        message = result.message
        if result.replaced is not None:
            replaced = result.replaced
            structured["replaced"] = {
                "description": replaced.description,
                "body": replaced.body,
                "proposed_by": replaced.proposed_by,
                "proposed_at": replaced.proposed_at,
            }
            message += (
                f"\n\nThe replaced revision (description: {replaced.description}):\n\n"
                + replaced.body
            )
        if result.rejected is not None:
            rejected = result.rejected
            said = rejection_note(result.name, rejected.at, rejected.reason, rejected.draft)
            structured["previous_rejected"] = {
                "what": "draft" if rejected.draft else "proposal",
                "rejected_at": result.rejected.at,
                "reason": quoted(result.rejected.reason, MAX_REASON_SHOWN)[1:-1]
                if result.rejected.reason
                else None,
            }
            message = said + "\n\n" + message
        return text_result(message, structured)

    async def _unpublish(self, ctx: Context, args: NameArgs) -> types.CallToolResult:
        assert self.view is not None
        who = client_label(ctx)
        result = await store_thread.run(partial(self.view.unpublish, args.name, who=who))
        await self.changes.check()
        return text_result(result.message, {"name": args.name, "status": result.to_status})

    async def _publish(self, ctx: Context, args: NameArgs) -> types.CallToolResult:
        assert self.view is not None
        who = client_label(ctx)
        result = await store_thread.run(partial(self.view.republish, args.name, who=who))
        await self.changes.check()
        return text_result(result.message, {"name": args.name, "status": result.to_status})

    # -- resources --------------------------------------------------------------------------

    async def resources(self) -> list[types.Resource]:
        """The live skills as resources; one that cannot be read is left out (and logged
        once), and a store that cannot be read at all leaves only the catalog."""
        if self.view is None:
            return []
        try:
            skills: list[Skill] = await store_thread.run(partial(self.view.live_skills))
        except FAILURES:
            skills = await self._readable_live_skills()
        return [
            types.Resource(
                uri=uri_of(s.name),
                name=s.name,
                description=s.description,
                mime_type=SKILL_MIME_TYPE,
                size=len(s.document().encode("utf-8")),
            )
            for s in skills
        ]

    async def _readable_live_skills(self) -> list[Skill]:
        assert self.view is not None
        try:
            names: list[str] = await store_thread.run(partial(self.view.live_names))
        except FAILURES as exc:
            self.report("*", f"cannot list the user's live skills ({exc}); serving the catalog")
            return []
        found = []
        for name in names:
            try:
                found.append(await store_thread.run(partial(self.view.read_live, name)))
            except FAILURES as exc:
                self.report(uri_of(name), f"cannot read live skill '{name}' ({exc}); left out")
        return found

    def report(self, key: str, message: str) -> None:
        """Log ``message`` once per ``key`` (a skill or URI) in this process."""
        if key not in self._reported:
            self._reported.add(key)
            log.warning("%s", one_line(message))

    async def read(self, uri: str) -> str | None:
        """The live skill's document at ``uri``; None for anything not a live skill.
        Raises StoreError (or sqlite3.Error) when the store fails to read it."""
        if self.view is None or not uri.startswith(URI_SCHEME):
            return None
        name = uri.removeprefix(URI_SCHEME)
        try:
            skill: Skill = await store_thread.run(partial(self.view.read_live, name))
        except REFUSALS:
            return None
        return skill.document()


MAX_REASON_SHOWN = 500
"""How much of a person's reason for a rejection an agent is shown (clipped beyond)."""


def rejection_note(name: str, at: str, reason: str, draft: bool = False) -> str:
    """What an agent's save is told when a person rejected its previous proposal of
    ``name`` (or its new draft: ``draft``). The reason is a person's words, shown as quoted
    data (escaped, clipped)."""
    said = (
        f"with this reason: {quoted(reason, MAX_REASON_SHOWN)}"
        if reason
        else "without giving a reason"
    )
    what = "draft" if draft else "previous proposed revision"
    return (
        f"Note: a person rejected your {what} of '{name}' at {at}, {said}. "
        "Make sure this save answers that; it waits for their review as well."
    )


def _reads() -> types.ToolAnnotations:
    return types.ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )


def _destructive() -> types.ToolAnnotations:
    return types.ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
    )


TITLES = {
    "skills": "Find the user's own skills",
    "skillRead": "Read one skill's procedure",
    "skillSave": "Draft a skill",
    "skillUnpublish": "Take out of service",
    "skillPublish": "Put a withdrawn skill back",
}

DESCRIPTIONS = {
    "skills": (
        "Find the user's own saved skills (procedures they wrote for doing a task their "
        "way). Without 'q' lists them; with 'q' searches names, descriptions and text. "
        "Returns names and one-line descriptions only — read one with skillRead. When the "
        "user names a skill outright, call skillRead directly."
    ),
    "skillRead": "Read one of the user's live skills: its full procedure, by name.",
    "skillSave": (
        "Save a DRAFT of a skill (new name: a new draft; existing name: a proposed revision "
        "beside the live text, which keeps serving). Drafts are not visible to skills or "
        "skillRead until a person publishes them on their kite-skills dashboard — you cannot "
        "publish your own draft: ask the person to review and publish it."
    ),
    "skillUnpublish": (
        "Take one of the user's live skills out of service (live → archived). Reversible: "
        "skillPublish puts it back. Recorded in the audit log."
    ),
    "skillPublish": (
        "Put back an archived skill that a person published before (archived → live). "
        "Refused for drafts: only a person publishes a draft, on the dashboard or the CLI."
    ),
}
