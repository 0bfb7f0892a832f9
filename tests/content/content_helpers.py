"""Shared helpers for the catalog content tests: locating files, splitting Markdown, and the
Kite tool vocabulary checker. The vocabulary (tools, modes, parameters, writes, pagination,
legacy twins) comes from kite_skills.kite_schemas; the full call form, with parameters and
generation marks, is read and checked by kite_skills.catalog.calls (``catalog validate``).

Recipe convention parsed here (documented in skills_catalog/index.md by example):
- a grouped tool and its mode are written ``` `orders` mode `list` ``` (optionally with the
  mode in parentheses: ``` `orders` (mode `list`) ```);
- a legacy tool is a bare backticked name such as ``` `get_orders` ```;
- every numbered step that names a write is *preceded* by a line starting
  ``**Stop for approval.**`` (after the summary step, before the call), and between that stop
  and the call a re-check sends any change back to "a new summary and a new approval".
"""

from __future__ import annotations

import importlib.resources
import re
from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml import YAML

from kite_skills import calc, kite_schemas
from kite_skills.catalog import _markdown

TOPICS = (
    "orders",
    "holdings",
    "market-data",
    "technical-analysis",
    "triggers-and-alerts",
    "daily-review",
    "troubleshooting",
    "derivatives",
)

REQUIRED_RECIPES = (
    "orders/prepare.md",
    "orders/reconcile.md",
    "holdings/concentration.md",
    "holdings/positions.md",
    "market-data/resolve.md",
    "technical-analysis/moving-averages.md",
    "technical-analysis/rsi.md",
    "triggers-and-alerts/audit.md",
    "daily-review/account-briefing.md",
    "troubleshooting/authentication.md",
    "troubleshooting/data.md",
    "troubleshooting/execution.md",
    "orders/exit.md",
    "orders/expiry-rollover.md",
    "orders/funds-check.md",
    "orders/stop-loss.md",
    "holdings/corporate-actions.md",
    "holdings/mutual-funds.md",
    "orders/entry-stop-target.md",
    "orders/cancel-all.md",
    "derivatives/option-chain.md",
    "derivatives/greeks.md",
    "derivatives/spreads.md",
    "orders/position-size.md",
    "orders/square-off-all.md",
    "orders/charges.md",
    "derivatives/payoff.md",
    "derivatives/expiry-day.md",
    "holdings/rebalance.md",
    "daily-review/exposure-audit.md",
    "daily-review/pre-market.md",
    "daily-review/journal.md",
)

# The vocabulary comes from its one owner, kite_skills.kite_schemas (the recorded schemas of the
# three Kite MCP generations): tools, modes, parameters, writes, pagination, legacy twins.
_GROUPED = kite_schemas.load("grouped")
_LEGACY = kite_schemas.load("legacy")  # every legacy tool name (the oldest has a subset)

MODES: dict[str, frozenset[str]] = {t.name: frozenset(t.modes) for t in _GROUPED}
# This server's own `calc` tool (kite_skills.calc owns its modes and fields): not a Kite tool,
# so it has no legacy twin and no "Check first" entry (index.md rule 2 covers it).
CALC = "calc"
CALC_MODES: dict[str, frozenset[str]] = {
    name: frozenset(mode.model.model_fields) for name, mode in calc.MODES.items()
}

WRITE_MODES: dict[str, frozenset[str]] = {
    t.name: frozenset(m.name for m in t.modes.values() if m.writes) for t in _GROUPED if t.writes
}

PAGINATED_MODES = frozenset(
    (t.name, m.name) for t in _GROUPED for m in t.modes.values() if m.paginated
)

# Grouped tool + mode -> legacy name. Modes without a legacy twin are absent.
LEGACY_EQUIVALENT: dict[tuple[str, str], str] = dict(kite_schemas.LEGACY_TWIN)

LEGACY_PAGINATED = frozenset(
    t.name
    for g in ("legacy", "legacy-oldest")
    for t in kite_schemas.load(g)
    if "" in t.modes and t.modes[""].paginated
)
LEGACY_ORDER_TOOLS = frozenset(
    {
        "get_orders",
        "get_trades",
        "get_order_history",
        "get_order_trades",
        "place_order",
        "modify_order",
        "cancel_order",
    }
)

