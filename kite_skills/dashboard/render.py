"""Turning store text into what a page shows: Markdown without raw HTML, diffs, local times.

Agent-written text passes :func:`kite_skills.display.visible` first (control, bidi and
zero-width characters become escapes), then either markdown-it-py with raw HTML disabled
(its output is the only ``*_html`` value a template marks safe) or Jinja's autoescape.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from markdown_it import MarkdownIt
from markupsafe import Markup

from kite_skills.display import count_hidden, visible


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    # CommonMark with raw HTML off: <script>, <img onerror> and </textarea> come out as text;
    # markdown-it refuses javascript:, vbscript:, file: and data: link targets.
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})


def body_html(body: str) -> Markup:
    """The body as HTML: escapes made visible, then Markdown with raw HTML disabled."""
    return Markup(_markdown().render(visible(body, multiline=True)))


def hidden_in(*texts: tuple[str, bool]) -> int:
    """How many control, bidi or zero-width characters the texts hold (shown escaped)."""
    return sum(count_hidden(text, multiline=multiline) for text, multiline in texts)


def local_time(stamp: str | None) -> str:
    """``2026-05-01T09:30:00.000000Z`` as the machine's local time, to the second."""
    if not stamp:
        return ""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "add" | "del" | "same" | "hunk"
    text: str


def diff_lines(
    old_description: str, old_body: str, new_description: str, new_body: str
) -> list[DiffLine]:
    """A unified diff (difflib) of description and body, each line already made visible."""
    old = [
        f"description: {visible(old_description)}",
        "",
        *visible(old_body, multiline=True).split("\n"),
    ]
    new = [
        f"description: {visible(new_description)}",
        "",
        *visible(new_body, multiline=True).split("\n"),
    ]
    lines: list[DiffLine] = []
    for raw in difflib.unified_diff(old, new, lineterm="", n=3):
        if raw.startswith(("---", "+++")):
            continue
        if raw.startswith("@@"):
            lines.append(DiffLine("hunk", raw))
        elif raw.startswith("+"):
            lines.append(DiffLine("add", raw[1:]))
        elif raw.startswith("-"):
            lines.append(DiffLine("del", raw[1:]))
        else:
            lines.append(DiffLine("same", raw[1:]))
    return lines
