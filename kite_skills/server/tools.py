"""The tool table: each tool's schema and the function that serves it.

``list_tools`` and ``call_tool`` in app.py only render and look up this table.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp import types
from mcp.server.context import ServerRequestContext

from ..catalog import Catalog
from ..errors import HelpKeyError
from .negotiation import client_has_skills

Context = ServerRequestContext[Any, Any]
Runner = Callable[[Context, dict[str, Any]], Awaitable[types.CallToolResult]]


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


def argument_problems(schema: Mapping[str, Any], arguments: Any) -> list[str]:
    """Every way ``arguments`` break the tool's input schema, for the model to fix."""
    cached = _VALIDATORS.get(id(schema))
    if cached is not None and cached[0] is schema:
        validator = cached[1]
    else:
        import jsonschema  # ~0.1 s of imports: paid at the first tool call, not at start-up

        validator = jsonschema.Draft202012Validator(schema)
        _VALIDATORS[id(schema)] = (schema, validator)
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
            "'/orders/reconcile' for a recipe's steps. Case-sensitive; at most 1024 bytes.",
        }
    },
    "additionalProperties": False,
}

_CHILD = {
    "type": "object",
    "properties": {
        "key": {"type": "string"},
        "label": {"type": "string", "enum": ["category", "recipe"]},
        "description": {"type": "string"},
    },
    "required": ["key", "label", "description"],
}

HELP_OUTPUT = {
    "type": "object",
    "properties": {
        "key": {"type": "string"},
        "kind": {"type": "string", "enum": ["root", "category", "recipe"]},
        "title": {"type": "string"},
        "description": {"type": "string"},
        "parent": {"type": "string"},
        "text": {"type": "string", "description": "The page's Markdown, links shown as keys"},
        "children": {"type": "array", "items": _CHILD},
    },
    "required": ["key", "kind", "title", "description", "text", "children"],
}

USE_SKILLS = (
    "this client declared the Skills extension, so the catalog is served through it: "
    "call skills/list to see every skill, skills/get for one, and resources/read to read "
    "a file such as skill://orders/SKILL.md"
)


def help_tool(catalog: Catalog) -> ToolSpec:
    async def run(ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
        if client_has_skills(ctx):
            return tool_error(USE_SKILLS)
        problems = argument_problems(HELP_INPUT, arguments)
        if problems:
            return tool_error("invalid help arguments — " + "; ".join(problems))
        try:
            page = catalog.help(arguments.get("key"))
        except HelpKeyError as exc:
            return tool_error(str(exc))
        return text_result(page.to_markdown(), page.to_dict())

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
        output_schema=HELP_OUTPUT,
        annotations=types.ToolAnnotations(
            title="Kite workflow help",
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )
    return ToolSpec(tool, run)
