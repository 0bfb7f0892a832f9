"""SEP-2640 ``skills/list`` and ``skills/get`` over the catalog library."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from ..catalog import Catalog
from ..display import clipped

# Static documentation, the same for every client: cacheable publicly for 5 minutes.
CACHE_FIELDS = {"resultType": "complete", "ttlMs": 300_000, "cacheScope": "public"}


class CatalogParams(types.RequestParams):
    """The params of ``skills/list``, ``skills/get`` and ``resources/directory/read`` (one
    model for the three: each handler reads what it takes, and params it does not take are
    ignored, as the SDK's own models ignore them). Any type passes here; each handler checks
    the values itself, so that every refusal names its problem."""

    uri: Any = None
    cursor: Any = None


# A handler of one of those methods: its answer is the wire JSON, written here.
CatalogHandler = Callable[
    [ServerRequestContext[Any, Any], CatalogParams], Awaitable[dict[str, Any]]
]


def skills_list(catalog: Catalog) -> CatalogHandler:
    async def handle(ctx: ServerRequestContext[Any, Any], params: CatalogParams) -> dict[str, Any]:
        if params.cursor not in (None, ""):
            raise MCPError(
                INVALID_PARAMS,
                "unknown cursor: skills/list answers with one complete page and issues no "
                "cursors — call it without 'cursor'",
                {"cursor": clipped(params.cursor)},
            )
        return {"skills": [skill.to_dict() for skill in catalog.skills], **CACHE_FIELDS}

    return handle


def skills_get(catalog: Catalog) -> CatalogHandler:
    async def handle(ctx: ServerRequestContext[Any, Any], params: CatalogParams) -> dict[str, Any]:
        uri = params.uri
        if uri is None:
            raise MCPError(
                INVALID_PARAMS,
                "skills/get needs 'uri', the URI of a skill's SKILL.md "
                "(e.g. skill://orders/SKILL.md)",
            )
        if not isinstance(uri, str):
            raise MCPError(INVALID_PARAMS, "'uri' must be a string", {"uri": clipped(uri)})
        skill = catalog.skill(uri)
        if skill is None:
            hint = (
                "it is a file inside a skill, not a SKILL.md"
                if catalog.read(uri) is not None
                else "no skill is served there"
            )
            raise MCPError(
                INVALID_PARAMS,
                f"no skill at {clipped(uri)}: {hint} — skills/list shows every skill's URI",
                {"uri": clipped(uri)},
            )
        return {"skill": skill.to_dict(), **CACHE_FIELDS}

    return handle
