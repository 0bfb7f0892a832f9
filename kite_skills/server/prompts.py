"""MCP prompts: every catalog recipe and every live user skill as a client slash command.

``prompts/get`` answers with the procedure embedded as a resource (the bytes
``resources/read`` serves) followed by the person's request. Drafts and archived user skills
are never prompts. Offered to every client in both eras; ``EXCLUDED_TOOLS`` does not apply.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from typing import Any

from mcp import types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from ..catalog import Catalog, RecipePrompt, recipe_prompts
from ..catalog._schema import USER_PROMPT_PREFIX as USER_PREFIX
from ..errors import StoreError
from ..store import Skill, SkillSummary, Store
from . import store_thread
from .receipts import ReadReceipts
from .tools import wire
from .user_skills import uri_of

Context = ServerRequestContext[Any, Any]

# The list holds the person's own skills: never for a shared cache, and short-lived because
# the CLI or the dashboard can change it from another process.
TTL_MS = 60_000
CACHE_FIELDS = {"ttlMs": TTL_MS, "cacheScope": "private"}
REQUEST = types.PromptArgument(
    name="request",
    description="What you want done, in your own words (optional).",
    required=False,
)
NO_REQUEST = "Follow this procedure for my request. Ask me what I want before you start."

log = logging.getLogger("kite_skills.server")

# The live skills a prompts/list is answered from, when Prompts.remembered has read them.
_LIVE: ContextVar[list[SkillSummary] | None] = ContextVar("kite_skills_live", default=None)


class Prompts:
    """``prompts/list`` and ``prompts/get`` over the catalog and the store's live skills."""

    def __init__(
        self, catalog: Catalog, store: Store | None, receipts: ReadReceipts | None = None
    ) -> None:
        self._recipes = {p.name: p for p in recipe_prompts(catalog)}
        self._store = store
        self._receipts = receipts or ReadReceipts(None)
        # The listing in wire form (what the SDK makes of the models): the recipes' entries
        # are built once, since the catalog never changes; each user skill's on each call.
        self._listed = [wire(_recipe(p)) for p in self._recipes.values()]
        self._envelope = wire(
            types.ListPromptsResult(prompts=[], ttl_ms=TTL_MS, cache_scope="private")
        )
        self._request = wire(REQUEST)
        # The last listing as the client got it, and what it was made from (see remembered).
        self._last: tuple[tuple[Any, ...], dict[str, Any]] | None = None

    async def list_prompts(self, ctx: Context, params: Any) -> dict[str, Any]:
        if getattr(params, "cursor", None) not in (None, ""):
            raise MCPError(
                INVALID_PARAMS,
                "unknown cursor: prompts/list answers with one complete page — call it "
                "without 'cursor'",
                {"cursor": params.cursor},
            )
        live = _LIVE.get()
        if live is None:
            live = await self._live_skills()
        prompts = self._listed + [self._user_skill(s) for s in live]
        return {**self._envelope, "prompts": prompts}

    async def remembered(self, ctx: Context, call_next: CallNext) -> HandlerResult:
        """Middleware: a ``prompts/list`` asked as the last one was (same protocol version,
        same params) while the live skills are the same gets the same answer again. The answer
        is a function of those and of the catalog, which never changes; the SDK checking every
        entry of it against the schema again was most of a listing's cost."""
        if ctx.method != "prompts/list":
            return await call_next(ctx)
        live = await self._live_skills()
        made_from = (ctx.protocol_version, ctx.params, live)
        if self._last is not None and self._last[0] == made_from:
            return dict(self._last[1])
        token = _LIVE.set(live)  # the handler lists these, not a second reading
        try:
            result = await call_next(ctx)
        finally:
            _LIVE.reset(token)
        if isinstance(result, dict):
            self._last = (made_from, result)
            return dict(result)
        return result

    async def get_prompt(
        self, ctx: Context, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        request = (params.arguments or {}).get("request") or NO_REQUEST
        recipe = self._recipes.get(params.name)
        if recipe is not None:
            self._receipts.note(ctx, "recipe", recipe.uri, "prompts/get")
            return _messages(recipe.description, recipe.uri, recipe.text, request)
        skill = await self._live(params.name)
        if skill is None:
            raise MCPError(
                INVALID_PARAMS,
                f"no prompt named '{params.name}' — prompts/list shows every prompt",
                {"name": params.name},
            )
        self._receipts.note(ctx, "skill", skill.name, "prompts/get")
        return _messages(skill.description, uri_of(skill.name), skill.document(), request)

    async def _live_skills(self) -> list[SkillSummary]:
        """The live skills, or none while the store cannot be read: the recipes stay served."""
        if self._store is None:
            return []
        try:
            unchanged = self._store.unchanged_live_summaries()  # in place: it never waits
            if unchanged is not None:
                return unchanged
            live: list[SkillSummary] = await store_thread.run(self._store.live_summaries)
        except StoreError as exc:
            log.warning("prompts/list leaves out your own skills: %s", exc)
            return []
        return live

    def _user_skill(self, skill: SkillSummary) -> dict[str, Any]:
        """A live user skill's entry in wire form (built as a dict: no model per skill)."""
        return {
            "name": USER_PREFIX + skill.name,
            "title": f"My skill: {skill.name}",
            "description": skill.description,
            "arguments": [self._request],
        }

    async def _live(self, name: str) -> Skill | None:
        store = self._store
        if not name.startswith(USER_PREFIX) or store is None:
            return None
        try:
            skill: Skill = await store_thread.run(
                lambda: store.read_live(name.removeprefix(USER_PREFIX))
            )
        except StoreError:  # malformed, unknown, draft or archived: not a prompt
            return None
        return skill


def _recipe(prompt: RecipePrompt) -> types.Prompt:
    return types.Prompt(
        name=prompt.name,
        title=prompt.title,
        description=prompt.description,
        arguments=[REQUEST],
    )


def _messages(description: str | None, uri: str, text: str, request: str) -> types.GetPromptResult:
    procedure = types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)
    return types.GetPromptResult(
        description=description,
        messages=[
            types.PromptMessage(role="user", content=types.EmbeddedResource(resource=procedure)),
            types.PromptMessage(role="user", content=types.TextContent(text=request)),
        ],
    )


async def legacy_cache_fields(ctx: Context, call_next: CallNext) -> HandlerResult:
    """Keep ``ttlMs``/``cacheScope`` on ``prompts/list`` in the legacy era too: the SDK sieves
    them out of 2025-11-25 results, where extra result fields are allowed."""
    result = await call_next(ctx)
    if ctx.method == "prompts/list" and isinstance(result, dict):
        for key, value in CACHE_FIELDS.items():
            result.setdefault(key, value)
    return result
