"""The Skills extension (SEP-2640), in one room: its id, its settings, what a client declares
(:func:`client_has_skills`), its methods (``skills/list``, ``skills/get`` and
``resources/directory/read`` over the catalog library, :class:`SkillsExtension`) and the fix-up
that keeps it in a legacy ``initialize`` result (:func:`legacy_initialize_extensions`).

``resources/directory/read`` is declared with ``directoryRead: true`` in the settings; the
three methods are served in both eras to every client.

The methods answer with plain dicts, not the SDK's models: the SDK has no model for them (they
are no spec methods, so it neither validates nor sieves them). Their entries are the catalog's
own ``to_dict()`` shapes (``SkillEntry``, ``DirectoryPage``), with the cache fields added here.
"""

from __future__ import annotations

from typing import Any, Final

from mcp import types
from mcp.server.context import CallNext, HandlerResult
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from ..catalog import Catalog
from ..display import clipped
from ..errors import DirectoryReadError
from ..mcpkit import Context

SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"
SKILLS_SETTINGS: Final[dict[str, Any]] = {"directoryRead": True}
DIRECTORY_READ: Final = "resources/directory/read"

# Static documentation, the same for every client: cacheable publicly for 5 minutes.
CACHE_FIELDS: Final = {"resultType": "complete", "ttlMs": 300_000, "cacheScope": "public"}


class CatalogParams(types.RequestParams):
    """The params of ``skills/list``, ``skills/get`` and ``resources/directory/read`` (one
    model for the three: each handler reads what it takes, and params it does not take are
    ignored, as the SDK's own models ignore them). Any type passes here; each handler checks
    the values itself, so that every refusal names its problem."""

    uri: Any = None
    cursor: Any = None


class SkillsExtension:
    """The extension's three methods over the catalog."""

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog

    def serve(self, server: Server[Any]) -> None:
        """Serve the methods on ``server`` and declare the extension, with its settings, in
        the capabilities. A legacy ``initialize`` also needs
        :func:`legacy_initialize_extensions` among the server's middlewares."""
        server.add_request_handler("skills/list", CatalogParams, self.skills_list)
        server.add_request_handler("skills/get", CatalogParams, self.skills_get)
        server.add_request_handler(DIRECTORY_READ, CatalogParams, self.directory_read)
        server.extensions[SKILLS_EXTENSION] = dict(SKILLS_SETTINGS)

    async def skills_list(self, ctx: Context, params: CatalogParams) -> dict[str, Any]:
        if params.cursor not in (None, ""):
            raise MCPError(
                INVALID_PARAMS,
                "unknown cursor: skills/list answers with one complete page and issues no "
                "cursors — call it without 'cursor'",
                {"cursor": clipped(params.cursor)},
            )
        return {"skills": [skill.to_dict() for skill in self._catalog.skills], **CACHE_FIELDS}

    async def skills_get(self, ctx: Context, params: CatalogParams) -> dict[str, Any]:
        uri = params.uri
        if uri is None:
            raise MCPError(
                INVALID_PARAMS,
                "skills/get needs 'uri', the URI of a skill's SKILL.md "
                "(e.g. skill://orders/SKILL.md)",
            )
        if not isinstance(uri, str):
            raise MCPError(INVALID_PARAMS, "'uri' must be a string", {"uri": clipped(uri)})
        skill = self._catalog.skill(uri)
        if skill is None:
            raise MCPError(
                INVALID_PARAMS,
                f"no skill at {clipped(uri)}: {self._not_a_skill(uri)} — skills/list shows "
                "every skill's URI",
                {"uri": clipped(uri)},
            )
        return {"skill": skill.to_dict(), **CACHE_FIELDS}

    def _not_a_skill(self, uri: str) -> str:
        if self._catalog.read(uri) is not None:
            return "it is a file inside a skill, not a SKILL.md"
        return "no skill is served there"

    async def directory_read(self, ctx: Context, params: CatalogParams) -> dict[str, Any]:
        try:
            page = self._catalog.directory(params.uri, params.cursor)
        except DirectoryReadError as exc:
            raise MCPError(INVALID_PARAMS, str(exc), exc.data) from exc
        return {**page.to_dict(), **CACHE_FIELDS}


def client_has_skills(ctx: Context) -> bool:
    """True only for an object at ``capabilities.extensions[skills]``; an
    ``experimental`` declaration or another extension id does not count."""
    caps = ctx.session.client_capabilities
    extensions = caps.extensions if caps is not None else None
    return isinstance(extensions, dict) and isinstance(extensions.get(SKILLS_EXTENSION), dict)


async def legacy_initialize_extensions(ctx: Context, call_next: CallNext) -> HandlerResult:
    """Middleware: put ``capabilities.extensions`` back into the legacy initialize result: the
    SDK sieves it out because the 2025-11-25 schema has no such field (modelcontextprotocol/
    modelcontextprotocol#3364; test_a_legacy_initialize_loses_the_extensions_capability)."""
    result = await call_next(ctx)
    if ctx.method == "initialize" and isinstance(result, dict):
        capabilities = result.setdefault("capabilities", {})
        extensions = {**capabilities.get("extensions", {}), SKILLS_EXTENSION: dict(SKILLS_SETTINGS)}
        capabilities["extensions"] = extensions
    return result
