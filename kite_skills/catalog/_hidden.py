"""What a rendered Markdown page does not show: every construct in a text that renders to
nothing or hides text, each with its line, found with the parser the dashboard renders with
(markdown-it-py, CommonMark).

A person who reviews a skill as a rendered page never sees a reference definition
(``[policy]: https://x "SYSTEM: …"``, or the comment idiom ``[//]: # (…)``), a link's
destination or title, an image's description, an HTML comment, or what a character reference
(``&#x202E;``) turns into; an agent reads all of them as text. :func:`hidden_constructs` lists
them so the review can name each one with its line.

How: the parser runs with raw HTML on (what other renderers do) and with its inline rules for
links, images, HTML and character references wrapped, so each token they produce knows where
its source starts and ends. Two catch-alls stand behind the named constructs: a line that no
block of the rendered page covers, and letters or digits of a paragraph's source that neither
its shown text nor a named construct accounts for, are reported as ``dropped text``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

__all__ = ["HiddenConstruct", "HiddenKind", "hidden_constructs"]

HiddenKind = Literal[
    "reference definition",
    "footnote definition",
    "link destination",
    "link title",
    "link label",
    "image description",
    "image source",
    "image title",
    "HTML comment",
    "raw HTML",
    "character reference",
    "code block info",
    "dropped text",
]


@dataclass(frozen=True)
class HiddenConstruct:
    """One construct whose text a rendered page hides; agents read it as text."""

    line: int  # 1-based, in the text given
    kind: HiddenKind
    text: str  # the hidden text as the parser reads it (a definition: its source lines)
    decodes_to: str | None = None  # a character reference: what the page shows instead


# Block tokens that put something on the page for the lines they cover.
_LEAF_BLOCKS: Final = frozenset(
    {"paragraph_open", "heading_open", "code_block", "fence", "html_block", "hr", "definition"}
)
# What may stand on a line that holds only container markers (block quotes, list items).
_CONTAINER_MARKERS: Final = re.compile(r"[ \t]*(?:(?:>|[-+*]|\d{1,9}[.)])(?=[ \t]|$)[ \t]*)*")
_FOOTNOTE: Final = re.compile(r"\[\^[^\]\s]+\]:")
_SPAN: Final = "kite_span"  # token.meta key: (start, end) of its source in the inline text
_LABEL_END: Final = "kite_label_end"  # link/image: where its text ends and its target begins


def _spanned(rule: Callable[[Any, bool], bool], types: frozenset[str], label: int | None) -> Any:
    """``rule``, recording on each token of ``types`` it pushes where its source is; for a link
    (``label=0``) or an image (``label=1``), where the bracketed text ends too."""

    def wrapped(state: Any, silent: bool) -> bool:
        start, before = state.pos, len(state.tokens)
        matched = rule(state, silent)
        if matched and not silent:
            label_end = None
            if label is not None:
                from markdown_it.helpers import parseLinkLabel

                label_end = parseLinkLabel(state, start + label, label == 0)
            for token in state.tokens[before:]:
                if token.type in types and _SPAN not in token.meta:
                    token.meta[_SPAN] = (start, state.pos)
                    token.meta[_LABEL_END] = label_end
        return matched

    return wrapped


@cache
def _parser() -> MarkdownIt:
    """CommonMark with raw HTML on, reference definitions kept as tokens, character
    references kept apart from the text around them (no ``text_join``), and the rules that
    hide text recording their source spans."""
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import autolink, entity, html_inline, image, link

    md = MarkdownIt("commonmark", {"html": True, "inline_definitions": True})
    md.disable("text_join")
    ruler = md.inline.ruler
    ruler.at("link", _spanned(link, frozenset({"link_open", "link_close"}), 0))
    ruler.at("autolink", _spanned(autolink, frozenset({"link_open"}), None))
    ruler.at("image", _spanned(image, frozenset({"image"}), 1))
    ruler.at("html_inline", _spanned(html_inline, frozenset({"html_inline"}), None))
    ruler.at("entity", _spanned(entity, frozenset({"text_special"}), None))
    return md


def hidden_constructs(text: str) -> list[HiddenConstruct]:
    """Every construct in ``text`` that a rendered page does not show, sorted by line.

    Line numbers count ``\\n``-separated lines of ``text`` as stored (a carriage return does
    not start a line here, as it does not in a source view that shows it escaped).
    """
    if not text:
        return []
    # markdown-it reads CR as a line break and NUL as U+FFFD; keep the stored line numbers.
    source = text.replace("\r", "\ufffd").replace("\0", "\ufffd")
    tokens = _parser().parse(source, {})
    lines = source.split("\n")
    found: list[HiddenConstruct] = []
    covered: set[int] = set()
    for token in tokens:
        if token.map is not None and token.type in _LEAF_BLOCKS:
            covered.update(range(token.map[0], token.map[1]))
        found += _from_block(token, lines)
    found += _uncovered(lines, covered)
    return sorted(found, key=lambda h: h.line)  # stable: source order within a line


def _from_block(token: Token, lines: list[str]) -> Iterator[HiddenConstruct]:
    if token.map is None:
        return
    first = token.map[0] + 1
    if token.type == "definition":
        source = "\n".join(line.rstrip() for line in lines[token.map[0] : token.map[1]])
        label = str(token.meta.get("label", ""))
        footnote = label.startswith("^")
        kind: HiddenKind = "footnote definition" if footnote else "reference definition"
        yield HiddenConstruct(first, kind, source.strip())
        yield from _references(source, lambda at: first + source.count("\n", 0, at))
    elif token.type == "html_block":
        yield HiddenConstruct(first, _html_kind(token.content), token.content.rstrip("\n"))
    elif token.type == "fence" and token.info.strip():
        yield HiddenConstruct(first, "code block info", token.info.strip())
        yield from _references(lines[token.map[0]], lambda at: first)
    elif token.type == "inline":
        yield from _from_inline(token, first)


def _html_kind(html: str) -> HiddenKind:
    return "HTML comment" if html.lstrip().startswith("<!--") else "raw HTML"


def _from_inline(block: Token, first: int) -> Iterator[HiddenConstruct]:
    content = block.content

    def line_at(position: int) -> int:
        return first + content.count("\n", 0, position)

    accounted: list[tuple[int, int]] = []
    shown: list[str] = []
    for number, row in enumerate(content.split("\n")):
        if _FOOTNOTE.match(row):  # GitHub and others render these apart, or not at all
            yield HiddenConstruct(first + number, "footnote definition", row)
    children = block.children or []
    for index, child in enumerate(children):
        span = child.meta.get(_SPAN) if child.meta else None
        if child.type in ("text", "code_inline"):
            shown.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            shown.append("\n")
        elif child.type == "text_special":
            if child.info == "entity" and span is not None:
                accounted.append(span)
                yield HiddenConstruct(
                    line_at(span[0]), "character reference", child.markup, child.content
                )
            else:  # an escaped character: shown without its backslash
                shown.append(child.content)
        elif child.type == "html_inline" and span is not None:
            accounted.append(span)
            yield HiddenConstruct(line_at(span[0]), _html_kind(child.content), child.content)
        elif child.type == "link_open" and child.markup == "autolink" and span is not None:
            written = content[span[0] + 1 : span[1] - 1]
            shows = "".join(c.content for c in children[index + 1 : index + 2])
            if shows != written:  # percent-decoded for the page: %E2%80%AE is an override
                accounted.append(span)
                yield HiddenConstruct(line_at(span[0]), "link destination", written)
        elif child.type == "link_open" and span is not None:
            label_end = child.meta[_LABEL_END]
            tail = label_end if isinstance(label_end, int) and label_end >= 0 else span[0]
            accounted.append((tail, span[1]))
            yield from _link(child, content, tail, span[1], line_at(tail))
            yield from _references(content[tail : span[1]], line_at, tail)
        elif child.type == "image" and span is not None:
            start = span[0]
            accounted.append(span)
            yield from _image(child, line_at(start))
            yield from _references(content[start : span[1]], line_at, start)
    leftover = _letters(content) - _letters("".join(shown))
    for start, end in accounted:
        leftover -= _letters(content[start:end])
    if leftover:
        yield _dropped(content, "".join(shown), accounted, line_at)


def _link(token: Token, content: str, tail: int, end: int, line: int) -> Iterator[HiddenConstruct]:
    href = _decoded(token.attrs.get("href"))
    if href:
        yield HiddenConstruct(line, "link destination", href)
    title = token.attrs.get("title")
    if title:
        yield HiddenConstruct(line, "link title", str(title))
    after = content[tail:end]
    if after.startswith("]["):  # [text][label]: the label names a definition
        label = after[2:-1]
        if label.strip():
            yield HiddenConstruct(line, "link label", label)


def _image(token: Token, line: int) -> Iterator[HiddenConstruct]:
    description = "".join(_alt_text(token.children or []))
    if description:
        yield HiddenConstruct(line, "image description", description)
    source = _decoded(token.attrs.get("src"))
    if source:
        yield HiddenConstruct(line, "image source", source)
    title = token.attrs.get("title")
    if title:
        yield HiddenConstruct(line, "image title", str(title))


def _alt_text(children: list[Token]) -> Iterator[str]:
    """An image's description as a renderer writes it into ``alt``: its text, flattened."""
    for child in children:
        if child.type == "image":
            yield from _alt_text(child.children or [])
        elif child.type in ("softbreak", "hardbreak"):
            yield "\n"
        else:
            yield child.content


