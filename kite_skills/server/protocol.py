"""Middlewares for the protocol rules the SDK leaves loose: one ``initialize`` per legacy
session and a clear word to a request sent before it (:class:`SessionRules`), errors that
say what is wrong instead of the SDK's ``code 0`` or "Invalid request parameters"
(:func:`internal_errors`), and the server's own log lines for a client that asks
(:func:`client_logs`, over :mod:`.client_log`).

The other fix-ups the SDK forces live with what they fix: the Skills extension's capability in
a legacy ``initialize`` (:func:`.skills_extension.legacy_initialize_extensions`) and the
prompts listing's cache fields (:func:`.prompts.legacy_cache_fields`).
"""

from __future__ import annotations

import logging
from typing import Any, Final

from mcp import types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LOG_LEVEL_META_KEY,
    LoggingLevel,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from ..display import clipped
from . import client_log
from .changes import PEER, LegacyPeer

log = logging.getLogger("kite_skills.server")

Context = ServerRequestContext[Any, Any]

ALREADY_INITIALIZED: Final = (
    "this session is already initialized: a second 'initialize' is refused, and the first "
    "negotiation (protocol version, capabilities, client) stays in force — start a new "
    "connection to negotiate again"
)
NOT_INITIALIZED: Final = (
    "the session is not initialized: send 'initialize' (then 'notifications/initialized') "
    "first, or use the 2026-07-28 protocol by putting io.modelcontextprotocol/protocolVersion, "
    "clientCapabilities and clientInfo in each request's _meta"
)
MAX_PROBLEMS: Final = 3  # named in an invalid-params message; ``data`` lists up to 10


def peer_of(ctx: Context) -> LegacyPeer | None:
    """This connection's legacy peer; None when served without the server's lifespan."""
    state = ctx.lifespan_context
    peer = state.get(PEER) if isinstance(state, dict) else None
    return peer if isinstance(peer, LegacyPeer) else None


class SessionRules:
    """Middleware: the handshake era's rules the SDK leaves loose: one ``initialize`` per
    session (a second would re-judge the client), and a clear word to a request sent before
    it (only for a method ``server`` serves: others get the SDK's "method not found")."""

    def __init__(self, server: Server[Any]) -> None:
        self._server = server

    async def __call__(self, ctx: Context, call_next: CallNext) -> HandlerResult:
        peer = peer_of(ctx)
        if peer is None or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return await call_next(ctx)
        if ctx.request_id is None:  # a notification
            if ctx.method == "notifications/initialized":
                peer.opened = True
            return await call_next(ctx)
        if ctx.method == "initialize":
            if peer.session is not None:
                raise MCPError(INVALID_REQUEST, ALREADY_INITIALIZED)
            result = await call_next(ctx)
            peer.attach(ctx.session)
            return result
        if not peer.opened and ctx.method != "ping":
            if self._server.get_request_handler(ctx.method) is not None:
                raise MCPError(INVALID_PARAMS, NOT_INITIALIZED, {"method": clipped(ctx.method, 64)})
        return await call_next(ctx)


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


async def internal_errors(ctx: Context, call_next: CallNext) -> HandlerResult:
    """Middleware: params that do not fit get -32602 naming each field (the SDK would answer
    "Invalid request parameters" with data ""), and unexpected exceptions -32603 (the SDK
    would send code 0 on legacy)."""
    try:
        return await call_next(ctx)
    except MCPError:
        raise
    except ValidationError as exc:
        raise invalid_params(ctx.method, exc) from exc
    except Exception as exc:
        log.exception("%s failed", ctx.method)
        raise MCPError(INTERNAL_ERROR, "internal error (see the server log)") from exc


def invalid_params(method: str, exc: ValidationError) -> MCPError:
    """-32602 naming each field that is wrong (``params.protocolVersion is missing``), with
    the same as ``data.problems``; the input itself is never echoed."""
    problems = []
    for error in exc.errors(include_url=False, include_input=False, include_context=False)[:10]:
        loc = [clipped(part, 40) for part in error["loc"]]
        field = ".".join(loc if loc[:1] == ["params"] else ["params", *loc])  # spec or custom
        said = clipped(error["msg"], 120)
        problem = (
            "is missing"
            if error["type"] == "missing"
            else f"is wrong: {said[:1].lower()}{said[1:]}"
        )
        problems.append({"field": field, "problem": problem})
    said = "; ".join(f"{p['field']} {p['problem']}" for p in problems[:MAX_PROBLEMS])
    more = len(exc.errors()) - MAX_PROBLEMS
    return MCPError(
        INVALID_PARAMS,
        f"invalid params for {clipped(method, 60)}: {said or 'they do not match its schema'}"
        + (f"; and {more} more" if more > 0 else ""),
        {"problems": problems},
    )
