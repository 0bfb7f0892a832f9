"""The rehearsal harness: a scripted agent that follows a recipe against the sandbox.

Every decision of a script points at the recipe text it implements: :func:`step` (a numbered
step) and :func:`part` (a ``##`` section) assert that the quoted words really are there, so a
script breaks when its recipe changes. Every tool call goes through :meth:`Agent.call`, which
checks that the cited text names that call (tool and mode, or its legacy twin) and that every
argument is a parameter the recipe names there, with the value the recipe gives when it gives
one. A write is refused unless the agent stopped for approval (:meth:`Agent.approve`, quoting
the recipe's stop) and read the account again after the approval (the re-check).

The sandbox is the real one: :class:`kite_skills.sandbox.server.Sandbox` in-process over the
real simulation and the real handlers of a tool generation, or any other transport (the HTTP
rehearsal drives ``kite-skills sandbox --http`` through the MCP SDK's client).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from kite_skills import kite_schemas
from kite_skills.catalog import calls as calls_module
from kite_skills.catalog.calls import Call, Unavailable
from kite_skills.sandbox import handlers, journal, sim
from kite_skills.sandbox.server import Sandbox

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "skills_catalog"


def _flat(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class Recipe:
    """A recipe's text (from the catalog files, or as an MCP client read it)."""

    path: str  # "orders/reconcile.md"
    text: str

    def section(self, title: str) -> str:
        match = re.search(
            rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", self.text, flags=re.M | re.S
        )
        assert match, f"{self.path}: no section '## {title}'"
        return match.group(1)

    def steps(self) -> dict[int, str]:
        body = re.sub(r"^```.*?^```", "", self.section("Steps"), flags=re.M | re.S)
        found: dict[int, str] = {}
        pieces = re.split(r"^(\d+)\. ", body, flags=re.M)
        for number, text in zip(pieces[1::2], pieces[2::2], strict=True):
            found.setdefault(int(number), text)
        return found

    def template(self) -> str:
        """The first fenced block after 'Report template' (or in the Steps)."""
        start = self.text.find("Report template")
        match = re.search(r"```\w*\n(.*?)```", self.text[max(start, 0) :], flags=re.S)
        assert match, f"{self.path}: no report template"
        return match.group(1)


def recipe(path: str, text: str | None = None) -> Recipe:
    return Recipe(path, text if text is not None else (CATALOG / path).read_text("utf-8"))


@dataclass(frozen=True)
class Where:
    """The recipe text a decision implements: a numbered step or a section, and its quote."""

    recipe: Recipe
    label: str
    text: str
    quote: str

    @property
    def calls(self) -> list[Call]:
        return calls_module.extract(self.text)

    def __str__(self) -> str:
        return f"{self.recipe.path} {self.label}: {self.quote!r}"

    def plus(self, other: Where) -> Where:
        """This text and the one it refers to ("repeat the duplicate check of step 9")."""
        return Where(
            self.recipe, f"{self.label} + {other.label}", f"{self.text}\n\n{other.text}",
            self.quote,
        )  # fmt: skip


def step(r: Recipe, number: int, quote: str) -> Where:
    """Step ``number`` of ``r``; fails unless the step says ``quote`` (whitespace-insensitive)."""
    steps = r.steps()
    assert number in steps, f"{r.path}: no step {number}"
    text = steps[number]
    assert _flat(quote) in _flat(text), f"{r.path} step {number} no longer says {quote!r}"
    return Where(r, f"step {number}", text, quote)


def part(r: Recipe, title: str, quote: str) -> Where:
    """Section ``## title`` of ``r``; fails unless it says ``quote``."""
    text = r.section(title)
    assert _flat(quote) in _flat(text), f"{r.path} '## {title}' no longer says {quote!r}"
    return Where(r, f"'{title}'", text, quote)


