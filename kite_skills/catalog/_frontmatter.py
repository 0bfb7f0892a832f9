"""Split a Markdown file into YAML frontmatter and body, YAML 1.2 core schema.

Clients re-parse SKILL.md with a YAML 1.2 core-schema reader (npm ``yaml``) and compare
the frontmatter key by key, so plain scalars are resolved here with the core schema's
own rules rather than ruamel's constructors (which turn ``2024-01-01`` into a date and
``1_000`` into 1000). Values JSON cannot carry (``.inf``, ``.nan``) are refused.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

_OPEN = "---"
_CLOSE = re.compile(r"---[ \t]*")
_STR_TAG = "tag:yaml.org,2002:str"

_NULL = re.compile(r"null|Null|NULL|~|")
_TRUE = re.compile(r"true|True|TRUE")
_FALSE = re.compile(r"false|False|FALSE")
_INT10 = re.compile(r"[-+]?[0-9]+")
_INT8 = re.compile(r"0o[0-7]+")
_INT16 = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INF_NAN = re.compile(r"[-+]?(?:\.inf|\.Inf|\.INF)|\.nan|\.NaN|\.NAN")


class FrontmatterProblem(Exception):
    """A frontmatter defect at ``line`` (1-based, in the file)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass(frozen=True)
class Parsed:
    """A file's frontmatter (``None`` when it has none) and its body after it."""

    frontmatter: dict[str, Any] | None
    body: str
    body_line: int  # 1-based line of the first body line


def normalise(text: str) -> str:
    """The copy that parsing works on: no BOM, LF line ends."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


def split(text: str) -> Parsed:
    """Split normalised ``text``. The opening ``---`` must be the whole first line and
    the closing ``---`` a whole line (trailing blanks allowed)."""
    lines = text.split("\n")
    if lines[0] != _OPEN:
        return Parsed(None, text, 1)
    for index in range(1, len(lines)):
        if _CLOSE.fullmatch(lines[index]):
            data = _load("\n".join(lines[1:index]), first_line=2)
            return Parsed(data, "\n".join(lines[index + 1 :]), index + 2)
    raise FrontmatterProblem(
        1, "frontmatter opened here is never closed — end it with a '---' line"
    )


# The shape nearly every frontmatter has: one `key: value` per line, the value double-quoted
# (no escapes), single-quoted (no quote inside) or a plain run of letters, digits and a few
# marks that starts with a letter. For such a line the core schema's answer is known without
# a YAML parser (the text; only the words below resolve otherwise), and parsing it that way
# is ~50× faster than ruamel's pure-Python parser, which matters for a catalog of 10,000 files.
# Anything else goes to ruamel; tests/catalog/test_frontmatter_fast.py holds the two equal.
_SIMPLE_LINE = re.compile(
    r"([A-Za-z][A-Za-z0-9_-]*): "
    r"(?:\"([^\"\\]*)\"|'([^']*)'|([A-Za-z](?:[A-Za-z0-9 ._/()+-]*[A-Za-z0-9._/()+-])?))"
)
_NOT_TEXT = re.compile(r"null|Null|NULL|true|True|TRUE|false|False|FALSE")


def _load_simple(source: str) -> dict[str, Any] | None:
    """The frontmatter when every line has the simple shape above, else None."""
    result: dict[str, Any] = {}
    for line in source.split("\n"):
        match = _SIMPLE_LINE.fullmatch(line)
        if match is None or not line.isprintable():
            return None
        key, double, single, plain = match.groups()
        if key in result or _NOT_TEXT.fullmatch(key) or (plain and _NOT_TEXT.fullmatch(plain)):
            return None
        result[key] = double if double is not None else single if single is not None else plain
    return result or None


def _load(source: str, first_line: int) -> dict[str, Any]:
    simple = _load_simple(source)
    if simple is not None:
        return simple
    yaml = YAML(typ="safe", pure=True)
    try:
        events = list(yaml.parse(source))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = first_line + (mark.line if mark else 0)
        raise FrontmatterProblem(line, f"frontmatter is not valid YAML: {exc.problem}") from exc
    except YAMLError as exc:
        raise FrontmatterProblem(first_line, f"frontmatter is not valid YAML: {exc}") from exc
    builder = _Builder(events, first_line)
    value = builder.document()
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise FrontmatterProblem(first_line, "frontmatter must be a mapping of 'key: value' lines")
    return value


class _Builder:
    """Builds plain Python values from parser events, resolving with the core schema."""

    def __init__(self, events: list[Any], first_line: int) -> None:
        self._events = [e for e in events if isinstance(e, _VALUE_EVENTS)]
        self._position = 0
        self._first_line = first_line

    def document(self) -> Any:
        if not self._events:
            return None
        value = self._value()
        if self._position != len(self._events):
            raise FrontmatterProblem(self._first_line, "frontmatter must hold one YAML document")
        return value

    def _line(self, event: Any) -> int:
        return self._first_line + int(event.start_mark.line)

    def _next(self) -> Any:
        event = self._events[self._position]
        self._position += 1
        return event

    def _value(self) -> Any:
        event = self._next()
        if isinstance(event, AliasEvent) or getattr(event, "anchor", None):
            raise FrontmatterProblem(
                self._line(event), "anchors and aliases are not supported — write the value out"
            )
        if isinstance(event, ScalarEvent):
            return self._scalar(event)
        if isinstance(event, SequenceStartEvent):
            items = []
            while not isinstance(self._events[self._position], SequenceEndEvent):
                items.append(self._value())
            self._next()
            return items
        if isinstance(event, MappingStartEvent):
            return self._mapping(event)
        raise FrontmatterProblem(self._line(event), "unexpected YAML structure")

    def _mapping(self, start: Any) -> dict[str, Any]:
        result: dict[str, Any] = {}
        while not isinstance(self._events[self._position], MappingEndEvent):
            key_event = self._events[self._position]
            key = self._value()
            if not isinstance(key, str):
                raise FrontmatterProblem(
                    self._line(key_event), f"key {key!r} must be text — quote it"
                )
            if key in result:
                raise FrontmatterProblem(self._line(key_event), f"key '{key}' appears twice")
            result[key] = self._value()
        self._next()
        return result

    def _scalar(self, event: Any) -> Any:
        value: str = event.value
        if event.tag is not None and event.tag not in ("!", _STR_TAG):
            raise FrontmatterProblem(
                self._line(event), f"tag {event.tag} is not supported — write a plain value"
            )
        if event.tag is not None or event.style is not None:
            return value
        return self._resolve_plain(value, event)

    def _resolve_plain(self, value: str, event: Any) -> Any:
        if _NULL.fullmatch(value):
            return None
        if _TRUE.fullmatch(value):
            return True
        if _FALSE.fullmatch(value):
            return False
        if _INT10.fullmatch(value):
            return int(value, 10)
        if _INT8.fullmatch(value):
            return int(value[2:], 8)
        if _INT16.fullmatch(value):
            return int(value[2:], 16)
        if _INF_NAN.fullmatch(value):
            raise FrontmatterProblem(
                self._line(event), f"value '{value}' is not a JSON number — quote it"
            )
        if _FLOAT.fullmatch(value):
            number = float(value)
            if math.isinf(number):
                raise FrontmatterProblem(
                    self._line(event), f"value '{value}' is out of range — quote it"
                )
            return number
        return value


_VALUE_EVENTS = (
    AliasEvent,
    ScalarEvent,
    SequenceStartEvent,
    SequenceEndEvent,
    MappingStartEvent,
    MappingEndEvent,
)
