"""SEP-2640 ``resources/directory/read`` over the catalog's directory index.

Declared with ``directoryRead: true`` in the Skills extension settings; served in both eras to
every client, like ``skills/list``.
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from ..catalog import Catalog
from ..errors import DirectoryReadError
from .skills_extension import CACHE_FIELDS, CatalogHandler, CatalogParams

METHOD = "resources/directory/read"
SKILLS_SETTINGS: dict[str, Any] = {"directoryRead": True}


def directory_read(catalog: Catalog) -> CatalogHandler:
    async def handle(ctx: ServerRequestContext[Any, Any], params: CatalogParams) -> dict[str, Any]:
        try:
            page = catalog.directory(params.uri, params.cursor)
        except DirectoryReadError as exc:
            raise MCPError(INVALID_PARAMS, str(exc), exc.data) from exc
        return {**page.to_dict(), **CACHE_FIELDS}

    return handle
