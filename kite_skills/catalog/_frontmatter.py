"""Split a Markdown file into YAML frontmatter and body, YAML 1.2 core schema.

Clients re-parse SKILL.md with a YAML 1.2 core-schema reader (npm ``yaml``) and compare
the frontmatter key by key, so plain scalars are resolved here with the core schema's
own rules rather than ruamel's constructors (which turn ``2024-01-01`` into a date and
``1_000`` into 1000). Values JSON cannot carry (``.inf``, ``.nan``) are refused. Simple
``key: value`` lines are read here directly; anything else by :mod:`._frontmatter_yaml`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ._frontmatter_problem import FrontmatterProblem as FrontmatterProblem

_OPEN = "---"
_CLOSE = re.compile(r"---[ \t]*")


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
# marks that starts with a letter; and a `key:` line opening a mapping of such lines, each
# indented by two spaces (a SKILL.md's `metadata`). For such lines the core schema's answer
# is known without a YAML parser (the text; only the words below resolve otherwise), and
# parsing them that way is ~50× faster than ruamel's pure-Python parser, which matters for a
# catalog of 10,000 files. Anything else goes to ruamel; tests/catalog/test_frontmatter_fast.py
# holds the two equal.
_SIMPLE_LINE = re.compile(
    r"([A-Za-z][A-Za-z0-9_-]*): "
    r"(?:\"([^\"\\]*)\"|'([^']*)'|([A-Za-z](?:[A-Za-z0-9 ._/()+-]*[A-Za-z0-9._/()+-])?))"
)
_MAPPING_LINE = re.compile(r"([A-Za-z][A-Za-z0-9_-]*):")
_INDENT = "  "
_NOT_TEXT = re.compile(r"null|Null|NULL|true|True|TRUE|false|False|FALSE")


def _load_simple(source: str) -> dict[str, Any] | None:
    """The frontmatter when every line has one of the simple shapes above, else None."""
    result: dict[str, Any] = {}
    mapping: dict[str, Any] | None = None  # the one a `key:` line opened, while indented
    for line in source.split("\n"):
        if mapping is not None and line.startswith(_INDENT):
            target, line = mapping, line[len(_INDENT) :]
        else:
            if mapping == {}:
                return None  # `key:` with nothing under it is null, not a mapping
            mapping, target = None, result
            opened = _MAPPING_LINE.fullmatch(line)
            if opened is not None:
                key = opened.group(1)
                if key in result or _NOT_TEXT.fullmatch(key):
                    return None
                mapping = result[key] = {}
                continue
        match = _SIMPLE_LINE.fullmatch(line)
        if match is None or not line.isprintable():
            return None
        key, double, single, plain = match.groups()
        if key in target or _NOT_TEXT.fullmatch(key) or (plain and _NOT_TEXT.fullmatch(plain)):
            return None
        target[key] = double if double is not None else single if single is not None else plain
    if mapping == {}:
        return None
    return result or None


def _load(source: str, first_line: int) -> dict[str, Any]:
    simple = _load_simple(source)
    if simple is not None:
        return simple
    from ._frontmatter_yaml import load_yaml  # ruamel.yaml only when the shape needs it

    return load_yaml(source, first_line)