# `market` mode `search` lookup types; they look like legacy tool names but are parameter values.
SEARCH_MODE_VALUES = frozenset(
    {
        "search",
        "get_by_id",
        "get_by_tradingsymbol",
        "get_by_isin",
        "get_by_inst_token",
        "get_by_exch_token",
    }
)

# A backticked identifier with one of these shapes is treated as a claimed tool name.
_TOOLISH_PREFIXES = (
    "get_",
    "place_",
    "modify_",
    "cancel_",
    "delete_",
    "create_",
    "search_",
    "list_",
    "update_",
    "fetch_",
    "set_",
    "add_",
    "remove_",
    "edit_",
    "login",
    "logout",
)
_TOOLISH_SUFFIXES = (
    "_order",
    "_orders",
    "_gtt",
    "_gtts",
    "_alert",
    "_alerts",
    "_trades",
    "_tradebook",
    "_holdings",
    "_positions",
    "_quote",
    "_quotes",
    "_ltp",
    "_ohlc",
    "_margins",
    "_profile",
    "_instruments",
    "_watchlist",
    "_watchlists",
)

MODE_RE = re.compile(r"`([A-Za-z0-9_./-]+)`\s+\(?mode\s+`([^`\n]+)`")
MODE_WITHOUT_BACKTICK_RE = re.compile(r"`([A-Za-z0-9_./-]+)`\s+\(?mode\s+(?![`\s])(\S+)")
SLASH_RE = re.compile(r"`([a-z_]+)/([a-z_]+)`")
IDENT_RE = re.compile(r"`([a-z][a-z0-9_]*)`")
STEP_RE = re.compile(r"^(\d+)\. ")
STOP_LINE = "**Stop for approval.**"


def _vocabulary(tool: kite_schemas.ToolSchema) -> dict:
    """A tool as the checks below read it: writes, params (type, required), description."""
    required = set(tool.input_schema.get("required") or [])
    return {
        "name": tool.name,
        "writes": tool.writes,
        "params": {
            name: {"type": spec.type, "required": name in required}
            for name, spec in tool.params.items()
        },
        "description": tool.description,
    }


NEW_TOOLS = {t.name: _vocabulary(t) for t in _GROUPED}
LEGACY_TOOLS = {t.name: _vocabulary(t) for t in _LEGACY}
LEGACY_WRITERS = frozenset(n for n, t in LEGACY_TOOLS.items() if t["writes"] and n != "alerts")

PARAM_NAMES = frozenset(
    p for tools in (NEW_TOOLS, LEGACY_TOOLS) for t in tools.values() for p in t["params"]
)
ALL_MODES = frozenset(m for modes in MODES.values() for m in modes)
NON_TOOL_IDENTIFIERS = (
    PARAM_NAMES
    | ALL_MODES
    | SEARCH_MODE_VALUES
    | frozenset(CALC_MODES)
    | frozenset(f for fields in CALC_MODES.values() for f in fields)
)


# --------------------------------------------------------------------------- files


def catalog_root() -> Path:
    root = Path(str(importlib.resources.files("skills_catalog")))
    assert root.is_dir(), f"skills_catalog is not a directory: {root}"
    return root


def markdown_files() -> list[Path]:
    root = catalog_root()
    return sorted(p for p in root.rglob("*.md") if "__pycache__" not in p.parts)


def recipe_files() -> list[Path]:
    """Pages that sit next to a SKILL.md (a supporting directory's pages are not recipes)."""
    root = catalog_root()
    return [
        p
        for p in markdown_files()
        if p.name != "SKILL.md" and p.parent != root and (p.parent / "SKILL.md").is_file()
    ]


def supporting_files() -> list[Path]:
    """Pages in a supporting directory (one without SKILL.md): templates, worked examples."""
    root = catalog_root()
    return [
        p for p in markdown_files() if p.parent != root and not (p.parent / "SKILL.md").is_file()
    ]


def skill_files() -> list[Path]:
    return [catalog_root() / t / "SKILL.md" for t in TOPICS]


def rel(path: Path) -> str:
    return path.relative_to(catalog_root()).as_posix()


# --------------------------------------------------------------------------- markdown


@dataclass(frozen=True)
class Doc:
    frontmatter: str | None
    body: str


