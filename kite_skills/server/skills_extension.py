"""The Skills extension (SEP-2640), in one room: its id, its settings, what a client declares,
its methods (``skills/list``, ``skills/get`` and ``resources/directory/read`` over the catalog
library) and the fix-up that keeps it in a legacy ``initialize`` result.

``resources/directory/read`` is declared with ``directoryRead: true`` in the settings; the
three methods are served in both eras to every client.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

from mcp import types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from ..catalog import Catalog
from ..display import clipped
from ..errors import DirectoryReadError

SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"
SKILLS_SETTINGS: Final[dict[str, Any]] = {"directoryRead": True}
DIRECTORY_READ: Final = "resources/directory/read"

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


def directory_read(catalog: Catalog) -> CatalogHandler:
    async def handle(ctx: ServerRequestContext[Any, Any], params: CatalogParams) -> dict[str, Any]:
        try:
            page = catalog.directory(params.uri, params.cursor)
        except DirectoryReadError as exc:
            raise MCPError(INVALID_PARAMS, str(exc), exc.data) from exc
        return {**page.to_dict(), **CACHE_FIELDS}

    return handle


def serve(server: Server[Any], catalog: Catalog) -> None:
    """Serve the extension's methods on ``server`` and declare it, with its settings, in the
    capabilities. A legacy ``initialize`` also needs :func:`legacy_initialize_extensions`."""
    server.add_request_handler("skills/list", CatalogParams, skills_list(catalog))
    server.add_request_handler("skills/get", CatalogParams, skills_get(catalog))
    server.add_request_handler(DIRECTORY_READ, CatalogParams, directory_read(catalog))
    server.extensions[SKILLS_EXTENSION] = dict(SKILLS_SETTINGS)


def client_has_skills(ctx: ServerRequestContext[Any, Any]) -> bool:
    """True only for an object at ``capabilities.extensions[skills]``; an
    ``experimental`` declaration or another extension id does not count."""
    caps = ctx.session.client_capabilities
    extensions = caps.extensions if caps is not None else None
    return isinstance(extensions, dict) and isinstance(extensions.get(SKILLS_EXTENSION), dict)


async def legacy_initialize_extensions(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """Middleware: put ``capabilities.extensions`` back into the legacy initialize result: the
    SDK sieves it out because the 2025-11-25 schema has no such field."""
    result = await call_next(ctx)
    if ctx.method == "initialize" and isinstance(result, dict):
        capabilities = result.setdefault("capabilities", {})
        extensions = {**capabilities.get("extensions", {}), SKILLS_EXTENSION: dict(SKILLS_SETTINGS)}
        capabilities["extensions"] = extensions
    return result
