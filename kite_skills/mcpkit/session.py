"""The handshake era's session rules, for any server on the kit, and errors that say what is
wrong.

The SDK (``mcp`` 2.3.0, pinned in requirements/) leaves loose what every server here keeps:

- **One ``initialize`` per session.** The SDK answers every ``initialize`` and commits its
  negotiation again (``mcp/server/runner.py:201-202, 239``), re-judging the client in the middle
  of a session (python-sdk#2605). Minimal reproduction: send ``initialize`` twice on one stdio
  connection; the bare SDK answers both (``tests/test_sdk_faults.py``), and with
  :class:`SessionRules` the second is refused (``tests/server/test_rules_in_process.py``).
- **A request before ``initialize``.** The SDK refuses it as "Invalid request parameters" with
  data ``""`` (``runner.py:211-213``), which names nothing to fix; :class:`SessionRules` says what
  to send first (only for a method the server serves: others keep "method not found").
  Reproduced by ``tests/test_sdk_faults.py``, as are the errors below.
- **Errors.** Params that do not fit get the same "Invalid request parameters", data ``""``
  (``mcp/shared/jsonrpc_dispatcher.py:104-105``), and an unexpected exception ``code 0`` on the
  handshake era (``jsonrpc_dispatcher.py:775-777``, its TODO L58: not a JSON-RPC error code);
  :func:`internal_errors` answers -32602 naming each field, and -32603.

Each connection's handshake state is a :class:`HandshakeState`, put in the lifespan's dict under
:data:`HANDSHAKE` by the server's lifespan (one per served connection). The rules import no
store and no server: the main server and the sandbox both use them.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from ..display import clipped
from .aliases import Context

__all__ = [
    "ALREADY_INITIALIZED",
    "HANDSHAKE",
    "NOT_INITIALIZED",
    "HandshakeState",
    "Middleware",
    "SessionRules",
    "handshake_of",
    "internal_errors",
    "invalid_params",
    "is_modern",
]

log = logging.getLogger("kite_skills.server")

Middleware = ServerMiddleware[Any]

HANDSHAKE: Final = "kite_skills.handshake"  # the key of a connection's HandshakeState
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


class HandshakeState:
    """One served connection's handshake: its legacy session once ``initialize`` was
    answered, and whether requests may come (``opened``). A connection that never sends
    ``initialize`` (2026-07-28) keeps ``session`` None."""

    def __init__(self) -> None:
        self.session: ServerSession | None = None
        self.opened = False  # initialize answered, or a bare notifications/initialized

    @property
    def initialized(self) -> bool:
        return self.session is not None


def is_modern(version: str) -> bool:
    """A 2026-07-28-era protocol version (no handshake; each request carries its ``_meta``)."""
    return version in MODERN_PROTOCOL_VERSIONS


def handshake_of(ctx: Context) -> HandshakeState | None:
    """This connection's handshake state; None when served without a lifespan that keeps one."""
    state = ctx.lifespan_context
    handshake = state.get(HANDSHAKE) if isinstance(state, dict) else None
    return handshake if isinstance(handshake, HandshakeState) else None


class SessionRules:
    """Middleware: one ``initialize`` per session, and a clear word to a request sent before
    it (only for a method ``server`` serves: others get the SDK's "method not found").
    SDK faults: python-sdk#2605; test_a_request_before_initialize_is_refused_naming_nothing."""

    def __init__(self, server: Server[Any]) -> None:
        self._server = server

    async def __call__(self, ctx: Context, call_next: CallNext) -> HandlerResult:
        state = handshake_of(ctx)
        if state is None or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return await call_next(ctx)
        if ctx.request_id is None:  # a notification
            if ctx.method == "notifications/initialized":
                state.opened = True
            return await call_next(ctx)
        if ctx.method == "initialize":
            if state.initialized:
                raise MCPError(INVALID_REQUEST, ALREADY_INITIALIZED)
            result = await call_next(ctx)
            state.session = ctx.session
            state.opened = True
            return result
        if not state.opened and ctx.method != "ping":
            if self._server.get_request_handler(ctx.method) is not None:
                raise MCPError(INVALID_PARAMS, NOT_INITIALIZED, {"method": clipped(ctx.method, 64)})
        return await call_next(ctx)


def internal_errors(internal: str) -> Middleware:
    """Middleware: params that do not fit get -32602 naming each field (:func:`invalid_params`),
    and unexpected exceptions -32603 saying ``internal`` (logged with their traceback). SDK
    faults: data ``""`` and ``code 0`` (its TODO L58), tests/test_sdk_faults.py."""

    async def middleware(ctx: Context, call_next: CallNext) -> HandlerResult:
        try:
            return await call_next(ctx)
        except MCPError:
            raise
        except ValidationError as exc:
            raise invalid_params(ctx.method, exc) from exc
        except Exception as exc:
            log.exception("%s failed", ctx.method)
            raise MCPError(INTERNAL_ERROR, internal) from exc

    return middleware


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