def _references(
    source: str, line_at: Callable[[int], int], base: int = 0
) -> Iterator[HiddenConstruct]:
    """The character references the parser decodes where its entity rule does not run: link
    destinations and titles, definitions, image descriptions, a code block's info string."""
    from markdown_it.common.utils import UNESCAPE_ALL_RE, replaceEntityPattern

    if "&" not in source:
        return
    for match in UNESCAPE_ALL_RE.finditer(source):
        if match.group(2) is None:  # a backslash escape: what follows is taken literally
            continue
        decoded = replaceEntityPattern(match.group(), match.group(2))
        if decoded != match.group():
            yield HiddenConstruct(
                line_at(base + match.start()), "character reference", match.group(), decoded
            )


def _decoded(url: object) -> str:
    """A destination as written: markdown-it percent-encodes what it parses."""
    import mdurl

    return mdurl.decode(str(url or ""))


def _letters(text: str) -> Counter[str]:
    return Counter(ch for ch in text if ch.isalnum())


def _dropped(
    content: str, shown: str, accounted: list[tuple[int, int]], line_at: Callable[[int], int]
) -> HiddenConstruct:
    """The catch-all: the source the page shows nowhere (aligned against what it shows), at
    the line where it starts."""
    from difflib import SequenceMatcher

    blanked = list(content)
    for start, end in accounted:
        blanked[start:end] = "\0" * (end - start)
    matcher = SequenceMatcher(None, "".join(blanked), shown, autojunk=False)
    pieces = [
        (i1, content[i1:i2])
        for op, i1, i2, _, _ in matcher.get_opcodes()
        if op in ("delete", "replace") and _letters("".join(blanked[i1:i2]))
    ]
    first = pieces[0][0] if pieces else 0
    return HiddenConstruct(
        line_at(first), "dropped text", " ".join(piece.strip() for _, piece in pieces)
    )


def _uncovered(lines: list[str], covered: set[int]) -> Iterator[HiddenConstruct]:
    """The other catch-all: a line no block of the page covers that holds more than the
    markers of a block quote or a list item."""
    for index, line in enumerate(lines):
        if index in covered or not line.strip():
            continue
        if _CONTAINER_MARKERS.sub("", line, count=1).strip():
            yield HiddenConstruct(index + 1, "dropped text", line.strip())
