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
from kite_skills.store.records import short_revision


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


def _visible_unmarked(text: str) -> str:
    """For an attribute, where no markup may go: the marks dropped, hidden characters
    escaped (``\\u202e``) without a span."""
    return visible(text.replace(_OPEN, "").replace(_CLOSE, ""), multiline=True)


def _mark_decoded(tokens: list[Token], *, in_attribute: bool = False) -> None:
    """Mark what parsing decoded: text and code get marked escapes, attributes (link and
    image titles, an image's description, a code block's language) plain escapes."""
    for token in tokens:
        if token.attrs:
            token.attrs = {
                k: _visible_unmarked(v) if isinstance(v, str) else v for k, v in token.attrs.items()
            }
        if token.info and token.type == "fence":
            # the renderer decodes a fence's info string into its class: decode it here, and
            # write back what decodes to the escaped text and nothing else
            info = _visible_unmarked(unescapeAll(token.info))
            token.info = info.replace("\\", "\\\\").replace("&", "&amp;")
        if token.type in ("text", "code_inline", "code_block", "fence"):
            token.content = (
                _visible_unmarked(token.content) if in_attribute else _mark(token.content)
            )
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
    """One row of a diff: ``kind`` is ``add``, ``del``, ``same`` or ``hunk`` (a gap, whose
    ``text`` says which lines follow); ``old``/``new`` are body line numbers as the stored
    text shows them (None for the description row); ``words`` splits a changed line that
    has a counterpart into ``(piece, changed)`` runs, for word-level highlights."""

    kind: str
    text: str
    old: int | None = None
    new: int | None = None
    words: tuple[tuple[str, bool], ...] = ()


_TOKENS = re.compile(r"\S+|\s+")  # words keep their joiners and marks: emoji sequences stay
_WORDS_WORTH_IT = 0.4  # below this likeness a line was rewritten: highlight it whole


def _word_runs(old: str, new: str) -> tuple[tuple[tuple[str, bool], ...], ...]:
    """``(old runs, new runs)``: each line cut into ``(text, changed)`` runs by a word diff;
    two empty tuples when the lines share too little for word marks to help."""
    likeness = difflib.SequenceMatcher(None, old.split(), new.split(), autojunk=False)
    if likeness.ratio() < _WORDS_WORTH_IT:
        return (), ()
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    old_runs: list[tuple[str, bool]] = []
    new_runs: list[tuple[str, bool]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i2 > i1:
            old_runs.append(("".join(a[i1:i2]), tag != "equal"))
        if j2 > j1:
            new_runs.append(("".join(b[j1:j2]), tag != "equal"))
    return tuple(old_runs), tuple(new_runs)


def _pairs(old: list[str], new: list[str]) -> dict[int, tuple[int, tuple[tuple[str, bool], ...]]]:
    """Which removed line became which added one, in order: each removed line is paired with
    the first later added line it shares enough words with (blocks of up to 50 lines; a
    bigger one is a rewrite). Maps a removed line's index to ``(added index, its runs)`` and
    ``-1 - added index`` to ``(removed index, the added line's runs)``."""
    pairs: dict[int, tuple[int, tuple[tuple[str, bool], ...]]] = {}
    if len(old) > 50 or len(new) > 50:
        return pairs
    start = 0
    for i, text in enumerate(old):
        for j in range(start, len(new)):
            old_runs, new_runs = _word_runs(text, new[j])
            if old_runs:
                pairs[i] = (j, old_runs)
                pairs[-1 - j] = (i, new_runs)
                start = j + 1
                break
    return pairs


def _changed(
    old: list[str], new: list[str], old_start: int | None, new_start: int | None
) -> list[DiffLine]:
    """A replaced block: removed lines, then added lines, each paired line with word runs."""
    pairs = _pairs(old, new)
    out = [
        DiffLine(
            "del",
            text,
            None if old_start is None else old_start + k,
            None,
            pairs[k][1] if k in pairs else (),
        )
        for k, text in enumerate(old)
    ]
    out += [
        DiffLine(
            "add",
            text,
            None,
            None if new_start is None else new_start + k,
            pairs[-1 - k][1] if -1 - k in pairs else (),
        )
        for k, text in enumerate(new)
    ]
    return out


def diff_lines(
    old_description: str, old_body: str, new_description: str, new_body: str
) -> list[DiffLine]:
    """What changed from the old text to the new: the description (when it changed), then
    the body's changed lines with three lines of context, numbered as the stored text is
    (:func:`source_html`), paired changes split into word runs. Templates show each piece
    through :func:`visible_html` (:func:`diff_html`)."""
    lines: list[DiffLine] = []
    if old_description != new_description:
        lines += _changed(
            [f"description: {old_description}"], [f"description: {new_description}"], None, None
        )
    old, new = _numbered(old_body), _numbered(new_body)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for index, group in enumerate(matcher.get_grouped_opcodes(3)):
        if index or group[0][1] or group[0][3]:
            lines.append(DiffLine("hunk", "⋯"))  # lines left out: the numbers say which
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [DiffLine("same", old[i], i + 1, j1 + (i - i1) + 1) for i in range(i1, i2)]
            else:
                lines += _changed(old[i1:i2], new[j1:j2], i1 + 1, j1 + 1)
    return lines


def _numbered(body: str) -> list[str]:
    """The body's lines as :func:`source_html` numbers them (a final line feed starts no
    line of its own)."""
    lines = body.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def diff_html(line: DiffLine) -> Markup:
    """One diff row's text: escaped, hidden characters marked, the changed words of a paired
    line in ``<ins class="word">``/``<del class="word">``, an empty line as a visible mark."""
    if not line.text and line.kind != "hunk":
        return Markup('<span class="blank" title="an empty line">⏎</span>')
    if not line.words:
        return visible_html(line.text)
    tag = "ins" if line.kind == "add" else "del"
    return Markup("").join(
        Markup('<{0} class="word">{1}</{0}>').format(tag, visible_html(piece))
        if changed
        else visible_html(piece)
        for piece, changed in line.words
    )


_LONG = re.compile(r"(\S{24,})")  # a token too long for a table cell's width


def cell_html(text: str | None) -> Markup:
    """:func:`visible_html` for a table cell: a token of 24 or more characters (a revision
    id, a path, a name without hyphens) may wrap anywhere (``<span class="long">``); words
    never break mid-word."""
    parts = _LONG.split(text or "")
    return Markup("").join(
        Markup('<span class="long">{}</span>').format(visible_html(part))
        if index % 2
        else visible_html(part)
        for index, part in enumerate(parts)
        if part
    )


def revision_html(revision: str) -> Markup:
    """A revision id as a list, a table or a message shows it: its short form
    (:func:`~kite_skills.store.records.short_revision`), the whole id on hover (``title``)
    and in what is copied (the rest of it follows, visually hidden). A revision read from a
    form may hold anything, so it is made visible and escaped first."""
    whole = visible(revision)
    short = short_revision(whole)
    return Markup(
        '<code class="revision" title="{0}">{1}<span class="revision-rest">{2}</span></code>'
    ).format(whole, short, whole[len(short) :])


def full_stop(message: str) -> str:
    """A message from the store or the dashboard, ending as a sentence on a page ends: with
    a full stop (the CLI prints them as they are, as git does)."""
    text = message.rstrip()
    return text if not text or text.endswith((".", "!", "?")) else text + "."
