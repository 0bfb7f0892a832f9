"""What this client declared: per session (legacy) or per request (2026-07-28)."""

from __future__ import annotations

from typing import Any

from mcp.server.context import ServerRequestContext

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"


def client_has_skills(ctx: ServerRequestContext[Any, Any]) -> bool:
    """True only for an object at ``capabilities.extensions[skills]``; an
    ``experimental`` declaration or another extension id does not count."""
    caps = ctx.session.client_capabilities
    extensions = caps.extensions if caps is not None else None
    return isinstance(extensions, dict) and isinstance(extensions.get(SKILLS_EXTENSION), dict)


def client_label(ctx: ServerRequestContext[Any, Any]) -> str:
    """The client's "name version" for the audit log, or "unknown client"."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    if info is None:
        meta = ctx.meta or {}
        raw = meta.get("io.modelcontextprotocol/clientInfo") if isinstance(meta, dict) else None
        if isinstance(raw, dict) and isinstance(raw.get("name"), str):
            return f"{raw['name']} {raw.get('version', '')}".strip()
        return "unknown client"
    return f"{info.name} {info.version}".strip()
