"""Verified calculators for every number a recipe asks for (issue 42): one entry point,
:func:`calculate` (a mode and its JSON arguments), for the ``calc`` MCP tool and for
``kite-skills calc MODE``.

Pure: the standard library's ``math`` and ``decimal``, and pydantic for the inputs; no MCP
import. Every answer is deterministic (no clock is read: times are inputs)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module, resources
from types import ModuleType
from typing import Any

from pydantic import BaseModel

from ..errors import CalcError
from ._common import Answer
from ._validate import validated

__all__ = [
    "MODES",
    "OUTPUT_SCHEMA",
    "TOOL_JSON",
    "Answer",
    "CalcError",
    "Mode",
    "calculate",
    "input_schema",
]


@dataclass(frozen=True)
class Mode:
    """A mode: its name, what it works out, and the module of this package that does it
    (``model`` its inputs, ``run`` the calculator). The module is imported at the mode's first
    use: a server that answers greeks and payoff loads no charges table (bench section 5,
    "peak RSS of the warm server")."""

    name: str
    summary: str
    module: str
    model_name: str
    run_name: str

    def _module(self) -> ModuleType:
        return import_module(f"{__name__}.{self.module}")

    @property
    def model(self) -> type[BaseModel]:
        model: type[BaseModel] = getattr(self._module(), self.model_name)
        return model

    @property
    def run(self) -> Callable[[Any], Answer]:
        run: Callable[[Any], Answer] = getattr(self._module(), self.run_name)
        return run


MODES: dict[str, Mode] = {
    m.name: m
    for m in (
        Mode("tick", "a price to the tick for its purpose", "rounding", "TickInputs", "tick"),
        Mode(
            "lots",
            "a quantity to whole lots, split at the freeze quantity",
            "rounding",
            "LotsInputs",
            "lots",
        ),
        Mode(
            "sellable",
            "what a holding can sell now, back with a GTT, and whether a TPIN is needed",
            "holdings",
            "SellableInputs",
            "sellable",
        ),
        Mode(
            "check_order",
            "every finding on a proposed order (fat finger, tick, lot, freeze, band, funds)",
            "orders",
            "CheckOrderInputs",
            "check_order",
        ),
        Mode(
            "size",
            "the quantity that risks a given amount between entry and stop",
            "orders",
            "SizeInputs",
            "size",
        ),
        Mode(
            "greeks",
            "implied volatility and Greeks per leg and for the portfolio",
            "greeks",
            "GreeksInputs",
            "run",
        ),
        Mode(
            "payoff",
            "a multi-leg payoff: grid, breakevens, maximum profit and loss",
            "payoff",
            "PayoffInputs",
            "run",
        ),
        Mode(
            "charges",
            "brokerage, taxes and fees of a trade, and the breakeven move",
            "charges",
            "ChargesInputs",
            "run",
        ),
        Mode(
            "exit_plan",
            "the order to square off the Net positions safely",
            "exits",
            "ExitPlanInputs",
            "exit_plan",
        ),
    )
}


def calculate(arguments: Any) -> Answer:
    """The answer for ``arguments`` (``mode`` and that mode's fields), or a
    :class:`CalcError` that names every field's problem."""
    if not isinstance(arguments, dict):
        raise CalcError("?", ["arguments: send a JSON object with `mode` and the mode's fields"])
    mode = arguments.get("mode")
    if not isinstance(mode, str) or mode not in MODES:
        names = ", ".join(MODES)
        raise CalcError(str(mode), [f"`mode`: {mode!r} is no mode — send one of {names}"])
    spec = MODES[mode]
    fields = {k: v for k, v in arguments.items() if k != "mode"}
    return spec.run(validated(mode, spec.model, fields))


OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "mode": {"type": "string"},
        "inputs": {"type": "object", "description": "the inputs used, defaults filled in"},
        "result": {"type": "object", "description": "the mode's numbers (docs/calc.md)"},
        "assumptions": {"type": "array", "items": {"type": "string"}},
        "roundings": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["mode", "inputs", "result", "assumptions", "roundings"],
    "additionalProperties": False,
}

TOOL_JSON = "tool.json"  # input and output schemas, read by the server without importing this


def input_schema() -> dict[str, Any]:
    """The tool's input schema: ``mode`` and every mode's fields in one flat object (the Kite
    MCP server's grouped-tool convention); each field's description names its modes. Each
    mode's own model decides, with every problem reported."""
    properties: dict[str, Any] = {
        "mode": {
            "type": "string",
            "enum": list(MODES),
            "description": "; ".join(f"{m.name}: {m.summary}" for m in MODES.values()),
        }
    }
    defs: dict[str, Any] = {}
    seen: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for mode in MODES.values():
        schema = mode.model.model_json_schema()
        defs.update(schema.get("$defs", {}))
        for name, prop in schema["properties"].items():
            seen.setdefault(name, []).append((mode.name, _untitled(prop)))
    for name in sorted(seen):
        variants = seen[name]
        shapes: list[dict[str, Any]] = []
        for _, prop in variants:
            shape = {k: v for k, v in prop.items() if k not in ("description", "default")}
            if shape not in shapes:
                shapes.append(shape)
        by_text: dict[str, list[str]] = {}
        for mode_name, prop in variants:
            by_text.setdefault(prop.get("description", ""), []).append(mode_name)
        text = "; ".join(f"{', '.join(modes)}: {t}" for t, modes in by_text.items())
        merged = dict(shapes[0]) if len(shapes) == 1 else {"anyOf": _flat_any(shapes)}
        properties[name] = {**merged, "description": text}
    # Nested models written out in place: some clients read no "$ref".
    inlined: dict[str, Any] = _inlined(properties, {k: _untitled(v) for k, v in defs.items()})
    return {
        "type": "object",
        "properties": inlined,
        "required": ["mode"],
        "additionalProperties": False,
    }


def _inlined(schema: Any, defs: dict[str, Any]) -> Any:
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            return {**_inlined(defs[ref.removeprefix("#/$defs/")], defs), **rest}
        return {k: _inlined(v, defs) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_inlined(v, defs) for v in schema]
    return schema


def _untitled(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _untitled(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_untitled(v) for v in schema]
    return schema


def _flat_any(shapes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for shape in shapes:
        for part in shape.get("anyOf", [shape]):
            if part not in out:
                out.append(part)
    return out


def tool_json() -> str:
    """The stored form of the schemas (``kite_skills/calc/tool.json``)."""
    return (
        json.dumps({"input": input_schema(), "output": OUTPUT_SCHEMA}, indent=1, ensure_ascii=False)
        + "\n"
    )


def stored_tool_json() -> str:
    return (resources.files(__package__) / TOOL_JSON).read_text(encoding="utf-8")
