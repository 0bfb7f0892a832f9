"""Turning store text into what a page shows: Markdown without raw HTML, diffs, local times
(``local_time`` is :func:`kite_skills.display.local_time`, re-exported for the templates).

Agent-written text passes :func:`kite_skills.display.visible` first (control, bidi and
zero-width characters become escapes), then either markdown-it-py with raw HTML disabled
(its output is the only ``*_html`` value a template marks safe) or Jinja's autoescape.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.common.utils import unescapeAll
from markdown_it.token import Token
from markupsafe import Markup, escape

from kite_skills.display import (
    MIN_BLANK_RUN,
    blank_lines,
    blank_runs,
    body_lines,
    count_hidden,
    split_hidden,
    visible,
)
from kite_skills.display import local_time as local_time  # the templates' filter
from kite_skills.rtl import lines_with_rtl, rtl_runs
from kite_skills.store.records import short_revision


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    # CommonMark with raw HTML off: <script>, <img onerror> and </textarea> come out as text;
    # markdown-it refuses javascript:, vbscript:, file: and data: link targets.
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})


_OPEN, _CLOSE = "\ue000", "\ue001"  # private-use marks around each escape, for the markup
_RTL_OPEN, _RTL_CLOSE = "\ue002", "\ue003"  # and around each right-to-left run
_SPAN = '<span class="hidden-char" title="a hidden character">'


def body_html(body: str) -> Markup:
    """The body as HTML: each hidden character made a visible, marked escape, then Markdown
    with raw HTML disabled; what the parser decodes (``&#x202E;`` and other character
    references) is marked after parsing too, so no hidden character reaches the page; each
    right-to-left run is shown in stored order (:func:`in_stored_order`)."""
    text = body
    for mark in (_OPEN, _CLOSE, _RTL_OPEN, _RTL_CLOSE):
        text = text.replace(mark, f"\\u{ord(mark):04x}")
    marked = "".join(
        f"{_OPEN}{piece}{_CLOSE}" if hidden else piece
        for piece, hidden in split_hidden(text, multiline=True)
    )
    md = _markdown()
    tokens = md.parse(marked)
    _mark_decoded(tokens)
    rendered = md.renderer.render(tokens, md.options, {})
    rendered = rendered.replace(_OPEN, _SPAN).replace(_CLOSE, "</span>")
    return Markup(rendered.replace(_RTL_OPEN, _BDO).replace(_RTL_CLOSE, "</bdo>"))


def _mark(text: str) -> str:
    """``text`` with each hidden character outside the marks already placed marked too, and
    each right-to-left run between marks."""
    out: list[str] = []
    for index, part in enumerate(re.split(f"({_OPEN}[^{_CLOSE}]*{_CLOSE})", text)):
        if index % 2:  # already marked
            out.append(part)
            continue
        out += [
            f"{_OPEN}{piece}{_CLOSE}" if hidden else _mark_rtl(piece)
            for piece, hidden in split_hidden(part, multiline=True)
        ]
    return "".join(out)


def _mark_rtl(text: str) -> str:
    out: list[str] = []
    start = 0
    for low, high in rtl_runs(text):
        out += [text[start:low], _RTL_OPEN, text[low:high], _RTL_CLOSE]
        start = high
    out.append(text[start:])
    return "".join(out)


def _visible_unmarked(text: str) -> str:
    """For an attribute, where no markup may go: the marks dropped, hidden characters
    escaped (``\\u202e``) without a span."""
    for mark in (_OPEN, _CLOSE, _RTL_OPEN, _RTL_CLOSE):
        text = text.replace(mark, "")
    return visible(text, multiline=True)


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
    as its escape, marked ``<span class="hidden-char">`` so the person sees it stand out, and
    each run of right-to-left characters is shown in stored order (:func:`in_stored_order`)."""
    text = text or ""
    if not (count_hidden(text, multiline=multiline) or rtl_runs(text)):
        return escape(text)  # the common case: nothing to mark
    return Markup("").join(
        Markup('<span class="hidden-char" title="a hidden character">{}</span>').format(piece)
        if hidden
        else in_stored_order(piece)
        for piece, hidden in split_hidden(text, multiline=multiline)
    )


_BDO = '<bdo dir="ltr" class="rtl">'  # styled in style.css: isolated, left to right


