"""The recorded tool schemas of the three Kite MCP server generations: one owner for them.

The JSON files beside this module are copied unchanged from the transcription of
zerodha/kite-mcp-server (``tools-grouped.json``, ``tools-legacy.json``,
``tools-legacy-oldest.json``); each tool keeps ``name``, ``description``, ``inputSchema``,
``source`` and the transcription's ``x_handler`` / ``x_modes`` (what the Go handler requires,
reads, ignores and defaults, per mode). The sandbox serves them, ``catalog validate`` checks
recipes' calls against them, and the content tests take their vocabulary from them.

Generations:

- ``grouped``: the 7 grouped tools that take a ``mode`` (``orders`` mode ``place``);
- ``legacy``: the separate tools of the go-sdk build (upstream ``847fe98``);
- ``legacy-oldest``: the separate tools of the mcp-go build (upstream ``dcf2dc4``): no exact
  search lookups, no ``verbosity``, no holdings ``type``, no ``alerts``.

A legacy tool without modes has one ``ModeSchema`` under the key ``""``, built from its
``x_handler``. Pure: no MCP import; files are read with ``importlib.resources`` so they load
inside the zipapp too.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Literal, get_args

Generation = Literal["grouped", "legacy", "legacy-oldest"]
GENERATIONS: tuple[Generation, ...] = get_args(Generation)

_FILES: dict[Generation, str] = {
    "grouped": "grouped.json",
    "legacy": "legacy.json",
    "legacy-oldest": "legacy-oldest.json",
}

# Grouped tool + mode -> the legacy tool that does the same (modes without one are absent).
LEGACY_TWIN: dict[tuple[str, str], str] = {
    ("portfolio", "profile"): "get_profile",
    ("portfolio", "margins"): "get_margins",
    ("portfolio", "holdings"): "get_holdings",
    ("portfolio", "positions"): "get_positions",
    ("orders", "list"): "get_orders",
    ("orders", "all_trades"): "get_trades",
    ("orders", "history"): "get_order_history",
    ("orders", "trades"): "get_order_trades",
    ("orders", "place"): "place_order",
    ("orders", "modify"): "modify_order",
    ("orders", "cancel"): "cancel_order",
    ("gtt", "list"): "get_gtts",
    ("gtt", "place"): "place_gtt_order",
    ("gtt", "modify"): "modify_gtt_order",
    ("gtt", "delete"): "delete_gtt_order",
    ("market", "quote"): "get_quotes",
    ("market", "ltp"): "get_ltp",
    ("market", "ohlc"): "get_ohlc",
    ("market", "historical"): "get_historical_data",
    ("market", "search"): "search_instruments",
    ("alerts", "get"): "alerts",
    ("alerts", "create"): "alerts",
    ("alerts", "modify"): "alerts",
    ("alerts", "delete"): "alerts",
    ("mutual_funds", "holdings"): "get_mf_holdings",
}

# A parameter the legacy twin names differently: the grouped search's ``search_mode`` is the
# legacy ``search_instruments``'s ``mode`` (same values).
LEGACY_RENAMED: dict[str, dict[str, str]] = {"search_instruments": {"search_mode": "mode"}}

_PLAIN_NAME = re.compile(r"[a-z_][a-z0-9_]*")


@dataclass(frozen=True)
class ParamSchema:
    """One input parameter as the schema declares it."""

    name: str
    type: str | None
    description: str
    enum: tuple[str, ...] | None = None  # allowed values, as text
    default: str | None = None  # the schema's default, as text


@dataclass(frozen=True)
class ModeSchema:
    """What the handler does for one mode (``""`` for a legacy tool without modes)."""

    name: str
    required: tuple[str, ...] = ()  # the handler refuses a call without these
    conditional: tuple[str, ...] = ()  # requirements that depend on values, as recorded text
    reads: tuple[str, ...] = ()  # parameters the handler is recorded to read (besides required)
    ignored: tuple[str, ...] = ()  # parameters the handler ignores even when given
    defaults: dict[str, str] = field(default_factory=dict, hash=False)
    # parameter -> its value -> what that value requires (the search lookup types)
    required_by_value: dict[str, dict[str, tuple[str, ...]]] = field(
        default_factory=dict, hash=False
    )
    kite_call: str = ""  # the Kite Connect request, e.g. "POST /orders/{variety}"
    paginated: bool = False  # slices on the server with ``from`` / ``limit``

    @property
    def writes(self) -> bool:
        """The mode changes the account (a POST, PUT or DELETE to Kite)."""
        return self.kite_call.startswith(("POST ", "PUT ", "DELETE "))


@dataclass(frozen=True)
class ToolSchema:
    """One tool of one generation."""

    name: str
    description: str
    input_schema: dict[str, Any] = field(hash=False)  # the wire ``inputSchema``, as recorded
    source: str
    generation: Generation
    params: dict[str, ParamSchema] = field(hash=False)
    modes: dict[str, ModeSchema] = field(hash=False)  # key "" when the tool has no modes

    @property
    def has_modes(self) -> bool:
        return "" not in self.modes

    @property
    def writes(self) -> bool:
        """Some mode of the tool changes the account."""
        return any(mode.writes for mode in self.modes.values())

    def mode(self, name: str | None) -> ModeSchema | None:
        """The mode ``name`` (None or "" for a tool without modes), or None when unknown."""
        return self.modes.get(name or "")

    def to_wire(self) -> dict[str, Any]:
        """The tool as ``tools/list`` shows it: name, description, inputSchema."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": json.loads(json.dumps(self.input_schema)),
        }


