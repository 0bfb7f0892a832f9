"""The Kite MCP tool calls a recipe writes, read from its text.

The call form (docs/authoring.md, "Tool calls in recipes"):

- a grouped tool and its mode: ``` `orders` mode `place` ``` (or ``` `orders` (mode `list`) ```);
- a legacy tool: its bare backticked name, ``` `place_order` ```;
- the legacy twin of a grouped call in parentheses right after it:
  ``` `orders` mode `list` (legacy `get_orders`) ``` (or just ``` (`get_orders`) ```);
- the parameters after ``with``, separated by commas, ``and``, ``or`` or ``as needed``; a
  value follows its parameter directly, in backticks or as a number, and ``or`` after a value
  gives another value of the same parameter (``` `type` `full` or `compact` ```):
  ``` with `variety` `regular`, `exchange`, `from` 0 and `limit` 50 ```; ``such as`` may sit
  between a parameter and an example value. The list ends at anything else (a full stop, a
  colon, a semicolon, other words). A call without ``with`` only names the tool;
- a call a generation cannot make is marked in parentheses after it, with the fallback:
  ``` (not on legacy-oldest: [the oldest server](../market-data/resolve.md)) ``` or
  ``` (not on legacy-oldest: `search_instruments` with `query` and `limit`) ```.

Fenced code blocks are not read. Pure: no MCP import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from .. import calc, kite_schemas
from ..kite_schemas import GENERATIONS, Generation


@dataclass(frozen=True)
class Param:
    """A parameter a call names, with the value the text gives (None: no value written)."""

    name: str
    value: str | None
    line: int


@dataclass(frozen=True)
class Unavailable:
    """A mark ``(not on GEN: fallback)`` after a call."""

    generations: tuple[Generation, ...]
    line: int
    links: tuple[str, ...]  # relative link targets in the fallback
    fallbacks: tuple[Call, ...]  # calls written in the fallback


@dataclass(frozen=True)
class Call:
    """One call as written. ``mode`` is None for a legacy tool's bare name; ``with_params``
    is True when the call names its parameters (``with ...``), so its required ones count."""

    tool: str
    mode: str | None
    line: int
    params: tuple[Param, ...] = ()
    with_params: bool = False
    twin: str | None = None  # the legacy name written beside a grouped call
    twin_line: int = 0
    unavailable: Unavailable | None = None
    only: tuple[Generation, ...] = ()  # a fallback call: checked on these generations only

    @property
    def grouped(self) -> bool:
        return self.mode is not None

    def label(self) -> str:
        return f"`{self.tool}` mode `{self.mode}`" if self.grouped else f"`{self.tool}`"


# -- tokens ---------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"(?P<para>\n[ \t]*\n)"
    r"|(?P<code>`[^`\n]+`)"
    r"|(?P<link>\[(?:[^\[\]\n]|\n(?![ \t]*\n))*\]\((?P<target>[^)\s]*)\))"
    r"|(?P<number>-?\d[\d,]*(?:\.\d+)?)"
    r"|(?P<word>[A-Za-z][A-Za-z'_-]*)"
    r"|(?P<punct>[^\sA-Za-z0-9`])"
)


@dataclass(frozen=True)
class _Tok:
    kind: str  # para, code, link, number, word, punct
    text: str  # code: without backticks; link: its target
    line: int


def _blank_fences(text: str) -> str:
    out, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            out.append("")
        else:
            out.append("" if fenced else line)
    return "\n".join(out)


def _tokens(text: str) -> list[_Tok]:
    text = _blank_fences(text)
    out: list[_Tok] = []
    line, position = 1, 0
    for match in _TOKEN.finditer(text):
        line += text.count("\n", position, match.start())
        position = match.start()
        kind = match.lastgroup or "punct"
        if kind == "target":
            kind = "link"
        value = match.group()
        if kind == "code":
            value = value[1:-1].strip()
        elif kind == "link":
            value = match.group("target")
        elif kind == "word":
            value = value.lower()
        out.append(_Tok(kind, value, line + (1 if kind == "para" else 0)))
    return out


# -- vocabulary -----------------------------------------------------------------------------


@cache
def _legacy_names() -> frozenset[str]:
    return frozenset(
        t.name for g in GENERATIONS if g != "grouped" for t in kite_schemas.load(g)
    ) - {"alerts"}  # `alerts` alone names the grouped tool as well; its calls take a mode


@cache
def _not_tools() -> frozenset[str]:
    """Backticked words that look like tool names but are parameters or their values (the
    ``calc`` tool's fields included)."""
    words = {p for g in GENERATIONS for t in kite_schemas.load(g) for p in t.params}
    for g in GENERATIONS:
        for tool in kite_schemas.load(g):
            for param in tool.params.values():
                words.update(param.enum or ())
    for mode in calc.MODES.values():  # this server's own tool: `open_sell_orders` is a field
        words.update(mode.model.model_fields)
    return frozenset(words)


_TOOLISH = re.compile(
    r"(?:get|place|modify|cancel|delete|create|search|list|update|fetch|set|add|remove|edit)_"
    r"[a-z0-9_]+|[a-z0-9_]+_(?:orders?|gtts?|alerts?|trades|tradebook|holdings|positions|"
    r"quotes?|ltp|ohlc|margins|profile|instruments|watchlists?)"
)


def _is_legacy_head(name: str) -> bool:
    """A bare backticked name read as a legacy call: a known legacy tool, or a name shaped
    like a tool that is no parameter or value (so that a misspelt tool is reported)."""
    if name in _legacy_names():
        return True
    return bool(_TOOLISH.fullmatch(name)) and name not in _not_tools()


_GENERATION_WORDS: dict[str, Generation] = {g: g for g in GENERATIONS}


# -- parser ---------------------------------------------------------------------------------


class _Parser:
    def __init__(self, tokens: list[_Tok], only: tuple[Generation, ...] = ()) -> None:
        self.toks = tokens
        self.only = only
        self.i = 0

    def at(self, offset: int = 0) -> _Tok | None:
        index = self.i + offset
        return self.toks[index] if index < len(self.toks) else None

    def is_(self, offset: int, kind: str, *texts: str) -> bool:
        tok = self.at(offset)
        return tok is not None and tok.kind == kind and (not texts or tok.text in texts)

    def calls(self) -> list[Call]:
        out: list[Call] = []
        while self.i < len(self.toks):
            call = self._call()
            if call is None:
                self.i += 1
            else:
                out.append(call)
        return out

    def _head(self) -> tuple[str, str | None, int] | None:
        """A call's head at the cursor (consumed): tool, mode (None: legacy), line."""
        tok = self.at()
        if tok is None or tok.kind != "code":
            return None
        if self.is_(1, "word", "mode") and self.is_(2, "code"):
            self.i += 3
            return tok.text, self.toks[self.i - 1].text, tok.line
        if self.is_(1, "punct", "(") and self.is_(2, "word", "mode") and self.is_(3, "code"):
            mode = self.toks[self.i + 3].text
            self.i += 4
            if self.is_(0, "punct", ")"):
                self.i += 1
            return tok.text, mode, tok.line
        if _is_legacy_head(tok.text):
            self.i += 1
            return tok.text, None, tok.line
        return None

    def _starts_call(self, offset: int) -> bool:
        tok = self.at(offset)
        if tok is None or tok.kind != "code":
            return False
        if self.is_(offset + 1, "word", "mode") or (
            self.is_(offset + 1, "punct", "(") and self.is_(offset + 2, "word", "mode")
        ):
            return True
        return _is_legacy_head(tok.text)

    def _call(self) -> Call | None:
        head = self._head()
        if head is None:
            return None
        tool, mode, line = head
        params: tuple[Param, ...] = ()
        with_params = False
        twin: tuple[str, int] | None = None
        unavailable: Unavailable | None = None
        progress = True
        while progress:
            progress = False
            if not with_params and self.is_(0, "word", "with") and self.is_(1, "code"):
                if not self._starts_call(1):
                    self.i += 1
                    params = self._params()
                    with_params = progress = True
            if mode is not None and twin is None and self.is_(0, "punct", "("):
                found = self._twin()
                if found is not None:
                    twin, progress = (found[0], found[1]), True
                    unavailable = unavailable or found[2]
            if unavailable is None and self.is_(0, "punct", "(") and self.is_(1, "word", "not"):
                unavailable = self._unavailable()
                progress = unavailable is not None
        return Call(
            tool,
            mode,
            line,
            params,
            with_params,
            twin[0] if twin else None,
            twin[1] if twin else 0,
            unavailable,
            self.only,
        )

    def _params(self) -> tuple[Param, ...]:
        out: list[Param] = []
        while True:
            while self.is_(0, "word", "as") and self.is_(1, "word", "needed"):
                self.i += 2
            tok = self.at()
            if tok is None or tok.kind != "code" or self._starts_call(0):
                break
            self.i += 1
            value: str | None = None
            if self.is_(0, "code") and not self._starts_call(0):
                value = self.toks[self.i].text
                self.i += 1
            elif self.is_(0, "number"):
                value = self.toks[self.i].text.replace(",", "")
                self.i += 1
            elif self.is_(0, "word", "such") and self.is_(1, "word", "as") and self.is_(2, "code"):
                value = self.toks[self.i + 2].text
                self.i += 3
            out.append(Param(tok.text, value, tok.line))
            while value is not None and self.is_(0, "word", "or") and self.is_(1, "code"):
                if self._starts_call(1):  # `type` `full` or `compact`: another value
                    break
                out.append(Param(tok.text, self.toks[self.i + 1].text, self.toks[self.i + 1].line))
                self.i += 2
            if not self._separator():
                break
        return tuple(out)

    def _separator(self) -> bool:
        """Skip a list separator (',', 'and', 'or', ', and', 'as needed') before another one."""
        start = self.i
        if self.is_(0, "punct", ","):
            self.i += 1
        if self.is_(0, "word", "and", "or"):
            self.i += 1
        while self.is_(0, "word", "as") and self.is_(1, "word", "needed"):
            self.i += 2
        if self.i > start and self.is_(0, "code") and not self._starts_call(0):
            return True
        self.i = start
        return False

    def _closing(self, start: int) -> int | None:
        """The index of the ')' that closes the '(' at ``start``, within the paragraph."""
        depth = 0
        for index in range(start, len(self.toks)):
            tok = self.toks[index]
            if tok.kind == "para":
                return None
            if tok.kind == "punct" and tok.text == "(":
                depth += 1
            elif tok.kind == "punct" and tok.text == ")":
                depth -= 1
                if depth == 0:
                    return index
        return None

    def _twin(self) -> tuple[str, int, Unavailable | None] | None:
        """``(legacy `name`...)`` or ``(`name`...)`` naming exactly one legacy tool before any
        ';'; a mark may follow the ';': ``(legacy `name`; not on GEN: fallback)``."""
        end = self._closing(self.i)
        if end is None:
            return None
        semi = next(
            (
                k
                for k in range(self.i + 1, end)
                if self.toks[k].kind == "punct" and self.toks[k].text == ";"
            ),
            end,
        )
        inner = self.toks[self.i + 1 : semi]
        start = 1 if inner and inner[0].kind == "word" and inner[0].text == "legacy" else 0
        if not inner[start:] or inner[start].kind != "code":
            return None
        names = [
            t for t in inner if t.kind == "code" and (t.text == "alerts" or _is_legacy_head(t.text))
        ]
        if len(names) != 1 or names[0] is not inner[start]:
            return None
        mark = None
        if semi < end and self.is_(semi + 1 - self.i, "word", "not"):
            mark = self._mark(semi + 1, end)
        self.i = end + 1
        return names[0].text, names[0].line, mark

    def _unavailable(self) -> Unavailable | None:
        """``(not on GEN[, GEN]: fallback)``."""
        end = self._closing(self.i)
        if end is None:
            return None
        mark = self._mark(self.i + 1, end)
        if mark is not None:
            self.i = end + 1
        return mark

    def _mark(self, start: int, end: int) -> Unavailable | None:
        """The mark ``not on GEN[, GEN]: fallback`` in tokens ``start`` to ``end``."""
        if not (
            self.is_(start - self.i, "word", "not") and self.is_(start + 1 - self.i, "word", "on")
        ):
            return None
        line = self.toks[start].line
        index = start + 2
        generations: list[Generation] = []
        while index < end:
            tok = self.toks[index]
            if tok.kind in ("word", "code") and tok.text in _GENERATION_WORDS:
                generations.append(_GENERATION_WORDS[tok.text])
            elif not (tok.kind == "punct" and tok.text == ",") and tok.text != "and":
                break
            index += 1
        if not generations:
            return None
        if index < end and self.toks[index].kind == "punct" and self.toks[index].text == ":":
            index += 1
        inner = self.toks[index:end]
        links = tuple(t.text for t in inner if t.kind == "link")
        fallbacks = tuple(_Parser(inner, tuple(generations)).calls())
        return Unavailable(tuple(generations), line, links, fallbacks)


def extract(text: str) -> list[Call]:
    """Every call written in ``text`` (a file's Markdown body), in order; lines are 1-based
    from the text's first line. Fallback calls sit inside their call's ``unavailable``."""
    return _Parser(_tokens(text)).calls()