def split_frontmatter(text: str) -> Doc:
    lines = text.split("\n")
    if not lines or lines[0] != "---":
        return Doc(None, text)
    for i in range(1, len(lines)):
        if lines[i] == "---":
            return Doc("\n".join(lines[1:i]) + "\n", "\n".join(lines[i + 1 :]))
    raise AssertionError("frontmatter is not closed by a '---' line")


def load_yaml(text: str) -> object:
    return YAML(typ="safe", pure=True).load(text)


def strip_code_blocks(text: str) -> str:
    """Blank out fenced code blocks (keeping line count) so templates are not parsed."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            out.append("")
        else:
            out.append("" if fenced else line)
    return "\n".join(out)


def sections(body: str) -> dict[str, str]:
    """Map each '## Title' to its text (up to the next '## ' heading)."""
    result: dict[str, str] = {}
    current: str | None = None
    buf: list[str] = []
    for line in strip_code_blocks(body).split("\n"):
        if line.startswith("## "):
            if current is not None:
                result[current] = "\n".join(buf)
            current, buf = line[3:].strip(), []
        elif current is not None:
            buf.append(line)
    if current is not None:
        result[current] = "\n".join(buf)
    return result


def subsection(body: str, title: str) -> str:
    """Text under a '### title' heading, up to the next heading of level 2 or 3."""
    lines = body.split("\n")
    start = lines.index(f"### {title}") + 1
    end = start
    while end < len(lines) and not re.match(r"#{2,3} ", lines[end]):
        end += 1
    return "\n".join(lines[start:end])


def numbered_steps(text: str) -> list[tuple[int, str, str | None]]:
    """Numbered list items at column 0: (line number, item text, next non-blank line)."""
    lines = strip_code_blocks(text).split("\n")
    items = []
    i = 0
    while i < len(lines):
        if STEP_RE.match(lines[i]):
            j = i + 1
            while j < len(lines) and (
                lines[j].startswith((" ", "\t"))
                or (lines[j] == "" and j + 1 < len(lines) and lines[j + 1].startswith((" ", "\t")))
            ):
                j += 1
            k = j
            while k < len(lines) and lines[k].strip() == "":
                k += 1
            following = lines[k] if k < len(lines) else None
            items.append((i + 1, "\n".join(lines[i:j]), following))
            i = j
        else:
            i += 1
    return items


def links(text: str) -> list[str]:
    """Link targets as a CommonMark parser reads them (the validator's own reader)."""
    return [link.target for link in _markdown.links(text)]


# --------------------------------------------------------------------------- vocabulary


def mode_pairs(text: str) -> list[tuple[str, str]]:
    return [(t, m) for t, m in MODE_RE.findall(strip_code_blocks(text))]


def legacy_mentions(text: str) -> set[str]:
    return {i for i in IDENT_RE.findall(strip_code_blocks(text)) if i in LEGACY_TOOLS}


def looks_like_tool(identifier: str) -> bool:
    return identifier.startswith(_TOOLISH_PREFIXES) or identifier.endswith(_TOOLISH_SUFFIXES)


def vocabulary_problems(text: str) -> list[str]:
    """Every tool or tool+mode mention that exists in neither Kite MCP vocabulary."""
    text = strip_code_blocks(text)
    problems = []
    for tool, mode in MODE_RE.findall(text):
        if tool == CALC:
            if mode not in CALC_MODES:
                problems.append(f"`calc` has no mode `{mode}`")
        elif tool not in MODES:
            problems.append(f"unknown grouped tool `{tool}` (with mode `{mode}`)")
        elif mode not in MODES[tool]:
            problems.append(f"`{tool}` has no mode `{mode}`")
    for tool, word in MODE_WITHOUT_BACKTICK_RE.findall(text):
        problems.append(f"`{tool}` mode {word}: write the mode in backticks")
    for tool, mode in SLASH_RE.findall(text):
        if tool in MODES and mode not in MODES[tool]:
            problems.append(f"`{tool}/{mode}`: `{tool}` has no mode `{mode}`")
    for ident in IDENT_RE.findall(text):
        if ident in NEW_TOOLS or ident in LEGACY_TOOLS or ident in NON_TOOL_IDENTIFIERS:
            continue
        if looks_like_tool(ident):
            problems.append(f"unknown tool `{ident}`")
    return problems


def names_write(step_text: str) -> bool:
    for tool, mode in mode_pairs(step_text):
        if mode in WRITE_MODES.get(tool, ()):
            return True
    return any(i in LEGACY_WRITERS for i in IDENT_RE.findall(step_text))


def approval_problems(text: str) -> list[str]:
    """Write steps without an approval stop *before* them (after any earlier write step), or
    without a re-check between that stop and the call that asks for a new approval."""
    problems = []
    lines = strip_code_blocks(text).split("\n")
    stops = [i + 1 for i, line in enumerate(lines) if line.startswith(STOP_LINE)]
    previous_write = 0
    for line_no, item, _ in numbered_steps(text):
        if not names_write(item):
            continue
        before = [s for s in stops if previous_write < s < line_no]
        if not before:
            problems.append(f"line {line_no}: write step not preceded by '{STOP_LINE}'")
        else:
            between = "\n".join(lines[before[-1] : line_no - 1]) + "\n" + item
            if "new approval" not in between:
                problems.append(
                    f"line {line_no}: no re-check between the approval stop and the write "
                    "(anything changed -> a new summary and a new approval)"
                )
        previous_write = line_no
    return problems


def uses_paginated_tool(text: str) -> bool:
    return any(p in PAGINATED_MODES for p in mode_pairs(text)) or bool(
        legacy_mentions(text) & LEGACY_PAGINATED
    )


def uses_order_tool(text: str) -> bool:
    return any(t == "orders" for t, _ in mode_pairs(text)) or bool(
        legacy_mentions(text) & LEGACY_ORDER_TOOLS
    )


# --------------------------------------------------------------------------- indicators


def sma(closes: list[float], n: int, bar: int) -> float:
    """SMA(n) at 1-based bar."""
    assert bar >= n
    window = closes[bar - n : bar]
    return sum(window) / n


def ema(closes: list[float], n: int, bar: int) -> float:
    """EMA(n) at 1-based bar, alpha 2/(n+1), seeded with the SMA of the first n closes."""
    assert bar >= n
    alpha = 2 / (n + 1)
    value = sum(closes[:n]) / n
    for c in closes[n:bar]:
        value = alpha * c + (1 - alpha) * value
    return value


def rsi(closes: list[float], n: int, bar: int) -> float:
    """Wilder's RSI(n) at 1-based bar: simple-average seed at bar n+1, then Wilder smoothing."""
    assert bar >= n + 1
    changes = [closes[i] - closes[i - 1] for i in range(1, bar)]
    gains = [max(c, 0.0) for c in changes]
    losses = [max(-c, 0.0) for c in changes]
    avg_gain = sum(gains[:n]) / n
    avg_loss = sum(losses[:n]) / n
    for g, loss in zip(gains[n:], losses[n:], strict=True):
        avg_gain = (avg_gain * (n - 1) + g) / n
        avg_loss = (avg_loss * (n - 1) + loss) / n
    if avg_loss == 0:
        return 100.0
    return 100 - 100 / (1 + avg_gain / avg_loss)


RESULT_RE = re.compile(r"^- (SMA|EMA|RSI)\((\d+)\) at bar (\d+) = (-?\d+\.\d{2})$", re.M)


def parse_worked_example(body: str) -> tuple[list[float], list[tuple[str, int, int, str]]]:
    """Closes (in bar order) and printed results from the '### Worked example' subsection."""
    text = subsection(body, "Worked example")
    rows = [line for line in text.split("\n") if line.startswith("|")]
    assert len(rows) >= 3, "worked example has no table"
    header = [c.strip().lower() for c in rows[0].strip("|").split("|")]
    assert "close" in header, f"no 'close' column in {header}"
    close_col = header.index("close")
    bar_col = header.index("bar") if "bar" in header else None
    assert set(rows[1].replace("|", "").strip()) <= set("-: "), "second row is not a separator"
    closes = []
    for idx, row in enumerate(rows[2:], start=1):
        cells = [c.strip() for c in row.strip("|").split("|")]
        if bar_col is not None:
            assert int(cells[bar_col]) == idx, f"bars out of order at row {idx}"
        closes.append(float(cells[close_col]))
    results = [(k, int(n), int(b), v) for k, n, b, v in RESULT_RE.findall(text)]
    return closes, results
