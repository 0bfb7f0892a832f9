"""The tool registry: each tool's declaration (name, input schema, output schema,
annotations) and the handler that serves it, in one table per server. ``tools/list``, the
dispatch of ``tools/call``, ``EXCLUDED_TOOLS`` and the tests over every tool are all derived from
a :class:`ToolRegistry`; a server registers its tools and nothing more.

Also here: the alias every handler is typed with (:data:`Context`), a tool's result
(:data:`ToolResult`: the model or its kept wire form, :mod:`.wire`), and the arguments check
(:func:`argument_problems`), which the SDK leaves to each handler for a lowlevel ``Server``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from mcp import types

from .aliases import Context
from .wire import ToolReply

__all__ = [
    "Context",
    "ToolRegistry",
    "ToolResult",
    "ToolRun",
    "ToolSpec",
    "argument_problems",
    "parse_excluded",
    "text_result",
    "tool_error",
    "validator_problems",
]

ToolResult = ToolReply  # a tool's result: the model, or its kept wire form (.wire)
ToolRun = Callable[[Context, dict[str, Any]], Awaitable[ToolResult]]
"""A tool's handler: the request's context and its arguments (by name) in, its result out."""


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its declaration as ``tools/list`` shows it (name, title, description, input
    and output schema, annotations) and its handler."""

    tool: types.Tool
    run: ToolRun

    @property
    def name(self) -> str:
        return self.tool.name


class ToolRegistry:
    """A server's tools, by name; the one table ``tools/list`` and ``tools/call`` read."""

    def __init__(self, specs: Iterable[ToolSpec]) -> None:
        self._specs: dict[str, ToolSpec] = {}
        for spec in specs:
            if spec.name in self._specs:
                raise ValueError(f"two tools are named {spec.name!r}: each name is registered once")
            self._specs[spec.name] = spec
        self._specs = dict(sorted(self._specs.items()))

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def names(self) -> list[str]:
        return list(self._specs)

    def get(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def excluding(self, excluded: Iterable[str]) -> ToolRegistry:
        """The registry without the tools named in ``excluded`` (``EXCLUDED_TOOLS``)."""
        left_out = frozenset(excluded)
        return ToolRegistry(s for n, s in self._specs.items() if n not in left_out)

    def listing(self, hidden: Iterable[str] = ()) -> types.ListToolsResult:
        """``tools/list``'s answer: every tool, by name, but those in ``hidden``."""
        left_out = frozenset(hidden)
        return types.ListToolsResult(
            tools=[s.tool for n, s in self._specs.items() if n not in left_out]
        )


def parse_excluded(value: str | None) -> frozenset[str]:
    """``EXCLUDED_TOOLS``: comma-separated tool names, spaces trimmed, as the Kite MCP server
    reads it (zerodha/kite-mcp-server@847fe98b40caa1888bf775c25dd5ba8cf5bb2c2d:mcp/mcp.go:66)."""
    return frozenset(n.strip() for n in (value or "").split(",") if n.strip())


def text_result(text: str, structured: Mapping[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=dict(structured) if structured is not None else None,
    )


def tool_error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


# One validator per tool schema (the schemas live as long as the server).
_VALIDATORS: dict[int, tuple[Mapping[str, Any], Any]] = {}
# Per schema, a check that accepts only arguments the schema plainly allows (None: no such
# check for this schema). jsonschema costs tens of µs a call; arguments it would accept go
# through this instead, and anything else still gets jsonschema's own messages.
_PLAIN: dict[int, tuple[Mapping[str, Any], Callable[[Any], bool] | None]] = {}
_PLAIN_OBJECT_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties"})
_PLAIN_VALUE_KEYWORDS = frozenset({"type", "description", "default", "minimum", "maximum"})


def _plain_check(schema: Mapping[str, Any]) -> Callable[[Any], bool] | None:
    """A check for a flat object schema whose properties are strings and integers (with
    optional bounds); None for any schema with more to it. Never accepts what the schema
    refuses: an integer must be an ``int`` (not a bool, nor a float jsonschema would allow)."""
    properties = schema.get("properties", {})
    if (
        schema.get("type") != "object"
        or not set(schema) <= _PLAIN_OBJECT_KEYWORDS
        or schema.get("additionalProperties", False) is not False
        or not isinstance(properties, dict)
    ):
        return None
    checks: dict[str, Callable[[Any], bool]] = {}
    for name, spec in properties.items():
        if not isinstance(spec, dict) or not set(spec) <= _PLAIN_VALUE_KEYWORDS:
            return None
        if spec.get("type") == "string":
            checks[name] = _is_str
        elif spec.get("type") == "integer":
            low, high = spec.get("minimum"), spec.get("maximum")
            if not all(b is None or type(b) is int for b in (low, high)):
                return None
            checks[name] = _int_check(low, high)
        else:
            return None
    required = tuple(schema.get("required", ()))

    def plain(arguments: Any) -> bool:
        return (
            type(arguments) is dict
            and all(name in arguments for name in required)
            and all(name in checks and checks[name](v) for name, v in arguments.items())
        )

    return plain


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _int_check(low: int | None, high: int | None) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        return (
            type(value) is int and (low is None or value >= low) and (high is None or value <= high)
        )

    return check


def argument_problems(schema: Mapping[str, Any], arguments: Any) -> list[str]:
    """Every way ``arguments`` break the tool's input schema, for the model to fix."""
    plain = _PLAIN.get(id(schema))
    if plain is None or plain[0] is not schema:
        plain = _PLAIN[id(schema)] = (schema, _plain_check(schema))
    if plain[1] is not None and plain[1](arguments):
        return []
    cached = _VALIDATORS.get(id(schema))
    if cached is not None and cached[0] is schema:
        validator = cached[1]
    else:
        # ~0.1 s and ~6 MB of imports, paid only once arguments need jsonschema's verdict.
        import jsonschema

        validator = jsonschema.Draft202012Validator(schema)
        _VALIDATORS[id(schema)] = (schema, validator)
    return validator_problems(validator, arguments)


def validator_problems(validator: Any, arguments: Any) -> list[str]:
    """A jsonschema validator's verdict on ``arguments``, one line a problem, by path."""
    problems = []
    for error in sorted(validator.iter_errors(arguments), key=lambda e: list(e.path)):
        where = "/".join(str(p) for p in error.path) or "arguments"
        message = error.message if len(error.message) <= 200 else error.message[:200] + "…"
        problems.append(f"{where}: {message}")
    return problems
