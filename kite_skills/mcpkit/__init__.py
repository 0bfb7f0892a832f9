"""The MCP kit: what every MCP server in kite-skills stands on, whatever it serves.

- the stdio wire (:mod:`.stdio`: :func:`.stdio.serve`), in place of the SDK's transport;
- replies kept in wire form (:mod:`.wire`);
- the session rules of the handshake era, with their own state per connection
  (:mod:`.session`: :class:`SessionRules`, :class:`HandshakeState`, :data:`HANDSHAKE`), and
  errors that say what is wrong (:func:`internal_errors`);
- the typed tool registry (:mod:`.tools`: :class:`ToolSpec`, :class:`ToolRegistry`), from
  which ``tools/list``, ``tools/call``'s dispatch and ``EXCLUDED_TOOLS`` are derived;
- the localhost door, the HTTP guard of a listener on 127.0.0.1 (:mod:`.localhost`: ``Door``,
  ``guarded_protocol``, ``config``, ``Server``); imported by name, ``from kite_skills.mcpkit
  import localhost``, since it loads uvicorn, which a stdio server never needs;
- the shared aliases (:data:`Context`; ASGI types come from ``starlette.types``).

A server on the kit builds an SDK ``Server``, registers its tools in a :class:`ToolRegistry`,
puts a :class:`HandshakeState` in its lifespan under :data:`HANDSHAKE`, appends
``internal_errors(...)`` and ``SessionRules(server)`` to its middleware, and serves with
``stdio.serve``. The kit imports the SDK, pydantic, anyio and :mod:`kite_skills.display`;
never a server, the sandbox, the store or the catalog (tests/test_imports.py).

Each part that works around an SDK fault names the fault where it is worked around, with the
upstream issue where there is one; ``tests/test_sdk_faults.py`` reproduces each on the bare SDK
and fails once an upgrade fixes it (then the workaround goes).
"""

from . import stdio
from .aliases import Context
from .session import (
    HANDSHAKE,
    HandshakeState,
    Middleware,
    SessionRules,
    handshake_of,
    internal_errors,
    invalid_params,
)
from .tools import (
    ToolRegistry,
    ToolResult,
    ToolRun,
    ToolSpec,
    argument_problems,
    parse_excluded,
    text_result,
    tool_error,
    validator_problems,
)
from .wire import Kept, WireJSON, wire

__all__ = [
    "HANDSHAKE",
    "Context",
    "HandshakeState",
    "Kept",
    "Middleware",
    "SessionRules",
    "ToolRegistry",
    "ToolResult",
    "ToolRun",
    "ToolSpec",
    "WireJSON",
    "argument_problems",
    "handshake_of",
    "internal_errors",
    "invalid_params",
    "parse_excluded",
    "stdio",
    "text_result",
    "tool_error",
    "validator_problems",
    "wire",
]
