"""Scenarios: a YAML file that sets up the simulated account and market (docs/sandbox-scenarios.md).

``parse_scenario`` collects every problem of a file before it raises ``ScenarioError``: each one
reads ``source:line: what is wrong — what to do``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import date, datetime, time
from importlib import resources
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    ScalarEvent,
)

from .clock import IST
from .errors import ScenarioError, ScenarioProblem
from .instruments import InstrumentMaster, master_for
from .market import PathSpec, Tick, on_tick, round_tick

BUILT_IN = (
    "default",
    "expiry-day",
    "t1-holdings",
    "after-square-off",
    "pre-open",
    "gap-down",
    # the recipe rehearsals (tests/rehearsal, docs/rehearsals.md)
    "reconcile-timeout",
    "exit-gap",
    "t1-gtt",
    "positions-closed",
    "funds-blocked",
    "split-day",
    "option-books",
    "alerts-audit",
    # what the watch judges (issue 41 §4)
    "hedged-book",
    "mis-hedge",
    "amo-released",
    "partial-fill",
    "ddpi-gtt",
    "demat-physical",
    "demat-consent",
    "demat-empty",
)
DEMAT_CONSENT = ("consent", "physical", "empty")
PRODUCTS = ("CNC", "MIS", "NRML", "MTF")
ORDER_TYPES = ("MARKET", "LIMIT", "SL", "SL-M")
ORDER_STATUSES = ("OPEN", "COMPLETE", "CANCELLED", "REJECTED", "TRIGGER PENDING")
OPERATORS = ("<=", ">=", "<", ">", "==")

_TOP = {
    "name": "a short name",
    "description": "one line saying what the scenario rehearses",
    "clock": "the start time",
    "speed": "the clock speed",
    "profile": "the user profile",
    "funds": "funds per segment",
    "holdings": "holdings",
    "positions": "open positions",
    "orders": "today's orders so far",
    "gtts": "GTT triggers",
    "alerts": "alerts",
    "mf_holdings": "mutual-fund holdings",
    "mf_orders": "mutual-fund orders",
    "mf_sips": "SIPs",
    "market": "price paths",
}
_FUNDS = ("opening_balance", "collateral", "intraday_payin", "adhoc_margin")
_HOLDING = (
    "exchange",
    "tradingsymbol",
    "quantity",
    "t1_quantity",
    "realised_quantity",
    "used_quantity",
    "authorised_quantity",
    "authorised_date",
    "collateral_quantity",
    "collateral_type",
    "average_price",
    "opening_quantity",
)
_POSITION = ("exchange", "tradingsymbol", "product", "quantity", "average_price")
_ORDER = (
    "at",
    "exchange",
    "tradingsymbol",
    "transaction_type",
    "quantity",
    "product",
    "order_type",
    "price",
    "trigger_price",
    "variety",
    "validity",
    "status",
    "filled_quantity",
    "average_price",
    "status_message",
    "tag",
    "market_protection",
)
_GTT = (
    "type",
    "exchange",
    "tradingsymbol",
    "trigger_values",
    "last_price",
    "orders",
    "status",
    "created_at",
)
_GTT_ORDER = ("transaction_type", "quantity", "price", "product", "order_type")
_ALERT = (
    "name",
    "type",
    "lhs_exchange",
    "lhs_tradingsymbol",
    "lhs_attribute",
    "operator",
    "rhs_type",
    "rhs_constant",
    "rhs_exchange",
    "rhs_tradingsymbol",
    "rhs_attribute",
    "basket",
    "status",
)
_MF = ("tradingsymbol", "folio", "quantity", "average_price", "pledged_quantity")
_MARKET = ("close", "liquidity", "spread", "path")
# What the loader must not build: an alias can expand a few lines into gigabytes (the "billion
# laughs"), deep nesting exhausts the recursion of the YAML constructor, and Python refuses to
# convert an integer of more than 4,300 digits. A scenario needs none of them.
MAX_DEPTH = 16  # the deepest a scenario goes is 4 (market: paths: SYMBOL: steps)
MAX_NUMBER_CHARS = 4000  # below Python's 4,300 digits; _sane then says "at most 10^15"
_NUMBER = re.compile(r"[-+]?[0-9][0-9_.eE+-]*|[-+]?0[xXoObB][0-9a-fA-F_]+")
FIRST_YEAR, LAST_YEAR = 2000, 2099  # dates are worked out ahead of the clock (expiries, T+1)
_TS = re.compile(r"(\d{4}-\d{2}-\d{2})[ T](\d{1,2}):(\d{2})(?::(\d{2}))?")
_HM = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?")


@dataclass(frozen=True)
class Funds:
    opening_balance: float = 0.0
    collateral: float = 0.0
    intraday_payin: float = 0.0
    adhoc_margin: float = 0.0
    enabled: bool = True


@dataclass(frozen=True)
class Scenario:
    name: str
    source: str
    description: str
    clock: datetime
    speed: float
    profile: dict[str, Any]
    funds: dict[str, Funds]
    holdings: tuple[dict[str, Any], ...] = ()
    positions: tuple[dict[str, Any], ...] = ()
    orders: tuple[dict[str, Any], ...] = ()
    gtts: tuple[dict[str, Any], ...] = ()
    alerts: tuple[dict[str, Any], ...] = ()
    mf_holdings: tuple[dict[str, Any], ...] = ()
    mf_orders: tuple[dict[str, Any], ...] = ()
    mf_sips: tuple[dict[str, Any], ...] = ()
    market: dict[str, PathSpec] = field(default_factory=dict)

    @property
    def demat_consent(self) -> str:
        meta = self.profile.get("meta") or {}
        return str(meta.get("demat_consent", "physical"))


# What a missing key looks like written, for the message that asks for it.
_EXAMPLES = {
    "clock": "'clock: \"2026-12-02 11:30\"' (IST)",
    "at": "'at: \"09:21\"' (when it happened, HH:MM[:SS] on the scenario date)",
    "exchange": "'exchange: NSE'",
    "tradingsymbol": "'tradingsymbol: INFY'",
    "transaction_type": "'transaction_type: BUY' (or SELL)",
    "product": "'product: CNC' (or MIS, NRML, MTF)",
    "order_type": "'order_type: LIMIT' (or MARKET, SL, SL-M)",
    "quantity": "'quantity: 10'",
}


def scenario_names() -> tuple[str, ...]:
    return BUILT_IN


def load_scenario(name_or_path: str) -> Scenario:
    """A built-in scenario by name, or a YAML file by path."""
    if name_or_path in BUILT_IN:
        res = resources.files(__package__).joinpath("data").joinpath("scenarios")
        text = res.joinpath(f"{name_or_path}.yaml").read_text("utf-8")
        return parse_scenario(text, f"{name_or_path}.yaml")
    path = Path(name_or_path)
    if not path.is_file():
        names = ", ".join(BUILT_IN)
        raise ScenarioError(
            [
                ScenarioProblem(
                    name_or_path, 1, f"no such scenario file — give a YAML file or one of: {names}"
                )
            ]
        )
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(
            [
                ScenarioProblem(
                    name_or_path, 1, f"cannot read the file ({exc}) — save it as UTF-8 text"
                )
            ]
        ) from exc
    return parse_scenario(text, str(path))


def parse_scenario(text: str, source: str) -> Scenario:
    return _Parser(source).parse(text)


def _line(node: Any, key: Any = None, default: int = 1) -> int:
    try:
        if isinstance(node, CommentedMap) and key is not None:
            return int(node.lc.key(key)[0]) + 1
        if isinstance(node, CommentedSeq) and key is not None:
            return int(node.lc.item(key)[0]) + 1
        if node is not None and hasattr(node, "lc"):
            return int(node.lc.line) + 1
    except (KeyError, IndexError, TypeError, AttributeError):
        pass
    return default


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[ScenarioProblem] = []
        self.master: InstrumentMaster | None = None
        self.day: date | None = None
        self.clock: datetime | None = None

    def bad(self, line: int, message: str) -> None:
        self.problems.append(ScenarioProblem(self.source, line, message))

    # ---- generic checks -------------------------------------------------------------------
    def mapping(self, node: Any, line: int, what: str) -> CommentedMap | None:
        if isinstance(node, CommentedMap):
            return node
        self.bad(line, f"{what} must be a mapping of 'key: value' lines — indent its keys under it")
        return None

    def sequence(self, node: Any, line: int, what: str) -> CommentedSeq | None:
        if node is None:
            return None
        if isinstance(node, CommentedSeq):
            return node
        self.bad(line, f"{what} must be a list — write each entry on a line starting with '- '")
        return None

    def keys(
        self,
        node: CommentedMap,
        allowed: tuple[str, ...],
        required: tuple[str, ...],
        what: str,
        line: int,
    ) -> None:
        for key in node:
            if key not in allowed:
                self.bad(
                    _line(node, key, line),
                    f"{what}: unknown key '{key}' — the keys are {', '.join(allowed)}",
                )
        for key in required:
            if key not in node:
                self.bad(line, f"{what}: '{key}' is missing — add {_EXAMPLES.get(key, key + ':')}")

    def number(
        self,
        node: CommentedMap,
        key: str,
        what: str,
        line: int,
        default: float = 0.0,
        minimum: float | None = 0.0,
        integer: bool = False,
    ) -> float:
        if key not in node or node[key] is None:
            return default
        value = node[key]
        at = _line(node, key, line)
        if isinstance(value, bool) or not isinstance(value, int | float):
            kind = "a whole number" if integer else "a number"
            self.bad(at, f"{what}: '{key}' must be {kind} (got {value!r}) — write e.g. {key}: 10")
            return default
        if not _sane(value):
            self.bad(
                at,
                f"{what}: '{key}' must be a finite number of at most 10^15 (got {value!r}) — "
                f"write e.g. {key}: 10",
            )
            return default
        if integer and not float(value).is_integer():
            self.bad(
                at, f"{what}: '{key}' must be a whole number (got {value}) — drop the fraction"
            )
            return default
        if minimum is not None and value < minimum:
            self.bad(at, f"{what}: '{key}' must be {minimum:g} or more (got {value}) — raise it")
            return default
        return float(value)

    def choice(
        self,
        node: CommentedMap,
        key: str,
        options: tuple[str, ...],
        what: str,
        line: int,
        default: str = "",
    ) -> str:
        if key not in node or node[key] is None:
            return default
        value = str(node[key])
        if value not in options:
            self.bad(
                _line(node, key, line),
                f"{what}: '{key}' is {value!r} — use one of {', '.join(options)}",
            )
            return default
        return value

    def text(self, node: CommentedMap, key: str, what: str, line: int, default: str = "") -> str:
        if key not in node or node[key] is None:
            return default
        value = node[key]
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            self.bad(_line(node, key, line), f"{what}: '{key}' must be text (got {value!r})")
            return default
        return str(value)

    def instrument(
        self,
        node: CommentedMap,
        ex_key: str,
        sym_key: str,
        what: str,
        line: int,
        alert: bool = False,
    ) -> str:
        """``EXCHANGE:TRADINGSYMBOL`` of the instrument ("" when missing); in an alert an index
        is named with the exchange ``INDICES``, as Kite's alerts do."""
        exchange = str(node.get(ex_key, "") or "")
        symbol = str(node.get(sym_key, "") or "")
        if not exchange or not symbol or self.master is None:
            return ""
        found = (
            self.master.for_alert(exchange, symbol) if alert else self.master.get(exchange, symbol)
        )
        if found is not None:
            return found.key
        self.bad(
            _line(node, sym_key, line),
            f"{what}: no instrument {exchange}:{symbol} on {self.day} — use one from "
            "the built-in master (docs/sandbox-scenarios.md; F&O symbols depend on the "
            "scenario date)",
        )
        return ""

    def moment(self, value: Any, line: int, what: str, short: bool = True) -> datetime | None:
        """``YYYY-MM-DD HH:MM[:SS]`` or ``HH:MM[:SS]`` on the scenario date; a date from
        :data:`FIRST_YEAR` to :data:`LAST_YEAR`."""
        if isinstance(value, datetime):
            moment = value.replace(tzinfo=IST) if value.tzinfo is None else value.astimezone(IST)
            return self.in_years(moment, line, what)
        text = str(value).strip()
        full = _TS.fullmatch(text)
        try:
            if full:
                day = date.fromisoformat(full.group(1))
                hh, mm, ss = int(full.group(2)), int(full.group(3)), int(full.group(4) or 0)
                return self.in_years(datetime.combine(day, time(hh, mm, ss), IST), line, what)
            hm = _HM.fullmatch(text) if short else None
            if hm and self.day is not None:
                hh, mm, ss = int(hm.group(1)), int(hm.group(2)), int(hm.group(3) or 0)
                return datetime.combine(self.day, time(hh, mm, ss), IST)
        except ValueError:
            pass
        hint = " or 'HH:MM' for the scenario date" if short else ""
        self.bad(line, f"{what}: {text!r} is not a time — write 'YYYY-MM-DD HH:MM' (IST){hint}")
        return None

    def in_years(self, moment: datetime, line: int, what: str) -> datetime | None:
        if FIRST_YEAR <= moment.year <= LAST_YEAR:
            return moment
        self.bad(
            line,
            f"{what}: the year {moment.year} is outside the years the sandbox simulates — give "
            f"a date from {FIRST_YEAR} to {LAST_YEAR}",
        )
        return None

    # ---- the document ----------------------------------------------------------------------
    def screen(self, yaml: YAML, text: str) -> None:
        """Refuse, before anything is built, what the loader must not build (see
        :data:`MAX_DEPTH`): the first alias, nesting or long number, at its line. A syntax
        error is left for :meth:`parse` to report."""
        depth = 0
        problem = ""
        try:
            for event in yaml.parse(text):
                if isinstance(event, AliasEvent):
                    problem = (
                        f"an alias (*{event.anchor}): a scenario does not read anchors and "
                        "aliases — write the value out where it is used"
                    )
                elif isinstance(event, CollectionStartEvent):
                    depth += 1
                    if depth > MAX_DEPTH:
                        problem = (
                            f"nested more than {MAX_DEPTH} levels deep — a scenario goes at "
                            "most 4 levels deep (docs/sandbox-scenarios.md)"
                        )
                elif isinstance(event, CollectionEndEvent):
                    depth -= 1
                elif (
                    isinstance(event, ScalarEvent)
                    and not event.style
                    and len(event.value) > MAX_NUMBER_CHARS
                    and _NUMBER.fullmatch(event.value)
                ):
                    problem = (
                        f"a number of {len(event.value)} characters — every number here is "
                        "at most 10^15: write it with at most 16 digits"
                    )
                if problem:
                    line = event.start_mark.line + 1 if event.start_mark else 1
                    raise ScenarioError([ScenarioProblem(self.source, line, problem)])
        except YAMLError:
            return

    def parse(self, text: str) -> Scenario:
        yaml = YAML(typ="rt", pure=True)
        self.screen(yaml, text)
        try:
            doc = yaml.load(text)
        except MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = mark.line + 1 if mark else 1
            raise ScenarioError(
                [
                    ScenarioProblem(
                        self.source, line, f"not valid YAML: {exc.problem} — fix the syntax"
                    )
                ]
            ) from exc
        except YAMLError as exc:
            # ruamel's ReaderError (a control character, say) has a character position, not a
            # mark, and a message over two lines: one line, at the character's line.
            position = getattr(exc, "position", None)
            line = text.count("\n", 0, position) + 1 if isinstance(position, int) else 1
            reason = getattr(exc, "reason", None) or str(exc).splitlines()[0]
            character = getattr(exc, "character", None)
            if isinstance(character, str):
                reason = f"{reason} (character U+{ord(character):04X})"
            elif isinstance(character, int):
                reason = f"{reason} (character U+{character:04X})"
            raise ScenarioError(
                [
                    ScenarioProblem(
                        self.source,
                        line,
                        f"not valid YAML: {reason} — remove the character or fix the syntax",
                    )
                ]
            ) from exc
        if doc is None:
            raise ScenarioError(
                [
                    ScenarioProblem(
                        self.source,
                        1,
                        "the scenario is empty — it needs at least 'clock: \"YYYY-MM-DD "
                        "HH:MM:SS\"' (a complete example: docs/sandbox-scenarios.md)",
                    )
                ]
            )
        if not isinstance(doc, CommentedMap):
            raise ScenarioError(
                [
                    ScenarioProblem(
                        self.source,
                        _line(doc),
                        "the scenario is not 'key: value' lines — write them at the top level, "
                        "starting with 'clock:' (a complete example: docs/sandbox-scenarios.md)",
                    )
                ]
            )
        root = self.mapping(doc, 1, "the scenario")
        if root is None:
            raise ScenarioError(self.problems)
        self.keys(root, tuple(_TOP), ("clock",), "the scenario", 1)
        # The clock comes first: the instrument master (F&O symbols) depends on its date, so
        # without a clock the rest cannot be checked.
        clock = None
        if "clock" in root:
            clock = self.moment(root["clock"], _line(root, "clock"), "clock", short=False)
        if clock is None:
            raise ScenarioError(self.problems)
        self.day = clock.date()
        self.clock = clock
        self.master = master_for(self.day)
        speed = self.number(root, "speed", "speed", _line(root, "speed"), default=1.0)
        profile = self.profile(root)
        funds = self.funds(root)
        holdings = self.rows(root, "holdings", self.holding)
        positions = self.rows(root, "positions", self.position)
        orders = self.rows(root, "orders", self.order)
        gtts = self.rows(root, "gtts", self.gtt)
        alerts = self.rows(root, "alerts", self.alert)
        mf_holdings = self.rows(root, "mf_holdings", self.mf_holding)
        mf_orders = self.rows(root, "mf_orders", self.passthrough)
        mf_sips = self.rows(root, "mf_sips", self.passthrough)
        market = self.market(root)
        if self.problems:
            raise ScenarioError(self.problems)
        stem = Path(self.source).stem
        return Scenario(
            name=self.text(root, "name", "name", 1, stem),
            source=self.source,
            description=self.text(root, "description", "description", 1),
            clock=clock,
            speed=speed,
            profile=profile,
            funds=funds,
            holdings=holdings,
            positions=positions,
            orders=orders,
            gtts=gtts,
            alerts=alerts,
            mf_holdings=mf_holdings,
            mf_orders=mf_orders,
            mf_sips=mf_sips,
            market=market,
        )

    def rows(self, root: CommentedMap, key: str, check: Any) -> tuple[dict[str, Any], ...]:
        seq = self.sequence(root.get(key), _line(root, key), key)
        out: list[dict[str, Any]] = []
        if seq is None:
            return ()
        for i, item in enumerate(seq):
            line = _line(seq, i)
            node = self.mapping(item, line, f"{key}[{i + 1}]")
            if node is not None:
                row = check(node, line, f"{key}[{i + 1}]")
                if row is not None:
                    out.append(row)
        return tuple(out)

    def profile(self, root: CommentedMap) -> dict[str, Any]:
        profile: dict[str, Any] = {
            "user_id": "ZS0001",
            "user_type": "individual",
            "email": "sandbox@example.com",
            "user_name": "Sandbox Trader",
            "user_shortname": "Sandbox",
            "broker": "ZERODHA",
            "exchanges": ["NSE", "BSE", "NFO", "BFO", "MCX"],
            "products": ["CNC", "NRML", "MIS", "MTF"],
            "order_types": ["MARKET", "LIMIT", "SL", "SL-M"],
            "avatar_url": None,
            "meta": {"demat_consent": "physical"},
        }
        if "profile" not in root:
            return profile
        line = _line(root, "profile")
        node = self.mapping(root["profile"], line, "profile")
        if node is None:
            return profile
        allowed = (
            "user_id",
            "user_type",
            "email",
            "user_name",
            "user_shortname",
            "broker",
            "exchanges",
            "products",
            "order_types",
            "meta",
        )
        self.keys(node, allowed, (), "profile", line)
        for key in allowed:
            if key in node and key != "meta":
                value = node[key]
                profile[key] = list(value) if isinstance(value, list) else str(value)
        if "meta" in node:
            meta = self.mapping(node["meta"], _line(node, "meta", line), "profile.meta")
            if meta is not None:
                self.keys(meta, ("demat_consent",), (), "profile.meta", _line(node, "meta"))
                consent = self.choice(
                    meta,
                    "demat_consent",
                    DEMAT_CONSENT,
                    "profile.meta",
                    _line(node, "meta"),
                    "physical",
                )
                profile["meta"] = {"demat_consent": consent}
        return profile

    def funds(self, root: CommentedMap) -> dict[str, Funds]:
        out = {"equity": Funds(opening_balance=500000.0), "commodity": Funds()}
        if "funds" not in root:
            return out
        line = _line(root, "funds")
        node = self.mapping(root["funds"], line, "funds")
        if node is None:
            return out
        self.keys(node, ("equity", "commodity"), (), "funds", line)
        for segment in ("equity", "commodity"):
            if segment not in node:
                continue
            at = _line(node, segment, line)
            seg = self.mapping(node[segment], at, f"funds.{segment}")
            if seg is None:
                continue
            self.keys(seg, (*_FUNDS, "enabled"), (), f"funds.{segment}", at)
            values = {k: self.number(seg, k, f"funds.{segment}", at, minimum=None) for k in _FUNDS}
            out[segment] = Funds(enabled=bool(seg.get("enabled", True)), **values)
        return out

    def holding(self, node: CommentedMap, line: int, what: str) -> dict[str, Any] | None:
        self.keys(node, _HOLDING, ("exchange", "tradingsymbol", "quantity"), what, line)
        key = self.instrument(node, "exchange", "tradingsymbol", what, line)
        row: dict[str, Any] = {"line": line, "key": key}
        for name in (
            "quantity",
            "t1_quantity",
            "used_quantity",
            "authorised_quantity",
            "collateral_quantity",
            "opening_quantity",
        ):
            row[name] = int(self.number(node, name, what, line, integer=True))
        row["realised_quantity"] = int(
            self.number(
                node,
                "realised_quantity",
                what,
                line,
                row["quantity"] - row["t1_quantity"],
                integer=True,
            )
        )
        row["average_price"] = self.number(node, "average_price", what, line)
        row["authorised_date"] = self.text(node, "authorised_date", what, line)
        row["collateral_type"] = self.text(node, "collateral_type", what, line)
        # kite-domain §0: quantity already includes the T+1 shares.
        if row["t1_quantity"] > row["quantity"]:
            self.bad(
                line,
                f"{what}: t1_quantity {row['t1_quantity']} is more than quantity "
                f"{row['quantity']} — quantity includes the T+1 shares; raise it or lower "
                "t1_quantity",
            )
        elif row["quantity"] != row["realised_quantity"] + row["t1_quantity"]:
            self.bad(
                line,
                f"{what}: quantity {row['quantity']} is not realised_quantity "
                f"{row['realised_quantity']} + t1_quantity {row['t1_quantity']} — "
                "quantity includes the T+1 shares; make them add up",
            )
        if row["used_quantity"] > row["realised_quantity"] + row["t1_quantity"]:
            self.bad(
                line,
                f"{what}: used_quantity {row['used_quantity']} is more than the "
                "quantity held — lower it",
            )
        return row if key else None

    def position(self, node: CommentedMap, line: int, what: str) -> dict[str, Any] | None:
        self.keys(node, _POSITION, ("exchange", "tradingsymbol", "product", "quantity"), what, line)
        key = self.instrument(node, "exchange", "tradingsymbol", what, line)
        product = self.choice(node, "product", ("MIS", "NRML", "CNC", "MTF"), what, line, "NRML")
        quantity = int(self.number(node, "quantity", what, line, minimum=None, integer=True))
        if quantity == 0 and "quantity" in node:
            self.bad(
                _line(node, "quantity", line),
                f"{what}: quantity is 0 — an open position has a non-zero quantity "
                "(negative for a short)",
            )
        row = {
            "line": line,
            "key": key,
            "product": product,
            "quantity": quantity,
            "average_price": self.number(node, "average_price", what, line),
        }
        if self.master is not None and key:
            inst = self.master.by_key(key)
            if inst is not None and inst.lot_size > 1 and quantity % inst.lot_size:
                self.bad(
                    _line(node, "quantity", line),
                    f"{what}: quantity {quantity} is not a multiple of the lot size "
                    f"{inst.lot_size} — use a whole number of lots",
                )
        return row if key else None

    def order(self, node: CommentedMap, line: int, what: str) -> dict[str, Any] | None:
        self.keys(
            node,
            _ORDER,
            (
                "at",
                "exchange",
                "tradingsymbol",
                "transaction_type",
                "quantity",
                "product",
                "order_type",
            ),
            what,
            line,
        )
        key = self.instrument(node, "exchange", "tradingsymbol", what, line)
        at = (
            self.moment(node.get("at", ""), _line(node, "at", line), what) if "at" in node else None
        )
        row: dict[str, Any] = {
            "line": line,
            "key": key,
            "at": at,
            "transaction_type": self.choice(
                node, "transaction_type", ("BUY", "SELL"), what, line, "BUY"
            ),
            "quantity": int(self.number(node, "quantity", what, line, integer=True)),
            "product": self.choice(node, "product", PRODUCTS, what, line, "CNC"),
            "order_type": self.choice(node, "order_type", ORDER_TYPES, what, line, "LIMIT"),
            "price": self.number(node, "price", what, line),
            "trigger_price": self.number(node, "trigger_price", what, line),
            "variety": self.choice(
                node, "variety", ("regular", "amo", "iceberg"), what, line, "regular"
            ),
            "validity": self.choice(node, "validity", ("DAY", "IOC", "TTL"), what, line, "DAY"),
            "status": self.choice(node, "status", ORDER_STATUSES, what, line, "OPEN"),
            "filled_quantity": int(
                self.number(
                    node, "filled_quantity", what, line, integer=True, default=-1, minimum=-1
                )
            ),
            "average_price": self.number(node, "average_price", what, line),
            "status_message": self.text(node, "status_message", what, line),
            "tag": self.text(node, "tag", what, line),
            "market_protection": self.number(node, "market_protection", what, line, minimum=-1),
        }
        if at is not None and self.day is not None and at.date() != self.day:
            self.bad(
                _line(node, "at", line),
                f"{what}: 'at' is not on the scenario date {self.day} — today's orders only",
            )
        if at is not None and self.clock is not None and at > self.clock:
            self.bad(
                _line(node, "at", line),
                f"{what}: 'at' {at:%H:%M:%S} is after the clock — list only orders placed "
                "before the scenario starts",
            )
        if row["filled_quantity"] > row["quantity"]:
            self.bad(
                _line(node, "filled_quantity", line),
                f"{what}: filled_quantity is more than quantity — lower it",
            )
        return row if key and at is not None else None

    def gtt(self, node: CommentedMap, line: int, what: str) -> dict[str, Any] | None:
        self.keys(
            node,
            _GTT,
            ("type", "exchange", "tradingsymbol", "trigger_values", "orders"),
            what,
            line,
        )
        key = self.instrument(node, "exchange", "tradingsymbol", what, line)
        kind = self.choice(node, "type", ("single", "two-leg"), what, line, "single")
        values = node.get("trigger_values")
        triggers: list[float] = []
        if not isinstance(values, list) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in values
        ):
            self.bad(
                _line(node, "trigger_values", line),
                f"{what}: trigger_values must be a list of numbers — e.g. [1450, 1650]",
            )
        else:
            triggers = [float(v) for v in values]
            want = 1 if kind == "single" else 2
            if len(triggers) != want:
                self.bad(
                    _line(node, "trigger_values", line),
                    f"{what}: a {kind} GTT has {want} trigger value(s), not "
                    f"{len(triggers)} — fix trigger_values",
                )
        orders: list[dict[str, Any]] = []
        seq = self.sequence(node.get("orders"), _line(node, "orders", line), f"{what}.orders")
        for i, item in enumerate(seq or []):
            at = _line(seq, i, line)
            leg = self.mapping(item, at, f"{what}.orders[{i + 1}]")
            if leg is None:
                continue
            self.keys(
                leg,
                _GTT_ORDER,
                ("transaction_type", "quantity", "price"),
                f"{what}.orders[{i + 1}]",
                at,
            )
            orders.append(
                {
                    "transaction_type": self.choice(
                        leg, "transaction_type", ("BUY", "SELL"), what, at, "SELL"
                    ),
                    "quantity": int(self.number(leg, "quantity", what, at, integer=True)),
                    "price": self.number(leg, "price", what, at),
                    "product": self.choice(leg, "product", PRODUCTS, what, at, "CNC"),
                    "order_type": "LIMIT",
                }
            )
        if seq is not None and triggers and len(orders) != len(triggers):
            self.bad(
                _line(node, "orders", line),
                f"{what}: one order per trigger value — "
                f"{len(triggers)} trigger(s), {len(orders)} "
                "order(s)",
            )
        status = self.choice(
            node,
            "status",
            ("active", "triggered", "disabled", "cancelled", "expired", "rejected", "deleted"),
            what,
            line,
            "active",
        )
        created = None
        if "created_at" in node:
            created = self.moment(node["created_at"], _line(node, "created_at", line), what)
        row = {
            "line": line,
            "key": key,
            "type": kind,
            "trigger_values": triggers,
            "last_price": self.number(node, "last_price", what, line),
            "orders": orders,
            "status": status,
            "created_at": created,
        }
        return row if key else None

    def alert(self, node: CommentedMap, line: int, what: str) -> dict[str, Any] | None:
        self.keys(
            node, _ALERT, ("name", "lhs_exchange", "lhs_tradingsymbol", "operator"), what, line
        )
        key = self.instrument(node, "lhs_exchange", "lhs_tradingsymbol", what, line, alert=True)
        row: dict[str, Any] = {
            "line": line,
            "key": key,
            "name": self.text(node, "name", what, line),
            "type": self.choice(node, "type", ("simple", "ato"), what, line, "simple"),
            "lhs_exchange": str(node.get("lhs_exchange", "")),
            "lhs_tradingsymbol": str(node.get("lhs_tradingsymbol", "")),
            "lhs_attribute": self.choice(
                node, "lhs_attribute", ("LastTradedPrice",), what, line, "LastTradedPrice"
            ),
            "operator": self.choice(node, "operator", OPERATORS, what, line, ">="),
            "rhs_type": self.choice(
                node, "rhs_type", ("constant", "instrument"), what, line, "constant"
            ),
            "rhs_constant": self.number(node, "rhs_constant", what, line),
            "rhs_exchange": self.text(node, "rhs_exchange", what, line),
            "rhs_tradingsymbol": self.text(node, "rhs_tradingsymbol", what, line),
            "rhs_attribute": self.text(node, "rhs_attribute", what, line),
            "status": self.choice(node, "status", ("enabled", "disabled"), what, line, "enabled"),
            "basket": _plain(node.get("basket")),
        }
        if row["rhs_type"] == "instrument":
            self.instrument(node, "rhs_exchange", "rhs_tradingsymbol", what, line, alert=True)
        if row["type"] == "ato" and not isinstance(row["basket"], dict):
            self.bad(line, f"{what}: an ato alert needs a basket — add basket: with items")
        return row if key else None

    def mf_holding(self, node: CommentedMap, line: int, what: str) -> dict[str, Any] | None:
        self.keys(node, _MF, ("tradingsymbol", "quantity"), what, line)
        symbol = self.text(node, "tradingsymbol", what, line)
        if self.master is not None and symbol and self.master.mutual_fund(symbol) is None:
            funds = ", ".join(f.tradingsymbol for f in self.master.mutual_funds)
            self.bad(
                _line(node, "tradingsymbol", line),
                f"{what}: no fund {symbol} in the built-in master — use one of {funds}",
            )
            return None
        return {
            "line": line,
            "tradingsymbol": symbol,
            "folio": self.text(node, "folio", what, line, "123456/78"),
            "quantity": self.number(node, "quantity", what, line),
            "average_price": self.number(node, "average_price", what, line),
            "pledged_quantity": self.number(node, "pledged_quantity", what, line),
        }

    def passthrough(self, node: CommentedMap, line: int, what: str) -> dict[str, Any]:
        value = _plain(node)
        assert isinstance(value, dict)
        return value

    def market(self, root: CommentedMap) -> dict[str, PathSpec]:
        out: dict[str, PathSpec] = {}
        if "market" not in root:
            return out
        line = _line(root, "market")
        node = self.mapping(root["market"], line, "market")
        if node is None:
            return out
        for key in node:
            at = _line(node, key, line)
            what = f"market {key}"
            if self.master is None:
                continue
            inst = self.master.by_key(str(key))
            if inst is None:
                self.bad(
                    at,
                    f"{what}: no instrument {key} — write 'EXCHANGE:TRADINGSYMBOL', "
                    "e.g. 'NSE:INFY'",
                )
                continue
            spec = self.mapping(node[key], at, what)
            if spec is None:
                continue
            self.keys(spec, _MARKET, (), what, at)
            close = self.number(spec, "close", what, at, default=-1.0)
            liquidity = self.number(spec, "liquidity", what, at, default=-1.0, integer=True)
            spread = self.number(spec, "spread", what, at, default=-1.0)
            if spread == 0 or (spread > 0 and not on_tick(spread, inst.tick_size)):
                self.bad(
                    _line(spec, "spread", at),
                    f"{what}: 'spread' must be a positive multiple of the tick size "
                    f"{inst.tick_size:g} (got {spread:g}) — write e.g. spread: "
                    f"{max(round_tick(spread, inst.tick_size), inst.tick_size):g}",
                )
                spread = -1.0
            ticks: list[Tick] = []
            seq = self.sequence(spec.get("path"), _line(spec, "path", at), f"{what} path")
            last: datetime | None = None
            for i, item in enumerate(seq or []):
                tline = _line(seq, i, at)
                tick = self.tick(item, tline, f"{what} path[{i + 1}]", inst.tick_size)
                if tick is None:
                    continue
                if last is not None and tick.at <= last:
                    self.bad(
                        tline,
                        f"{what} path[{i + 1}]: {tick.at:%H:%M:%S} is not after the "
                        "tick before it — list ticks in time order",
                    )
                    continue
                last = tick.at
                ticks.append(tick)
            out[inst.key] = PathSpec(
                close=close if close > 0 else None,
                liquidity=int(liquidity) if liquidity >= 0 else None,
                ticks=tuple(ticks),
                spread=spread if spread > 0 else None,
            )
        return out

    def tick(self, item: Any, line: int, what: str, tick_size: float) -> Tick | None:
        if isinstance(item, CommentedSeq) and len(item) in (2, 3):
            when, price = item[0], item[1]
            liquidity = item[2] if len(item) == 3 else None
        elif isinstance(item, CommentedMap) and "at" in item and "price" in item:
            when, price, liquidity = item["at"], item["price"], item.get("liquidity")
        else:
            self.bad(
                line,
                f"{what}: a tick is [time, price] or [time, price, liquidity] — "
                "e.g. ['11:31', 1502.5]",
            )
            return None
        moment = self.moment(when, line, what)
        if (
            isinstance(price, bool)
            or not isinstance(price, int | float)
            or not _sane(price)
            or price <= 0
        ):
            self.bad(
                line,
                f"{what}: price must be a positive number of at most 10^15 (got {price!r}) — "
                "e.g. ['11:31', 1502.5]",
            )
            return None
        units = float(price) / tick_size
        if abs(units - round(units)) > 1e-6:
            self.bad(
                line,
                f"{what}: price {price} is not a multiple of the tick size "
                f"{tick_size:g} — round it",
            )
            return None
        if liquidity is not None and (
            isinstance(liquidity, bool)
            or not isinstance(liquidity, int)
            or liquidity < 0
            or not _sane(liquidity)
        ):
            self.bad(line, f"{what}: liquidity must be a whole number of 0 or more")
            return None
        if moment is None:
            return None
        return Tick(moment, float(price), liquidity)


_LARGEST = 10**15  # beyond any quantity, price or balance a scenario needs


def _sane(value: float) -> bool:
    """Finite and at most 10^15 in size (a YAML .inf, .nan or 1e400 is a typo here)."""
    if isinstance(value, int):
        return abs(value) <= _LARGEST
    return math.isfinite(value) and abs(value) <= _LARGEST


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value