def in_stored_order(text: str) -> Markup:
    """Escaped HTML of ``text`` with each run of right-to-left characters
    (:mod:`kite_skills.rtl`) in a ``<bdo dir="ltr">``: isolated from the line around it and
    laid out left to right, so the browser's bidi algorithm moves nothing (issue 38: without
    it, ``900 ׀ 1200`` shows the numbers swapped). Only right-to-left characters go in a run:
    the digits and spaces between two runs stay outside, in the page's left-to-right line."""
    runs = rtl_runs(text)
    if not runs:
        return escape(text)
    out: list[Markup] = []
    start = 0
    for low, high in runs:
        out += [escape(text[start:low]), Markup(_BDO), escape(text[low:high]), Markup("</bdo>")]
        start = high
    out.append(escape(text[start:]))
    return Markup("").join(out)


def source_html(body: str, anchor: str) -> Markup:
    """The body exactly as stored, one marked-up line per stored line (``id`` ``anchor`` + its
    number, which the stylesheet shows from ``data-n``): hidden characters marked, nothing
    rendered; a run of blank lines as one line that says how many."""
    lines = body_lines(body)
    runs = blank_runs(lines)
    line = Markup('<span class="line" id="{0}{1}" data-n="{1}">{2}</span>\n')
    blank = Markup('<span class="line blank-run" id="{0}{1}" data-n="{1}">{2}</span>\n')
    out: list[Markup] = []
    index = 0
    while index < len(lines):
        if index in runs:
            out.append(blank.format(anchor, index + 1, blank_lines(runs[index], index + 1)))
            index += runs[index]
            continue
        out.append(line.format(anchor, index + 1, visible_html(lines[index], multiline=True)))
        index += 1
    return Markup("").join(out)


def rtl_lines(description: str, body: str) -> list[tuple[int | None, str]]:
    """The lines that hold right-to-left characters (:mod:`kite_skills.rtl`), for the warning
    above the buttons: ``(None, description)`` first when the description holds one, then
    ``(line number, line)``."""
    found: list[tuple[int | None, str]] = [(None, description)] if rtl_runs(description) else []
    return found + [(number, line) for number, line in lines_with_rtl(body)]


def hidden_in(*texts: tuple[str, bool]) -> int:
    """How many control, bidi or zero-width characters the texts hold (shown escaped)."""
    return sum(count_hidden(text, multiline=multiline) for text, multiline in texts)


@dataclass(frozen=True)
class DiffLine:
    """One row of a diff: ``kind`` is ``add``, ``del``, ``same`` or ``hunk`` (a gap, whose
    ``text`` says which lines follow); ``old``/``new`` are body line numbers as the stored
    text shows them (None for the description row); ``words`` splits a changed line that
    has a counterpart into ``(piece, changed)`` runs, for word-level highlights; ``blank``,
    when not 0, is how many blank lines from ``old``/``new`` on the row stands for."""

    kind: str
    text: str
    old: int | None = None
    new: int | None = None
    words: tuple[tuple[str, bool], ...] = ()
    blank: int = 0


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
    old, new = body_lines(old_body), body_lines(new_body)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for index, group in enumerate(matcher.get_grouped_opcodes(3)):
        if index or group[0][1] or group[0][3]:
            lines.append(DiffLine("hunk", "⋯"))  # lines left out: the numbers say which
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [DiffLine("same", old[i], i + 1, j1 + (i - i1) + 1) for i in range(i1, i2)]
            else:
                lines += _changed(old[i1:i2], new[j1:j2], i1 + 1, j1 + 1)
    return _collapse_blank(lines)


def _collapse_blank(lines: list[DiffLine]) -> list[DiffLine]:
    """Each run of at least :data:`MIN_BLANK_RUN` blank rows of one kind as one row."""
    out: list[DiffLine] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        end = index
        while (
            end < len(lines)
            and lines[end].kind == line.kind != "hunk"
            and not lines[end].text.strip()
        ):
            end += 1
        if end - index >= MIN_BLANK_RUN:
            out.append(dataclasses.replace(line, words=(), blank=end - index))
            index = end
        else:
            out.append(line)
            index += 1
    return out


def diff_html(line: DiffLine) -> Markup:
    """One diff row's text: escaped, hidden characters marked, the changed words of a paired
    line in ``<ins class="word">``/``<del class="word">``, an empty line as a visible mark."""
    if line.blank:
        first = line.new if line.kind == "add" else line.old
        text = blank_lines(line.blank, first or 0)
        return Markup('<span class="blank blank-run">⏎ {}</span>').format(text)
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
