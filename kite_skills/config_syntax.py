"""An MCP client's config file read as strictly as that client reads it.

Claude Desktop, Claude Code and Cursor read their config with a plain JSON parser: a comment
or a trailing comma makes the whole file unreadable, and the client starts none of its
servers. VS Code reads ``mcp.json`` as JSON with comments, where comments and trailing commas
are allowed. :func:`parse` answers the parsed value or a :class:`ConfigSyntax` that names the
line, the column and what is wrong there.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import KiteError


class ConfigSyntax(KiteError):
    """The text is not what the client reads: ``line`` and ``column`` count from 1."""

    def __init__(self, line: int, column: int, what: str) -> None:
        super().__init__(f"line {line}, column {column}: {what}")
        self.line = line
        self.column = column
        self.what = what


def _skip_string(text: str, start: int) -> int:
    """The index just past the JSON string that opens at ``start``."""
    at = start + 1
    while at < len(text) and text[at] != '"':
        at += 2 if text[at] == "\\" else 1
    return at + 1


def _blank(text: str, start: int, end: int, chars: list[str]) -> None:
    for at in range(start, min(end, len(text))):
        if chars[at] not in "\r\n":
            chars[at] = " "


def _extras(text: str) -> tuple[str, list[tuple[int, str]]]:
    """``text`` with every comment and trailing comma blanked out (so that positions stay
    where they were), and where each was, in order."""
    chars = list(text)
    found: list[tuple[int, str]] = []
    at = 0
    while at < len(text):
        if text[at] == '"':
            at = _skip_string(text, at)
        elif text.startswith("//", at):
            end = text.find("\n", at)
            end = len(text) if end < 0 else end
            found.append((at, "a comment (//)"))
            _blank(text, at, end, chars)
            at = end
        elif text.startswith("/*", at):
            end = text.find("*/", at + 2)
            end = len(text) if end < 0 else end + 2
            found.append((at, "a comment (/* */)"))
            _blank(text, at, end, chars)
            at = end
        else:
            at += 1
    blanked = "".join(chars)
    at = 0
    while at < len(blanked):
        if blanked[at] == '"':
            at = _skip_string(blanked, at)
            continue
        if blanked[at] == ",":
            rest = blanked[at + 1 :].lstrip()
            if rest[:1] in ("}", "]"):
                found.append((at, f"a trailing comma before '{rest[0]}'"))
                chars[at] = " "
        at += 1
    found.sort()
    return "".join(chars), found


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def parse(text: str, title: str, jsonc: bool) -> Any:
    """The value in ``text`` as the client ``title`` reads it: plain JSON, or (``jsonc``)
    JSON with comments and trailing commas."""
    blanked, extras = _extras(text)
    if extras and not jsonc:
        index, what = extras[0]
        line, column = _position(text, index)
        raise ConfigSyntax(line, column, f"{what}, which {title} does not allow")
    try:
        return json.loads(blanked)
    except json.JSONDecodeError as exc:
        what = exc.msg[0].lower() + exc.msg[1:]
        if exc.pos >= len(blanked.rstrip()):
            what = f"the file ends too early ({what})"
        raise ConfigSyntax(exc.lineno, exc.colno, what) from None


def first_extra(text: str) -> str:
    """Where the first comment or trailing comma in ``text`` is, as ``line:column``."""
    _, extras = _extras(text)
    line, column = _position(text, extras[0][0]) if extras else (1, 1)
    return f"{line}:{column}"
