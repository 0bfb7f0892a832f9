"""Who this client is: per session (legacy) or per request (2026-07-28). What it declared
of the Skills extension is :func:`.skills_extension.client_has_skills`."""

from __future__ import annotations

from ..mcpkit import Context


def client_label(ctx: Context) -> str:
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
