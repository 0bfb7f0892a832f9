"""The aliases every module on the kit is typed with, declared once."""

from __future__ import annotations

from typing import Any

from mcp.server.context import ServerRequestContext

Context = ServerRequestContext[Any, Any]
"""What every request handler and middleware is given (the lifespan and request types are
the servers' own dicts, so both stay ``Any``)."""
