"""The full YAML path of frontmatter parsing: ruamel.yaml's parser, values built with the YAML
1.2 core schema. Imported only for frontmatter that the fast path in :mod:`._frontmatter` does
not take, so that a server whose catalog is all simple lines never imports ruamel.yaml."""

from __future__ import annotations

import math
import re
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

from ._frontmatter_problem import FrontmatterProblem

_STR_TAG = "tag:yaml.org,2002:str"

_NULL = re.compile(r"null|Null|NULL|~|")
_TRUE = re.compile(r"true|True|TRUE")
_FALSE = re.compile(r"false|False|FALSE")
_INT10 = re.compile(r"[-+]?[0-9]+")
_INT8 = re.compile(r"0o[0-7]+")
_INT16 = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INF_NAN = re.compile(r"[-+]?(?:\.inf|\.Inf|\.INF)|\.nan|\.NaN|\.NAN")


def load_yaml(source: str, first_line: int) -> dict[str, Any]:
    """Parse ``source`` with ruamel.yaml's parser and build values with the core schema."""
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
