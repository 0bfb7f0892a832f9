"""Check every call a catalog page writes against the recorded schemas of each Kite MCP
server generation the page claims (``kite_schemas``), collecting every problem.

A page claims the generations its topic's SKILL.md lists in ``metadata`` under
``kite-mcp-generations`` (space- or comma-separated); without that key, all three. On each
generation a grouped call is checked as itself (``grouped``) or as its legacy twin (``legacy``,
``legacy-oldest``); a legacy name is checked on the legacy generations only.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

from .. import calc, kite_schemas
from ..kite_schemas import GENERATIONS, LEGACY_RENAMED, LEGACY_TWIN, Generation, ToolSchema
from . import _schema
from .calls import Call, Unavailable, extract
from .loader import CatalogFile, Scan
from .model import Problem

GENERATIONS_KEY = "kite-mcp-generations"

_ORDER = {g: i for i, g in enumerate(GENERATIONS)}


@dataclass(frozen=True)
class CallProblem:
    line: int  # relative to the text checked
    code: str
    message: str


@dataclass(frozen=True)
class _Finding:
    """One thing wrong with a call on one generation; equal findings on several generations
    become one problem naming them all."""

    code: str
    line: int
    subject: str  # what is wrong, without the generation ("has no parameter `x`")
    fix: str  # what to do


def claimed(frontmatter: dict[str, Any] | None) -> tuple[tuple[Generation, ...], str | None]:
    """The generations a SKILL.md's frontmatter claims, and a complaint about the value."""
    metadata = (frontmatter or {}).get("metadata")
    value = metadata.get(GENERATIONS_KEY) if isinstance(metadata, dict) else None
    if value is None:
        return GENERATIONS, None
    words = [w for w in str(value).replace(",", " ").split() if w]
    unknown = [w for w in words if w not in GENERATIONS]
    if unknown or not words:
        allowed = ", ".join(GENERATIONS)
        return GENERATIONS, (
            f"metadata '{GENERATIONS_KEY}' names {', '.join(unknown) or 'nothing'}; "
            f"list generations from: {allowed}"
        )
    return tuple(sorted({w for w in words if w in GENERATIONS}, key=_ORDER.__getitem__)), None


def topic_of(path: str, skill_files: set[str]) -> str | None:
    """The SKILL.md nearest above ``path`` (a catalog path), or None."""
    directory = posixpath.dirname(path)
    while directory:
        candidate = f"{directory}/{_schema.SKILL_FILE}"
        if candidate in skill_files:
            return candidate
        directory = posixpath.dirname(directory)
    return None


def call_problems(result: Scan) -> list[Problem]:
    """Every call problem of the scanned catalog: SKILL.md values naming generations, then
    each page's calls on the generations its topic claims."""
    skills = {p for p, f in result.files.items() if f.is_skill}
    out: list[Problem] = []
    claims: dict[str | None, tuple[Generation, ...]] = {None: GENERATIONS}
    for path in sorted(skills):
        file = result.files[path]
        claims[path], complaint = claimed(file.frontmatter)
        if complaint is not None:
            out.append(_problem(result, path, _metadata_line(file), "call-generations", complaint))
    for path in sorted(result.files):
        file = result.files[path]
        generations = claims[path if file.is_skill else topic_of(path, skills)]
        for problem in check_text(file.body, generations):
            line = file.body_line + problem.line - 1
            out.append(_problem(result, path, line, problem.code, problem.message))
    return out


def _problem(result: Scan, path: str, line: int, code: str, message: str) -> Problem:
    return Problem(f"{result.label}/{path}", line, code, message)


def _metadata_line(file: CatalogFile) -> int:
    lines = file.raw.decode("utf-8", "replace").split("\n")
    for number, text in enumerate(lines, start=1):
        if text.strip().startswith(GENERATIONS_KEY):
            return number
    return 1


def check_text(text: str, generations: tuple[Generation, ...]) -> list[CallProblem]:
    """Every problem of the calls in ``text`` on ``generations``, in line order.

    A mark ``(not on GEN: fallback)`` is written once, where the page first names the call:
    it covers every call of that tool and mode on the page, on GEN."""
    calls = extract(text)
    marks: dict[tuple[str, str | None], dict[Generation, Unavailable]] = {}
    for call in calls:
        if call.unavailable is not None:
            for generation in call.unavailable.generations:
                marks.setdefault((call.tool, call.mode), {}).setdefault(
                    generation, call.unavailable
                )
    out: list[CallProblem] = []
    rejected: set[tuple[str, str | None, Generation]] = set()
    for call in calls:
        covered = tuple(marks.get((call.tool, call.mode), {}))
        problems, rejecting = _check_call(call, generations, covered)
        out += problems
        rejected.update((call.tool, call.mode, g) for g in rejecting)
    for (tool, mode), by_generation in marks.items():
        label = Call(tool, mode, 0).label()
        for generation, mark in by_generation.items():
            if generation in generations and (tool, mode, generation) not in rejected:
                out.append(
                    CallProblem(
                        mark.line,
                        "call-stale-mark",
                        f"{label} is marked not available on {generation}, yet every call "
                        f"of it here works there — remove '{generation}' from the mark",
                    )
                )
    return sorted(out, key=lambda p: (p.line, p.code, p.message))


