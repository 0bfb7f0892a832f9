"""The user's own skills over MCP: five tools, ``user-skill://`` resources and change
notifications. Imports only the store's read API and its *agent* actions: nothing here
can publish a draft or set ``published_at``."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged, ResourceUpdated

from ..errors import StoreError
from ..store import Skill, Store, agent
from .negotiation import client_label
from .tools import Context, ToolSpec, argument_problems, text_result, tool_error

log = logging.getLogger("kite_skills.server")

URI_SCHEME = "user-skill://"
POLL_SECONDS = 0.5  # how often another process's writes are looked for

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
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
    },
    [],
)
NAME_INPUT = _schema({"name": _NAME}, ["name"])
SAVE_INPUT = _schema(
    {
        "name": _NAME,
        "description": {"type": "string", "description": "One line: when the skill applies."},
        "body": {"type": "string", "description": "The procedure, in Markdown (≤ 64 KiB)."},
    },
    ["name", "description", "body"],
)


def uri_of(name: str) -> str:
    return URI_SCHEME + name


class UserSkills:
    """Serves one store to one MCP peer and tells it when live skills change."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.bus = InMemorySubscriptionBus()
        self._legacy_sessions: list[ServerSession] = []
        self._subscribed: set[str] = set()
        self._live: dict[str, str] = {}
        self._version = -1
        # The poller and the writing tools both check; one at a time, or a reading taken
        # before a write can land after it and leave ``_live`` stale (missed list changes).
        self._checking = anyio.Lock()

    async def _call(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await anyio.to_thread.run_sync(lambda: function(*args, **kwargs))

    # -- tools ------------------------------------------------------------------------------

    def tools(self) -> list[ToolSpec]:
        specs = [
            ("skills", SKILLS_INPUT, self._skills, _reads(), "Find the user's own skills"),
            ("skillRead", NAME_INPUT, self._read, _reads(), "Read one skill's procedure"),
            ("skillSave", SAVE_INPUT, self._save, _WRITES, "Draft a skill"),
            ("skillUnpublish", NAME_INPUT, self._unpublish, _destructive(), "Take out of service"),
            ("skillPublish", NAME_INPUT, self._publish, _WRITES, "Put a withdrawn skill back"),
        ]
        return [
            ToolSpec(
                types.Tool(
                    name=name,
                    title=title,
                    description=DESCRIPTIONS[name],
                    input_schema=schema,
                    annotations=annotations,
                ),
                self._guarded(schema, run),
            )
            for name, schema, run, annotations, title in specs
        ]

    def _guarded(self, schema: dict[str, Any], run: Callable[..., Any]) -> Any:
        async def guarded(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
            problems = argument_problems(schema, arguments)
            if problems:
                return tool_error("invalid arguments — " + "; ".join(problems))
            try:
                return await run(ctx, **arguments)
            except StoreError as exc:
                return tool_error(str(exc))

        return guarded

    async def _skills(self, ctx: Context, q: str | None = None, limit: int = 20) -> Any:
        if q is None or not q.strip():  # blank q lists, as no q does
            found = await self._call(self.store.list_live, limit)
            heading = f"{len(found)} live skill(s)" if found else "No live skills yet."
        else:
            found = await self._call(self.store.search, q, limit)
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

    async def _read(self, ctx: Context, name: str) -> Any:
        skill: Skill = await self._call(self.store.read_live, name)
        structured = {"name": skill.name, "description": skill.description, "body": skill.body}
        return text_result(skill.document(), structured)

    async def _save(self, ctx: Context, name: str, description: str, body: str) -> Any:
        result = await self._call(
            agent.save, self.store, name, description, body, who=client_label(ctx)
        )
        structured = {"name": result.name, "outcome": result.outcome, "status": result.status}
        return text_result(result.message, structured)

    async def _unpublish(self, ctx: Context, name: str) -> Any:
        result = await self._call(agent.unpublish, self.store, name, who=client_label(ctx))
        await self.check_for_changes()
        return text_result(result.message, {"name": name, "status": result.to_status})

    async def _publish(self, ctx: Context, name: str) -> Any:
        result = await self._call(agent.republish, self.store, name, who=client_label(ctx))
        await self.check_for_changes()
        return text_result(result.message, {"name": name, "status": result.to_status})

    # -- resources --------------------------------------------------------------------------

    async def resources(self) -> list[types.Resource]:
        skills: list[Skill] = await self._call(self.store.live_skills)
        return [
            types.Resource(
                uri=uri_of(s.name),
                name=s.name,
                description=s.description,
                mime_type="text/markdown",
                size=len(s.document().encode("utf-8")),
            )
            for s in skills
        ]

    async def read(self, uri: str) -> str | None:
        """The live skill's document at ``uri``; None for anything not live."""
        name = uri.removeprefix(URI_SCHEME)
        try:
            skill: Skill = await self._call(self.store.read_live, name)
        except StoreError:
            return None
        return skill.document()

    # -- change notifications ---------------------------------------------------------------

    def remember(self, session: ServerSession) -> None:
        """Keep a legacy session, to which list changes are sent."""
        if session not in self._legacy_sessions:
            self._legacy_sessions.append(session)

    def subscribe(self, uri: str) -> None:
        self._subscribed.add(uri)

    def unsubscribe(self, uri: str) -> None:
        self._subscribed.discard(uri)

    async def watch(self) -> None:
        """Notice writes by other processes (the dashboard, the CLI) on the same file."""
        await self.check_for_changes()
        while True:
            await anyio.sleep(POLL_SECONDS)
            version = await self._call(self.store.data_version)
            if version != self._version:
                self._version = version
                await self.check_for_changes()

    async def check_for_changes(self) -> None:
        async with self._checking:
            await self._check_for_changes()

    async def _check_for_changes(self) -> None:
        live: dict[str, str] = await self._call(self.store.live_versions)
        previous, self._live = self._live, live
        if self._version == -1:
            self._version = await self._call(self.store.data_version)
            return
        if set(live) != set(previous):
            await self.bus.publish(ResourcesListChanged())
            for session in self._legacy_sessions:
                await _quietly(session.send_resource_list_changed)
        for name in sorted(set(live) | set(previous)):
            if live.get(name) != previous.get(name):
                uri = uri_of(name)
                await self.bus.publish(ResourceUpdated(uri=uri))
                if uri in self._subscribed:
                    for session in self._legacy_sessions:
                        await _quietly(session.send_resource_updated, uri)


async def _quietly(send: Callable[..., Any], *args: Any) -> None:
    try:
        await send(*args)
    except Exception:  # a client that went away must not stop the watcher
        log.debug("notification not delivered", exc_info=True)


def _reads() -> types.ToolAnnotations:
    return types.ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )


def _destructive() -> types.ToolAnnotations:
    return types.ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
    )


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
        "skillRead until a person publishes them with 'kite-skills dashboard' (/skills) or "
        "'kite-skills skills publish NAME' — you cannot publish your own draft."
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
