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
from markupsafe import Markup, escape

from kite_skills.display import count_hidden, split_hidden


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    # CommonMark with raw HTML off: <script>, <img onerror> and </textarea> come out as text;
    # markdown-it refuses javascript:, vbscript:, file: and data: link targets.
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})


_OPEN, _CLOSE = "\ue000", "\ue001"  # private-use marks around each escape, for the markup
_SPAN = '<span class="hidden-char" title="a hidden character">'


def body_html(body: str) -> Markup:
    """The body as HTML: each hidden character made a visible, marked escape, then Markdown
    with raw HTML disabled."""
    text = body.replace(_OPEN, "\\ue000").replace(_CLOSE, "\\ue001")
    marked = "".join(
        f"{_OPEN}{piece}{_CLOSE}" if hidden else piece
        for piece, hidden in split_hidden(text, multiline=True)
    )
    rendered = _markdown().render(marked)
    return Markup(rendered.replace(_OPEN, _SPAN).replace(_CLOSE, "</span>"))


def visible_html(text: str | None, *, multiline: bool = False) -> Markup:
    """Escaped HTML of ``text`` in which each control, bidi or zero-width character is shown
    as its escape, marked ``<span class="hidden-char">`` so the person sees it stand out."""
    text = text or ""
    if not count_hidden(text, multiline=multiline):
        return escape(text)  # the common case: nothing to mark
    return Markup("").join(
        Markup('<span class="hidden-char" title="a hidden character">{}</span>').format(piece)
        if hidden
        else escape(piece)
        for piece, hidden in split_hidden(text, multiline=multiline)
    )


def hidden_in(*texts: tuple[str, bool]) -> int:
    """How many control, bidi or zero-width characters the texts hold (shown escaped)."""
    return sum(count_hidden(text, multiline=multiline) for text, multiline in texts)


@lru_cache(maxsize=4096)
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
    """A unified diff (difflib) of description and body; templates show each line through
    :func:`visible_html`."""
    old = [f"description: {old_description}", "", *old_body.split("\n")]
    new = [f"description: {new_description}", "", *new_body.split("\n")]
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
