"""The main server's protocol glue over the kit: this connection's legacy peer (its
subscriptions and log level), and the server's own log lines for a client that asks
(:func:`client_logs`, over :mod:`.client_log`). The session rules and the error middleware are
the kit's (:mod:`kite_skills.mcpkit.session`).

The other fix-ups the SDK forces live with what they fix: the Skills extension's capability in
a legacy ``initialize`` (:func:`.skills_extension.legacy_initialize_extensions`) and the
prompts listing's cache fields (:func:`.prompts.legacy_cache_fields`).
"""

from __future__ import annotations

import logging

from mcp import types
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, LOG_LEVEL_META_KEY, LoggingLevel
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..display import clipped
from ..mcpkit import Context
from . import client_log
from .changes import PEER, LegacyPeer

log = logging.getLogger("kite_skills.server")


def peer_of(ctx: Context) -> LegacyPeer | None:
    """This connection's legacy peer; None when served without the server's lifespan."""
    state = ctx.lifespan_context
    peer = state.get(PEER) if isinstance(state, dict) else None
    return peer if isinstance(peer, LegacyPeer) else None


async def client_logs(ctx: Context, call_next: CallNext) -> HandlerResult:
    """Middleware (the outermost): the server's log lines while a request is handled, sent
    to its client before the reply when it asked for them, at or above its level: the
    session's ``logging/setLevel`` (handshake era) or the request's own
    ``io.modelcontextprotocol/logLevel`` (2026-07-28; an unknown level is -32602)."""
    threshold = _log_threshold(ctx)
    with client_log.collecting() as lines:
        try:
            result = await call_next(ctx)
        except Exception:
            await _send(ctx, client_log.notifications(lines, threshold))
            raise
    await _send(ctx, client_log.notifications(lines, threshold))
    return result


def _log_threshold(ctx: Context) -> LoggingLevel | None:
    """The least severe level the request asked to hear; None: no log lines for it (a
    notification has no reply for them to come before)."""
    if ctx.request_id is None:
        return None
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        meta = (ctx.params or {}).get("_meta")
        if not isinstance(meta, dict) or LOG_LEVEL_META_KEY not in meta:
            return None
        level = meta[LOG_LEVEL_META_KEY]
        if level in client_log.LEVELS:
            return level  # type: ignore[no-any-return]
        # One refusal for every method (the SDK would check the spec methods' alone).
        problem = {
            "field": f"params._meta.{LOG_LEVEL_META_KEY}",
            "problem": f"is wrong: it must be one of {', '.join(client_log.LEVELS)} "
            f"(got {clipped(level, 40)})",
        }
        raise MCPError(
            INVALID_PARAMS,
            f"invalid params for {clipped(ctx.method, 60)}: {problem['field']} "
            f"{problem['problem']}",
            {"problems": [problem]},
        )
    peer = peer_of(ctx)
    return peer.log_level if peer is not None else None


async def _send(ctx: Context, notifications: list[types.LoggingMessageNotification]) -> None:
    """Send on the request's own stream; a client gone away changes nothing of the reply."""
    for notification in notifications:
        try:
            await ctx.session.send_notification(notification, related_request_id=ctx.request_id)
        except Exception:
            log.debug("log line not delivered", exc_info=True)
            return