@dataclass(frozen=True)
class Made:
    """One call the agent made."""

    tool: str
    mode: str | None
    arguments: dict[str, Any]
    where: str
    writes: bool
    text: str
    is_error: bool
    answered: bool  # False: the answer was lost (a timeout, as the agent saw it)
    at: datetime | None


Transport = Callable[[str, dict[str, Any]], tuple[str, bool]]


def _same(given: Any, written: str) -> bool:
    try:
        return float(given) == float(written.replace(",", ""))
    except (TypeError, ValueError):
        return str(given) == written


@dataclass
class Agent:
    """A scripted agent over one tool generation of the sandbox."""

    generation: str
    transport: Transport
    simulation: sim.Simulation | None = None
    clock: list[datetime] = field(default_factory=list)  # [now] when in-process
    made: list[Made] = field(default_factory=list)
    approvals: list[int] = field(default_factory=list)  # len(made) at each approval
    covers: list[int] = field(default_factory=list)  # how many writes each approval covers
    decisions: list[str] = field(default_factory=list)

    # -- the account ---------------------------------------------------------------------

    @property
    def now(self) -> datetime:
        assert self.clock, "this agent's clock is the server's"
        return self.clock[0]

    def wait(self, **delta: float) -> None:
        """Let simulated time pass (in-process sandboxes only)."""
        self.clock[0] = self.clock[0] + timedelta(**delta)

    # -- decisions -----------------------------------------------------------------------

    def decide(self, where: Where, what: str) -> None:
        """Record a decision the script takes and the recipe text it implements."""
        self.decisions.append(f"{where}: {what}")

    def approve(self, where: Where, covers: int = 1) -> None:
        """The person approved the summary (of ``covers`` writes, for a list such as
        cancel-all's): the script stops here first, quoting the recipe's stop."""
        assert "approv" in _flat(where.quote).lower(), f"{where} is not an approval stop"
        self.approvals.append(len(self.made))
        self.covers.append(covers)
        self.decide(where, "stopped for approval; the person approved")

    # -- calls ---------------------------------------------------------------------------

    def _named(self, where: Where, tool: str, mode: str | None, args: dict[str, Any]) -> Call:
        candidates = []
        page = self.marks(where.recipe)
        for written in where.calls:
            mark = written.unavailable or page.get((written.tool, written.mode))
            if mark is not None and self.generation in mark.generations and mark.fallbacks:
                assert not (written.tool == tool and written.mode == mode), (
                    f"{where}: {written.label()} is marked not on {self.generation}; "
                    "follow its fallback"
                )
                candidates += [c for c in mark.fallbacks if c.tool == tool and c.mode == mode]
            elif written.tool == tool and written.mode == mode:
                candidates.append(written)
        assert candidates, f"{where} does not name the call {tool} {mode or ''}".rstrip()

        # the call written with these parameters, when a step writes two forms of one call
        def fit(c: Call) -> tuple[int, int]:
            names = len(set(args) & {p.name for p in c.params})
            values = sum(
                1 for p in c.params if p.value is not None and p.name in args
                and _same(args[p.name], p.value)
            )  # fmt: skip
            return names, values

        return max(candidates, key=fit)

    def marks(self, r: Recipe) -> dict[tuple[str, str | None], Unavailable]:
        """The recipe's "not on GEN" marks that cover this agent's generation: a mark written
        once covers every call of that tool and mode on the page (docs/authoring.md, "Tool calls
        in recipes")."""
        found: dict[tuple[str, str | None], Unavailable] = {}
        for c in calls_module.extract(r.text):
            if c.unavailable is not None and self.generation in c.unavailable.generations:
                found.setdefault((c.tool, c.mode), c.unavailable)
        return found

    def lacks(self, where: Where, tool: str, mode: str | None) -> bool:
        """The recipe marks this call as not on this generation (skip it, or follow the
        fallback), and the generation really has no such tool or mode."""
        tools = kite_schemas.tools(self.generation)  # type: ignore[arg-type]
        name = tool
        if self.generation != "grouped" and mode is not None:
            name = kite_schemas.LEGACY_TWIN.get((tool, mode), tool)
        missing = name not in tools
        marked = (tool, mode) in self.marks(where.recipe)
        if missing:
            assert marked, (
                f"{where.recipe.path} calls {tool} {mode} with no mark for {self.generation}"
            )
            self.decide(where, f"{tool} {mode or ''} is not on {self.generation}: skipped")
        return missing

    def _wire(self, where: Where, tool: str, mode: str | None) -> tuple[str, str | None]:
        """The tool and mode sent: the grouped call, or on a legacy generation its twin,
        which the recipe must name beside the call somewhere (it claims to work there)."""
        if self.generation == "grouped" or mode is None:
            return tool, mode
        twin = kite_schemas.LEGACY_TWIN[(tool, mode)]
        named = calls_module.extract(where.recipe.text)
        assert any(c.tool == tool and c.mode == mode and c.twin == twin for c in named), (
            f"{where.recipe.path} never names the legacy twin {twin} of `{tool}` mode `{mode}`"
        )
        legacy = kite_schemas.tools(self.generation)  # type: ignore[arg-type]
        return twin, (mode if twin in legacy and legacy[twin].has_modes else None)

    def _schema(self, tool: str, mode: str | None) -> kite_schemas.ModeSchema:
        tools = kite_schemas.tools(self.generation)  # type: ignore[arg-type]
        assert tool in tools, f"{tool} is not a tool of the {self.generation} generation"
        found = tools[tool].mode(mode)
        assert found is not None, f"{tool} has no mode {mode!r}"
        return found

    def _check_arguments(
        self,
        where: Where,
        written: Call,
        wire_tool: str,
        schema: kite_schemas.ModeSchema,
        args: dict[str, Any],
    ) -> None:
        """Every argument is a parameter the recipe names for this call; where the recipe
        writes a value of an enumerated parameter (a choice, not an example) or of `limit`,
        the argument has that value."""
        tool = kite_schemas.tools(self.generation)[wire_tool]  # type: ignore[arg-type]
        renamed = {}
        if self.generation != "grouped":
            renamed = kite_schemas.LEGACY_RENAMED.get(wire_tool, {})
        named: dict[str, list[str | None]] = {}
        for p in written.params:
            named.setdefault(renamed.get(p.name, p.name), []).append(p.value)
        paged = schema.paginated and "## Pagination" in where.recipe.text
        allowed = set(named) | (set(schema.required) if not written.with_params else set())
        if paged or "paged" in where.text or "page until" in where.text.lower():
            allowed |= {"from", "limit"}
        for name, value in args.items():
            assert name in tool.params, f"{wire_tool} on {self.generation} has no {name!r}"
            assert name in allowed, (
                f"{where} does not name the parameter {name!r} for {written.label()} "
                f"(it names: {sorted(named) or 'none'})"
            )
            values = [v for v in named.get(name, []) if v is not None]
            param = tool.params.get(name)
            choice = param is not None and param.enum is not None
            if values and (choice or name == "limit"):
                assert any(_same(value, v) for v in values), (
                    f"{where} gives {name} {values}, the script sent {value!r}"
                )

    def call(
        self, where: Where, tool: str, mode: str | None = None, *, lost: bool = False, **args: Any
    ) -> Any:
        """Make the call ``where`` names. Returns the parsed JSON answer, or the error text
        (a str) when the server answered with an error; None when ``lost`` (the answer never
        reached the agent, as after a timeout: the call was still made)."""
        written = self._named(where, tool, mode, args)
        wire_tool, wire_mode = self._wire(where, tool, mode)
        schema = self._schema(wire_tool, wire_mode)
        renamed = kite_schemas.LEGACY_RENAMED.get(wire_tool, {}) if wire_tool != tool else {}
        args = {renamed.get(k, k): v for k, v in args.items()}
        self._check_arguments(where, written, wire_tool, schema, args)
        if schema.writes:
            assert self.approvals, f"{where}: a write ({tool} {mode}) before any approval"
            since = self.approvals[-1]
            assert sum(m.writes for m in self.made[since:]) < self.covers[-1], (
                f"{where}: more writes than the approval covered"
            )
            assert any(not m.writes and m.answered for m in self.made[since:]), (
                f"{where}: a write without the re-check after the approval"
            )
        arguments = {**({"mode": wire_mode} if wire_mode is not None else {}), **args}
        text, is_error = self.transport(wire_tool, arguments)
        at = self.simulation.now if self.simulation is not None else None
        self.made.append(
            Made(tool, mode, arguments, str(where), schema.writes, text, is_error, not lost, at)
        )
        self.decide(where, f"called {tool} {mode or ''} {args}")
        if lost:
            return None
        if is_error:
            return text
        return json.loads(text)

    def page(self, where: Where, tool: str, mode: str | None = None, **args: Any) -> list[Any]:
        """Every row of a paginated list, paging until ``has_more`` is false and starting
        again from 0 when ``total`` changes (the recipes' Pagination section)."""
        limit = args.pop("limit", 50)
        for _ in range(5):
            rows: list[Any] = []
            total = None
            start = 0
            while True:
                answer = self.call(where, tool, mode, **{"from": start, "limit": limit}, **args)
                assert isinstance(answer, dict), answer
                info = answer["pagination"]
                if total is not None and info["total"] != total:
                    break
                total = info["total"]
                rows += answer["data"]
                if not info["has_more"]:
                    return rows
                start += info["returned"]
        raise AssertionError(f"{where}: the list kept changing")

    # -- what happened -------------------------------------------------------------------

    def writes(self) -> list[Made]:
        return [m for m in self.made if m.writes]

    def calls_of(self, tool: str, mode: str | None = None) -> list[Made]:
        return [m for m in self.made if m.tool == tool and (mode is None or m.mode == mode)]