def _check_call(
    call: Call, claimed_generations: tuple[Generation, ...], covered: tuple[Generation, ...]
) -> tuple[list[CallProblem], list[Generation]]:
    """The call's problems, and the generations that reject it (marked ones included)."""
    if call.tool == CALC_TOOL:
        return calc_call_problems(call), []
    generations = call.only or claimed_generations
    out: list[CallProblem] = []
    rejecting: list[Generation] = []
    if call.grouped and (first := _grouped_problem(call)) is not None:
        return [first], list(generations)
    findings: dict[tuple[str, int, str], tuple[_Finding, list[Generation], list[str]]] = {}
    for generation in generations:
        found, where = _findings(call, generation)
        if found:
            rejecting.append(generation)
        if generation in covered and not call.only:
            continue
        for finding in found:
            place = f"{generation} {where}" if where else generation
            entry = findings.setdefault(
                (finding.code, finding.line, finding.subject), (finding, [], [])
            )
            entry[1].append(generation)
            entry[2].append(place)
    if call.unavailable is not None and not (call.unavailable.links or call.unavailable.fallbacks):
        names = " and ".join(call.unavailable.generations)
        out.append(
            CallProblem(
                call.unavailable.line,
                "call-no-fallback",
                f"{call.label()} is marked not available on {names} but gives no fallback — "
                "write the fallback call or link the page that gives it after the colon",
            )
        )
    for finding, on_generations, places in findings.values():
        on = " and ".join(places) if len(places) < 3 else ", ".join(places)
        fix = finding.fix.replace("{generations}", ", ".join(on_generations))
        message = f"{call.label()} on {on}: {finding.subject} — {fix}"
        out.append(CallProblem(finding.line, finding.code, message))
    if call.twin is not None and call.mode is not None:
        expected = LEGACY_TWIN.get((call.tool, call.mode))
        if expected is not None and expected != call.twin:
            out.append(
                CallProblem(
                    call.twin_line,
                    "call-twin",
                    f"{call.label()}: its legacy twin is `{expected}`, not `{call.twin}` — "
                    f"write (legacy `{expected}`)",
                )
            )
    if call.unavailable is not None:
        for fallback in call.unavailable.fallbacks:
            out += _check_call(fallback, call.unavailable.generations, ())[0]
    return out, rejecting


CALC_TOOL = "calc"  # this server's own tool: checked against its own schema, on no generation


def calc_call_problems(call: Call) -> list[CallProblem]:
    """A written ``calc`` call against the tool's input schema: its mode, each field's name
    and written value (an enum's), and, when it names its fields, the required ones."""
    mode = calc.MODES.get(call.mode or "")
    if mode is None:
        modes = ", ".join(f"`{m}`" for m in calc.MODES)
        return [
            CallProblem(
                call.line,
                "call-unknown-mode",
                f"`calc` has no mode `{call.mode}` — use one of {modes}",
            )
        ]
    schema = mode.model.model_json_schema()
    properties: dict[str, Any] = schema["properties"]
    out: list[CallProblem] = []
    for param in call.params:
        spec = properties.get(param.name)
        if spec is None:
            fields = ", ".join(f"`{p}`" for p in properties)
            out.append(
                CallProblem(
                    param.line,
                    "call-unknown-param",
                    f"{call.label()}: has no field `{param.name}` — drop it or use one it takes: "
                    f"{fields}",
                )
            )
            continue
        allowed = _enum(spec)
        value = (param.value or "").strip("\"'")
        if param.value is not None and allowed is not None and value not in allowed:
            out.append(
                CallProblem(
                    param.line,
                    "call-bad-value",
                    f"{call.label()}: takes no `{value}` for `{param.name}` — use one of "
                    + ", ".join(f"`{v}`" for v in allowed),
                )
            )
    if call.with_params:
        named = {p.name for p in call.params}
        missing = [p for p in schema.get("required", []) if p not in named]
        if missing:
            names = ", ".join(f"`{p}`" for p in missing)
            out.append(
                CallProblem(
                    call.line,
                    "call-missing-param",
                    f"{call.label()}: requires {names} — add {names} to the call's fields",
                )
            )
    return out


def _enum(spec: dict[str, Any]) -> list[str] | None:
    for part in [spec, *spec.get("anyOf", [])]:
        if "enum" in part:
            return [str(v) for v in part["enum"]]
    return None


def _grouped_problem(call: Call) -> CallProblem | None:
    """An unknown grouped tool or mode, reported once whatever the generations."""
    grouped = kite_schemas.tools("grouped")
    tool = grouped.get(call.tool)
    if tool is None:
        return CallProblem(
            call.line,
            "call-unknown-tool",
            f"{call.label()}: no such tool — use one of {_listing(grouped)}",
        )
    if call.mode not in tool.modes:
        modes = ", ".join(f"`{m}`" for m in tool.modes)
        return CallProblem(
            call.line,
            "call-unknown-mode",
            f"{call.label()}: `{call.tool}` has no mode `{call.mode}` — use one of {modes}",
        )
    return None


