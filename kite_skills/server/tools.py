"""The tool table: each tool's schema and the function that serves it, the ``help`` tool and
the ``calc`` tool's adapter.

``list_tools`` and ``call_tool`` (:class:`.handlers.Handlers`) only render and look up this
table.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from mcp import types
from mcp.server.context import ServerRequestContext

from ..catalog import HELP_PAGE_SCHEMA, MAX_KEY_BYTES, Catalog
from ..errors import HelpKeyError, HelpKeyTooLong
from .skills_extension import client_has_skills
from .wire import Kept, ToolReply, WireJSON, wire

Context = ServerRequestContext[Any, Any]
ToolResult = ToolReply  # a tool's result: the model, or its kept wire form (.wire)
Runner = Callable[[Context, dict[str, Any]], Awaitable[ToolResult]]


@dataclass(frozen=True)
class ToolSpec:
    tool: types.Tool
    run: Runner


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


HELP_INPUT = {
    "type": "object",
    "properties": {
        "key": {
            "type": "string",
            "description": "Help key: '/' (or omit) for the topics, '/orders' for a topic, "
            "'/orders/reconcile' for a recipe's steps. Case-sensitive; at most "
            f"{MAX_KEY_BYTES} bytes.",
        }
    },
    "additionalProperties": False,
}

USE_SKILLS = (
    "this client declared the Skills extension, so the catalog is served through it: "
    "call skills/list to see every skill, skills/get for one, and resources/read to read "
    "a file such as skill://orders/SKILL.md"
)


# An unknown key's answer is kept for this many keys (an agent retrying the same wrong key is
# answered from memory); past it, new ones are worked out on each call.
UNKNOWN_KEYS_KEPT = 256


@dataclass(frozen=True)
class HelpAnswer:
    """The ``help`` tool's answer to one key, kept: the reply in wire form and, for a recipe
    page, its key (each read of a recipe gets a read receipt)."""

    reply: WireJSON
    recipe: str | None = None


class HelpTool:
    """The ``help`` tool's answers, each worked out once per key: the one cache of help pages
    (the catalog never changes after loading, and rendering, validating and dumping a page
    on every call cost more than the SDK's dispatch; bench rows "help …", see .wire)."""

    def __init__(
        self, catalog: Catalog, on_recipe: Callable[[Context, str], None] | None = None
    ) -> None:
        self._catalog = catalog
        self._on_recipe = on_recipe
        self._pages: Kept[str | None, HelpAnswer] = Kept()  # keys naming a page: finite
        self._unknown: Kept[str | None, HelpAnswer] = Kept(UNKNOWN_KEYS_KEPT)

    async def run(self, ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        if client_has_skills(ctx):
            return tool_error(USE_SKILLS)
        problems = argument_problems(HELP_INPUT, arguments)
        if problems:
            return tool_error("invalid help arguments — " + "; ".join(problems))
        answer = self.answer(arguments.get("key"))
        if answer.recipe is not None and self._on_recipe is not None:
            self._on_recipe(ctx, answer.recipe)
        return answer.reply

    def answer(self, key: str | None) -> HelpAnswer:
        """The answer to ``key``: its page, or the error that says where to look instead."""
        kept = self._pages.get(key) or self._unknown.get(key)
        if kept is not None:
            return kept
        try:
            page = self._catalog.help(key)
        except HelpKeyTooLong as exc:  # not kept: each such key is a new one
            return HelpAnswer(wire(tool_error(str(exc))))
        except HelpKeyError as exc:
            return self._unknown.keep(key, HelpAnswer(wire(tool_error(str(exc)))))
        reply = wire(text_result(page.to_markdown(), page.to_dict()))
        return self._pages.keep(key, HelpAnswer(reply, page.key if page.kind == "recipe" else None))


def help_tool(
    catalog: Catalog, on_recipe: Callable[[Context, str], None] | None = None
) -> ToolSpec:
    """The ``help`` tool; ``on_recipe(ctx, key)`` is told of each recipe page served (read
    receipts)."""
    tool = types.Tool(
        name="help",
        title="Kite workflow help",
        description=(
            "Browse trusted workflow recipes for a Zerodha Kite account: orders, holdings, "
            "market data, technical analysis, triggers and alerts, daily review, "
            "troubleshooting. Start with no key for the topics, then follow the keys shown. "
            "Recipes never replace the user's explicit approval of a transaction."
        ),
        input_schema=HELP_INPUT,
        output_schema=HELP_PAGE_SCHEMA,
        annotations=types.ToolAnnotations(
            title="Kite workflow help",
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )
    return ToolSpec(tool, HelpTool(catalog, on_recipe).run)


CALC_DESCRIPTION = (
    "Verified calculators for the numbers a recipe asks for, so that no money number rests "
    "on mental arithmetic. Pick a mode: tick (round a price for its purpose), lots (whole "
    "lots, split at the freeze quantity), sellable (what a holding can sell, GTT cover, "
    "TPIN), check_order (every finding on a proposed order), size (quantity for a risk "
    "budget), greeks (IV and Greeks, per leg and portfolio), payoff (multi-leg payoff, "
    "breakevens, max profit and loss), charges (brokerage, taxes, fees, breakeven move, "
    "dated rates), exit_plan (safe square-off order). Each answer states its inputs, "
    "assumptions and roundings. It only computes: it reads and changes nothing."
)


# calc's answers kept in wire form, for this many distinct requests: an answer depends only on
# its arguments (no clock is read), and an agent asks the same again before it writes (bench
# section 2, "calc greeks" and "calc payoff"); past it, each new request is worked out anew.
CALC_ANSWERS_KEPT = 32


class CalcTool:
    """The ``calc`` tool: the calculators imported at the first call, each answer in wire form,
    the last :data:`CALC_ANSWERS_KEPT` distinct requests' kept."""

    def __init__(self) -> None:
        self._kept: Kept[str, WireJSON] = Kept(CALC_ANSWERS_KEPT)

    async def run(self, ctx: Context, arguments: dict[str, Any]) -> ToolResult:
        key = json.dumps(arguments, sort_keys=True, separators=(",", ":"))
        return self._kept.get(key) or self._kept.keep(key, self.answer(arguments))

    @staticmethod
    def answer(arguments: dict[str, Any]) -> WireJSON:
        from .. import calc  # at the first call, not at the server's start

        try:
            answer = calc.calculate(arguments)
        except calc.CalcError as exc:
            return wire(tool_error(str(exc)))
        return wire(text_result(answer.to_text(), answer.to_dict()))


def calc_tool() -> ToolSpec:
    """The ``calc`` tool: its schemas are read from ``kite_skills/calc/tool.json`` so that
    listing the tools imports none of the calculators."""
    schemas = json.loads(
        (resources.files("kite_skills") / "calc" / "tool.json").read_text(encoding="utf-8")
    )
    tool = types.Tool(
        name="calc",
        title="Kite calculators",
        description=CALC_DESCRIPTION,
        input_schema=schemas["input"],
        output_schema=schemas["output"],
        annotations=types.ToolAnnotations(
            title="Kite calculators",
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )
    return ToolSpec(tool, CalcTool().run)
