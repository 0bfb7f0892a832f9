"""The main server's own tools that are not the user's skills: the ``help`` tool and the
``calc`` tool's adapter.

Each tool is a :class:`~kite_skills.mcpkit.ToolSpec`, registered in the server's one
:class:`~kite_skills.mcpkit.ToolRegistry` by :func:`.handlers.all_tools`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

from mcp import types

from ..catalog import HELP_PAGE_SCHEMA, MAX_KEY_BYTES, Catalog
from ..errors import HelpKeyError, HelpKeyTooLong
from ..mcpkit import (
    Context,
    Kept,
    ToolResult,
    ToolSpec,
    WireJSON,
    argument_problems,
    text_result,
    tool_error,
    wire,
)
from .skills_extension import client_has_skills

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
# Eight, not more: a kept payoff holds its grid (a 200-point one some 20 KB of objects), and
# 32 of them were 0.6 MB of the warm server (bench section 5, "peak RSS of the warm server").
CALC_ANSWERS_KEPT = 8


class CalcTool:
    """The ``calc`` tool: the calculators imported at the first call, each answer in wire form,
    the first :data:`CALC_ANSWERS_KEPT` distinct requests' kept."""

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
