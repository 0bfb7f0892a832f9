"""Turning store text into what a page shows: Markdown without raw HTML, diffs, local times
(``local_time`` is :func:`kite_skills.display.local_time`, re-exported for the templates).

Agent-written text passes :func:`kite_skills.display.visible` first (control, bidi and
zero-width characters become escapes), then either markdown-it-py with raw HTML disabled
(its output is the only ``*_html`` value a template marks safe) or Jinja's autoescape.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll
from markdown_it.token import Token
from markupsafe import Markup, escape

from kite_skills.display import count_hidden, split_hidden, visible
from kite_skills.display import local_time as local_time  # the templates' filter


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    # CommonMark with raw HTML off: <script>, <img onerror> and </textarea> come out as text;
    # markdown-it refuses javascript:, vbscript:, file: and data: link targets.
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})


_OPEN, _CLOSE = "\ue000", "\ue001"  # private-use marks around each escape, for the markup
_SPAN = '<span class="hidden-char" title="a hidden character">'


def body_html(body: str) -> Markup:
    """The body as HTML: each hidden character made a visible, marked escape, then Markdown
    with raw HTML disabled; what the parser decodes (``&#x202E;`` and other character
    references) is marked after parsing too, so no hidden character reaches the page."""
    text = body.replace(_OPEN, "\\ue000").replace(_CLOSE, "\\ue001")
    marked = "".join(
        f"{_OPEN}{piece}{_CLOSE}" if hidden else piece
        for piece, hidden in split_hidden(text, multiline=True)
    )
    md = _markdown()
    tokens = md.parse(marked)
    _mark_decoded(tokens)
    rendered = md.renderer.render(tokens, md.options, {})
    return Markup(rendered.replace(_OPEN, _SPAN).replace(_CLOSE, "</span>"))


def _mark(text: str) -> str:
    """``text`` with each hidden character outside the marks already placed marked too."""
    out: list[str] = []
    for index, part in enumerate(re.split(f"({_OPEN}[^{_CLOSE}]*{_CLOSE})", text)):
        if index % 2:  # already marked
            out.append(part)
            continue
        out += [
            f"{_OPEN}{piece}{_CLOSE}" if hidden else piece
            for piece, hidden in split_hidden(part, multiline=True)
        ]
    return "".join(out)


def _plain(text: str) -> str:
    """For an attribute, where no markup may go: the marks dropped, hidden characters
    escaped (``\\u202e``) without a span."""
    return visible(text.replace(_OPEN, "").replace(_CLOSE, ""), multiline=True)


def _mark_decoded(tokens: list[Token], *, in_attribute: bool = False) -> None:
    """Mark what parsing decoded: text and code get marked escapes, attributes (link and
    image titles, an image's description, a code block's language) plain escapes."""
    for token in tokens:
        if token.attrs:
            token.attrs = {
                k: _plain(v) if isinstance(v, str) else v for k, v in token.attrs.items()
            }
        if token.info and token.type == "fence":
            # the renderer decodes a fence's info string into its class: decode it here, and
            # write back what decodes to the escaped text and nothing else
            info = _plain(unescapeAll(token.info))
            token.info = info.replace("\\", "\\\\").replace("&", "&amp;")
        if token.type in ("text", "code_inline", "code_block", "fence"):
            token.content = _plain(token.content) if in_attribute else _mark(token.content)
        if token.children:
            # an image's children become its alt attribute
            _mark_decoded(token.children, in_attribute=in_attribute or token.type == "image")


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


def source_html(body: str, anchor: str) -> Markup:
    """The body exactly as stored, one marked-up line per stored line (``id`` ``anchor`` + its
    number, which a stylesheet counter shows): hidden characters marked, nothing rendered."""
    lines = body.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the final line feed ends the last line; it starts no new one
    line = Markup('<span class="line" id="{}{}">{}</span>\n')
    return Markup("").join(
        line.format(anchor, number, visible_html(text, multiline=True))
        for number, text in enumerate(lines, start=1)
    )


def hidden_in(*texts: tuple[str, bool]) -> int:
    """How many control, bidi or zero-width characters the texts hold (shown escaped)."""
    return sum(count_hidden(text, multiline=multiline) for text, multiline in texts)


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
