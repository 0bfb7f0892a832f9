"""MCP prompts: every catalog recipe and every live user skill as a client slash command.

``prompts/get`` answers with the procedure embedded as a resource (the bytes
``resources/read`` serves) followed by the person's request. Drafts and archived user skills
are never prompts. Offered to every client in both eras; ``EXCLUDED_TOOLS`` does not apply.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp import types
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from ..catalog import USER_PROMPT_PREFIX as USER_PREFIX
from ..catalog import Catalog, RecipePrompt, recipe_prompts
from ..errors import StoreError
from ..mcpkit import Context, wire
from ..store import AgentView, Listing, Skill, SkillSummary
from . import store_thread
from .receipts import ReadReceipts
from .user_skills import SKILL_MIME_TYPE, uri_of

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

NOTHING_LIVE = Listing(-1, ())
"""What is listed of the live skills with no store, or while it cannot be read: none (the
recipes stay served). Its generation is no generation the store's :class:`LiveSkills` gives."""


class Prompts:
    """``prompts/list`` and ``prompts/get`` over the catalog and the store's live skills."""

    def __init__(
        self, catalog: Catalog, view: AgentView | None, receipts: ReadReceipts | None = None
    ) -> None:
        self._recipes = {p.name: p for p in recipe_prompts(catalog)}
        self._view = view
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
        self._failures = 0  # listings that left the user's skills out: never kept

    async def list_prompts(self, ctx: Context, params: Any) -> dict[str, Any]:
        if getattr(params, "cursor", None) not in (None, ""):
            raise MCPError(
                INVALID_PARAMS,
                "unknown cursor: prompts/list answers with one complete page — call it "
                "without 'cursor'",
                {"cursor": params.cursor},
            )
        live = await self._live_skills()
        prompts = self._listed + [self._user_skill(s) for s in live.skills]
        return {**self._envelope, "prompts": prompts}

    async def remembered(self, ctx: Context, call_next: CallNext) -> HandlerResult:
        """Middleware: a ``prompts/list`` asked as the last one was (same protocol version,
        same params) while the live skills keep their generation gets the same answer again.
        The answer is a function of those and of the catalog, which never changes; the SDK
        checking every entry of it against the schema again was most of a listing's cost.

        Whether the live skills changed is the store's :class:`LiveSkills` to say: both this
        and the handler ask it, and it reads the rows at most once per change (the handler's
        question is answered from what this one read). The handler may find a newer
        generation than the one its answer is kept under, never an older one: a kept answer
        is never staler than its key."""
        if ctx.method != "prompts/list":
            return await call_next(ctx)
        failures = self._failures
        live = await self._live_skills(quiet=True)  # the handler says what fails, once
        made_from = (ctx.protocol_version, ctx.params, live.generation)
        if self._last is not None and self._last[0] == made_from:
            return dict(self._last[1])
        result = await call_next(ctx)
        if isinstance(result, dict) and self._failures == failures:
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
            return _messages(recipe.description, recipe.uri, recipe.mime_type, recipe.text, request)
        skill = await self._live(params.name)
        if skill is None:
            raise MCPError(
                INVALID_PARAMS,
                f"no prompt named '{params.name}' — prompts/list shows every prompt",
                {"name": params.name},
            )
        self._receipts.note(ctx, "skill", skill.name, "prompts/get")
        return _messages(
            skill.description, uri_of(skill.name), SKILL_MIME_TYPE, skill.document(), request
        )

    async def _live_skills(self, *, quiet: bool = False) -> Listing:
        """The live skills, or none while the store cannot be read: the recipes stay served
        (and the failure is logged, unless ``quiet``)."""
        if self._view is None:
            return NOTHING_LIVE
        live = self._view.live
        try:
            unchanged = live.unchanged()  # in place: it never waits
            if unchanged is not None:
                return unchanged
            listing: Listing = await store_thread.run(live.listing)
        except StoreError as exc:
            self._failures += 1
            if not quiet:
                log.warning("prompts/list leaves out your own skills: %s", exc)
            return NOTHING_LIVE
        return listing

    def _user_skill(self, skill: SkillSummary) -> dict[str, Any]:
        """A live user skill's entry in wire form (built as a dict: no model per skill)."""
        return {
            "name": USER_PREFIX + skill.name,
            "title": f"My skill: {skill.name}",
            "description": skill.description,
            "arguments": [self._request],
        }

    async def _live(self, name: str) -> Skill | None:
        view = self._view
        if not name.startswith(USER_PREFIX) or view is None:
            return None
        try:
            skill: Skill = await store_thread.run(
                lambda: view.read_live(name.removeprefix(USER_PREFIX))
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


def _messages(
    description: str | None, uri: str, mime_type: str, text: str, request: str
) -> types.GetPromptResult:
    procedure = types.TextResourceContents(uri=uri, mime_type=mime_type, text=text)
    return types.GetPromptResult(
        description=description,
        messages=[
            types.PromptMessage(role="user", content=types.EmbeddedResource(resource=procedure)),
            types.PromptMessage(role="user", content=types.TextContent(text=request)),
        ],
    )


async def legacy_cache_fields(ctx: Context, call_next: CallNext) -> HandlerResult:
    """Keep ``ttlMs``/``cacheScope`` on ``prompts/list`` in the legacy era too: the SDK sieves
    them out of 2025-11-25 results, where extra result fields are allowed
    (tests/test_sdk_faults.py::test_a_legacy_prompts_list_loses_its_cache_fields)."""
    result = await call_next(ctx)
    if ctx.method == "prompts/list" and isinstance(result, dict):
        for key, value in CACHE_FIELDS.items():
            result.setdefault(key, value)
    return result
