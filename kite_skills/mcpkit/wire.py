"""Replies kept in wire form: the one exception to "handlers return the SDK's models".

Handlers return the SDK's models (``types.CallToolResult``, ``types.ListToolsResult`` …) and
the SDK turns each into JSON on every call (``model_dump(by_alias=True, mode="json",
exclude_none=True)``, ``_dump_result`` in mcp/server/runner.py). A few replies never change
once made: a help page and an unknown help key's answer (the catalog never changes after
loading), a catalog recipe's ``prompts/list`` entry, a ``calc`` answer (it depends on its
arguments alone; :class:`.tools.CalcTool` keeps the last few requests'). Building,
validating and dumping their models again on every call cost more than the SDK's own
dispatch, so those are made once, by
:func:`wire`, and kept as :data:`WireJSON` (in a :class:`Kept` table, or a field built at
start-up).

The bench rows that justify it: bench/run.py section "2. request cost", "help root", "help
topic", "help recipe" and "help unknown key vs the baseline's no-op tool call",
"prompts/list vs the baseline's no-op tool call", and "calc greeks (4 legs)" and "calc
payoff (4 legs, 200-point grid)" (target p50 ≤ 1.20× the no-op).

Rules:

* A :data:`WireJSON` is made only by :func:`wire`, from the model it stands for: the model
  checks the shape once, and the wire form is exactly what the SDK would send for it.
* It is never changed after it is made. The SDK copies a returned dict before shaping it
  (``_dump_result``), so returning the same one to every caller is safe.
* A handler that may answer with one returns ``Model | WireJSON`` (e.g. :data:`ToolReply`) and
  is registered with :func:`serve`: the typed ``on_*`` arguments of the SDK's ``Server``
  accept only the model, while its handler contract (``HandlerResult``) takes a dict as well.

One listing is assembled rather than made whole: ``prompts/list`` (:mod:`.prompts`) is the kept
recipes' entries (each made by :func:`wire`) followed by one entry per live user skill, written
as a dict there (a model per skill on each call is what the listing's kept form avoids), and it
is registered with ``add_request_handler`` directly.

Not :data:`WireJSON`: the Skills extension's methods (``skills/list``, ``skills/get``,
``resources/directory/read``, :mod:`.skills_extension`) answer with plain dicts because the
SDK has no model for them; their shapes come from the catalog's ``to_dict()``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, NewType, TypeVar

from mcp import types
from mcp.server.lowlevel import Server
from pydantic import BaseModel

from .aliases import Context

__all__ = ["Kept", "ToolReply", "WireJSON", "serve", "wire"]

WireJSON = NewType("WireJSON", dict[str, Any])
"""The wire JSON the SDK would make of a model (a handler's result); see :func:`wire`."""

ToolReply = types.CallToolResult | WireJSON
"""A ``tools/call`` answer: the model, or its wire form when that is kept."""

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
P = TypeVar("P", bound=BaseModel)


def wire(model: BaseModel) -> WireJSON:
    """``model`` as the SDK puts a handler's result on the wire."""
    return WireJSON(model.model_dump(by_alias=True, mode="json", exclude_none=True))


class Kept(Generic[K, V]):
    """Answers made once per key and kept (each holds :data:`WireJSON` made by :func:`wire`).

    At most ``limit`` keys are kept (None: no limit, for keys that are finite by nature, such
    as the catalog's pages); past it, an answer is made again on each call, so a client that
    sends ever new keys cannot grow the table without bound."""

    def __init__(self, limit: int | None = None) -> None:
        self._limit = limit
        self._kept: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        return self._kept.get(key)

    def keep(self, key: K, answer: V) -> V:
        """Keep ``answer`` for ``key`` (unless the table is full); returns ``answer``."""
        if self._limit is None or len(self._kept) < self._limit:
            self._kept[key] = answer
        return answer

    def __len__(self) -> int:
        return len(self._kept)


def serve(
    server: Server[Any],
    method: str,
    params_type: type[P],
    handler: Callable[[Context, P], Awaitable[BaseModel | WireJSON]],
) -> None:
    """Serve ``method`` with a handler that answers with the SDK's model or its kept wire
    form (the ``on_*`` constructor arguments are typed for the model alone:
    tests/test_sdk_faults.py::test_on_call_tool_is_typed_for_the_model_alone)."""
    server.add_request_handler(method, params_type, handler)