def direct(sandbox: Sandbox, clock: list[datetime]) -> Transport:
    """Each call straight to the sandbox's handlers."""

    def transport(tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        result = sandbox.call(tool, arguments)
        assert result is not None, f"the {sandbox.generation.name} sandbox has no tool {tool}"
        return result.text, result.is_error

    return transport


# How in_process reaches its sandbox: directly, or through `kite-skills guard` with the
# default limits (tests/rehearsal/conftest.py runs every rehearsal both ways).
through: Callable[[Sandbox, list[datetime]], Transport] = direct


def in_process(
    scenario: str,
    generation: str = "grouped",
    at: datetime | None = None,
    journal_path: Path | None = None,
) -> Agent:
    """An agent over the sandbox in this process: the built-in ``scenario``, its clock
    driven by the script (:meth:`Agent.wait`); with ``journal_path`` the sandbox journals
    there (the watch's findings among the entries: :func:`harm`)."""
    simulation = sim.Simulation(sim.load_scenario(scenario), start=at)
    clock = [simulation.now]
    tools = handlers.generation(generation, lambda: clock[0])
    book = journal.Journal(journal_path) if journal_path is not None else None
    sandbox = Sandbox(simulation, lambda: clock[0], tools, book)
    return Agent(generation, through(sandbox, clock), simulation, clock)


def ist(text: str) -> datetime:
    """'YYYY-MM-DD HH:MM:SS' (Kite's JSON timestamps) as an aware IST datetime."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=sim.IST)


def harm(journal_path: Path) -> list[str]:
    """The watch rules whose state began after the rehearsal's first call (what the account
    already was exposed to at the start is the scenario's, not the recipe's), in order."""
    found = []
    called = False
    for _line, entry in journal.entries(journal_path):
        if entry is None:
            continue
        called = called or entry.get("kind") == "call"
        if called and entry.get("kind") == "watch" and entry.get("phase") == "began":
            found.append(str(entry["rule"]))
    return found