def _target(call: Call, generation: Generation) -> tuple[ToolSchema | None, str | None, str]:
    """The tool and mode a call reaches on ``generation``, and how to name it there."""
    tools = kite_schemas.tools(generation)
    if call.mode is None:  # a legacy name
        return tools.get(call.tool), None, ""
    if generation == "grouped":
        return tools.get(call.tool), call.mode, ""
    twin = LEGACY_TWIN.get((call.tool, call.mode))
    if twin is None:
        return None, None, ""
    tool = tools.get(twin)
    mode = call.mode if tool is not None and tool.has_modes else None
    return tool, mode, f"`{twin}`"


def _unavailable(call: Call, generation: Generation, what: str) -> _Finding:
    return _Finding(
        "call-unavailable",
        call.line,
        what,
        "mark the call '(not on {generations}: <fallback>)' with the fallback call or a link "
        "to the page that gives it, or claim fewer generations",
    )


def _findings(call: Call, generation: Generation) -> tuple[list[_Finding], str]:
    if call.mode is None and generation == "grouped":
        return [], ""  # a legacy name is not a grouped call
    tool, mode_name, where = _target(call, generation)
    if tool is None:
        if call.mode is None and not any(
            call.tool in kite_schemas.tools(g) for g in GENERATIONS if g != "grouped"
        ):
            return [
                _Finding(
                    "call-unknown-tool",
                    call.line,
                    "is no tool of any Kite MCP server",
                    "check the spelling against tools/list",
                )
            ], ""
        if call.mode is not None and (call.tool, call.mode) not in LEGACY_TWIN:
            return [_unavailable(call, generation, "has no legacy equivalent")], ""
        return [_unavailable(call, generation, "is not a tool of this server")], where
    mode = tool.mode(mode_name)
    if mode is None:
        return [
            _Finding(
                "call-unknown-mode",
                call.line,
                f"has no mode `{mode_name}`",
                f"use one of {', '.join(f'`{m}`' for m in tool.modes)}",
            )
        ], where
    renames = LEGACY_RENAMED.get(tool.name, {}) if generation != "grouped" else {}
    found: list[_Finding] = []
    gaps: list[str] = []  # parameters the call's tool takes on another generation only
    named: dict[str, str | None] = {}
    for param in call.params:
        name = renames.get(param.name, param.name)
        again = name in named  # another value of a parameter already named
        named.setdefault(name, param.value)
        shown = f"`{name}`" if name == param.name else f"`{name}` (`{param.name}`)"
        spec = tool.params.get(name)
        if again and (spec is None or name in mode.ignored):
            continue
        if spec is None:
            if generation != "grouped" and not call.only and _usable_elsewhere(call, param.name):
                gaps.append(shown)
            else:
                options = ", ".join(f"`{p}`" for p in tool.params) or "none"
                found.append(
                    _Finding(
                        "call-unknown-param",
                        param.line,
                        f"has no parameter {shown}",
                        f"drop it or use one it takes: {options}",
                    )
                )
            continue
        if name in mode.ignored and not again:
            found.append(
                _Finding(
                    "call-ignored-param",
                    param.line,
                    f"ignores {shown} in mode `{mode.name}`",
                    "drop it; the handler never reads it",
                )
            )
        if param.value is not None and spec.enum is not None:
            value = param.value.strip("\"'")
            if value not in spec.enum:
                found.append(
                    _Finding(
                        "call-bad-value",
                        param.line,
                        f"takes no `{value}` for {shown}",
                        f"use one of {', '.join(f'`{v}`' for v in spec.enum)}",
                    )
                )
    if gaps:
        noun = "parameter" if len(gaps) == 1 else "parameters"
        found.insert(0, _unavailable(call, generation, f"has no {noun} {', '.join(gaps)}"))
    if call.with_params:
        required = list(mode.required)
        for selector, by_value in mode.required_by_value.items():
            chosen = named.get(selector) or mode.defaults.get(selector)
            if chosen is not None:
                required += by_value.get(chosen.strip("\"'"), ())
        missing = [p for p in dict.fromkeys(required) if p not in named]
        if missing:
            names = ", ".join(f"`{p}`" for p in missing)
            found.append(
                _Finding(
                    "call-missing-param",
                    call.line,
                    f"requires {names}",
                    f"add {names} to the call's parameters",
                )
            )
    return found, where


def _listing(tools: dict[str, ToolSchema]) -> str:
    return ", ".join(f"`{name}`" for name in tools)


def _usable_elsewhere(call: Call, name: str) -> bool:
    """A parameter the call's own tool takes on another generation (a gap of this one)."""
    if call.mode is not None:
        grouped = kite_schemas.tools("grouped").get(call.tool)
        mode = grouped.mode(call.mode) if grouped else None
        return (
            grouped is not None
            and name in grouped.params
            and (mode is None or name not in mode.ignored)
        )
    return any(
        name in tool.params
        for g in GENERATIONS
        if g != "grouped"
        for tool in [kite_schemas.tools(g).get(call.tool)]
        if tool is not None
    )