def load(generation: Generation) -> tuple[ToolSchema, ...]:
    """Every tool of ``generation``, in the server's registration order."""
    return _load(generation)


def tools(generation: Generation) -> dict[str, ToolSchema]:
    """The tools of ``generation`` by name."""
    return {tool.name: tool for tool in _load(generation)}


def raw(generation: Generation) -> list[dict[str, Any]]:
    """The recorded file of ``generation`` as parsed JSON (a fresh copy)."""
    data: list[dict[str, Any]] = json.loads(_text(generation))
    return data


@cache
def _text(generation: Generation) -> str:
    if generation not in _FILES:
        raise ValueError(f"unknown generation {generation!r}; one of {', '.join(GENERATIONS)}")
    return resources.files(__name__).joinpath(_FILES[generation]).read_text("utf-8")


@cache
def _load(generation: Generation) -> tuple[ToolSchema, ...]:
    return tuple(_tool(entry, generation) for entry in raw(generation))


def _text_of(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _tool(entry: dict[str, Any], generation: Generation) -> ToolSchema:
    schema: dict[str, Any] = entry.get("inputSchema") or {}
    params = {
        name: ParamSchema(
            name,
            spec.get("type"),
            spec.get("description", ""),
            tuple(_text_of(v) for v in spec["enum"]) if "enum" in spec else None,
            _text_of(spec["default"]) if "default" in spec else None,
        )
        for name, spec in (schema.get("properties") or {}).items()
    }
    handler: dict[str, Any] = entry.get("x_handler") or {}
    recorded: dict[str, Any] = entry.get("x_modes") or {}
    if recorded:
        modes = {name: _mode(name, facts, recorded) for name, facts in recorded.items()}
    else:
        modes = {"": _mode("", handler, {})}
    return ToolSchema(
        entry["name"],
        entry.get("description", ""),
        schema,
        entry.get("source", ""),
        generation,
        params,
        modes,
    )


def _mode(name: str, facts: dict[str, Any], siblings: dict[str, Any]) -> ModeSchema:
    required: list[str] = []
    conditional: list[str] = []
    for item in facts.get("required_by_handler") or facts.get("validated_required") or []:
        text = str(item)
        head, _, note = text.partition(" (")
        if text == "same as create" and "create" in siblings:
            created = _mode("create", siblings["create"], siblings)
            required += [p for p in created.required if p not in required]
            conditional += created.conditional
        elif _PLAIN_NAME.fullmatch(head) and not note.startswith("if "):
            required.append(head)
        else:
            conditional.append(text)
    reads = [
        str(p)
        for key in ("uses", "uses_single", "uses_two_leg")
        for p in facts.get(key) or []
        if str(p) not in required
    ]
    by_value_facts = facts.get("per_search_mode_required") or facts.get("per_mode_required")
    by_value: dict[str, dict[str, tuple[str, ...]]] = {}
    if by_value_facts:
        param = "search_mode" if "per_search_mode_required" in facts else "mode"
        by_value[param] = {str(k): tuple(str(p) for p in v) for k, v in by_value_facts.items()}
    return ModeSchema(
        name,
        tuple(required),
        tuple(conditional),
        tuple(reads),
        tuple(str(p) for p in facts.get("ignored_even_if_given") or []),
        {str(k): _text_of(v) for k, v in (facts.get("defaults") or {}).items()},
        by_value,
        str(facts.get("kite_call") or ""),
        _paginated(facts),
    )


def _paginated(facts: dict[str, Any]) -> bool:
    """Recorded as slicing with ``from``/``limit`` ("none" says a mode does not), or
    answering with a ``pagination`` block (grouped search records only its response)."""
    recorded = facts.get("pagination")
    if recorded is not None:
        return not str(recorded).startswith("none")
    return '"pagination"' in str(facts.get("response") or "")


__all__ = [
    "GENERATIONS",
    "LEGACY_RENAMED",
    "LEGACY_TWIN",
    "Generation",
    "ModeSchema",
    "ParamSchema",
    "ToolSchema",
    "load",
    "raw",
    "tools",
]
