"""The little Markdown this catalog needs: inline links outside code, and headings."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

_FENCE = re.compile(r"\s{0,3}(```|~~~)")
_CODE_SPAN = re.compile(r"(`+)(?:.*?)\1")
_LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"\s{0,3}#{1,6}\s+(.+?)\s*#*\s*")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True)
class Link:
    line: int  # 1-based, relative to the text given
    text: str
    target: str


def is_relative(target: str) -> bool:
    """A link into the catalog: no scheme, not a bare anchor, not empty."""
    return bool(target) and not target.startswith("#") and not _SCHEME.match(target)


def _prose_lines(text: str) -> Iterator[tuple[int, str, bool]]:
    """Yield (line number, line, is prose) — fenced code blocks are not prose."""
    fence: str | None = None
    for number, line in enumerate(text.split("\n"), start=1):
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            yield number, line, False
        elif fence is not None:
            if match and match.group(1) == fence:
                fence = None
            yield number, line, False
        else:
            yield number, line, True


def _map_outside_code(line: str, replace: Callable[[re.Match[str]], str]) -> str:
    parts: list[str] = []
    position = 0
    for span in _CODE_SPAN.finditer(line):
        parts.append(_LINK.sub(replace, line[position : span.start()]))
        parts.append(span.group(0))
        position = span.end()
    parts.append(_LINK.sub(replace, line[position:]))
    return "".join(parts)


def links(text: str) -> list[Link]:
    """Every inline link in prose (not in code spans or fenced blocks)."""
    found: list[Link] = []
    for number, line, prose in _prose_lines(text):
        if not prose or "](" not in line:  # no link can be on it: skip the regexes
            continue

        def collect(match: re.Match[str], number: int = number) -> str:
            found.append(Link(number, match.group(2), match.group(3)))
            return match.group(0)

        _map_outside_code(line, collect)
    return found


def rewrite_links(text: str, rewrite: Callable[[str, str], str | None]) -> str:
    """Replace each prose link for which ``rewrite(text, target)`` returns a string."""

    def replace(match: re.Match[str]) -> str:
        new = rewrite(match.group(2), match.group(3))
        return match.group(0) if new is None else new

    out = []
    for _, line, prose in _prose_lines(text):
        out.append(_map_outside_code(line, replace) if prose else line)
    return "\n".join(out)


def first_heading(text: str) -> str | None:
    """The text of the first ATX heading in prose, if any."""
    for _, line, prose in _prose_lines(text):
        if prose:
            match = _HEADING.fullmatch(line)
            if match:
                return match.group(1)
    return None
