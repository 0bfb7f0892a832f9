"""The Markdown this catalog needs, read with a CommonMark parser (markdown-it-py): links
(inline, reference-style and split across lines), headings, and what is code.

Positions: markdown-it gives block tokens a line range, not inline columns. A link's line is
its block's first line plus the line breaks before it; rewriting finds each link the parser
confirmed in its block's source text, in order, outside code spans.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_CODE_SPAN = re.compile(r"(`+)(?:.*?)\1", re.S)
# A link's source: [text](target "title"), [text][label], [text][] or [label].
_LINK_SOURCE = re.compile(
    r"(?P<image>!?)\[(?P<text>(?:[^\[\]\\]|\\.|\[[^\]]*\])*)\]"
    r"(?:\(\s*<?(?P<target>[^)\s>]*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"
    r"|\[(?P<label>[^\]]*)\])?"
)
_ATX_LINE = re.compile(r" {0,3}#")


@cache
def _parsers() -> tuple[MarkdownIt, MarkdownIt]:
    """The whole parser, and one for the block structure only: without the inline stage (most
    of a parse's cost) a heading's inline token still carries its raw text. Imported at first
    use: a start-up whose every file the build already read (``facts``) never needs them."""
    from markdown_it import MarkdownIt

    whole = MarkdownIt("commonmark")
    return whole, MarkdownIt("commonmark").disable(["inline", "text_join"])


@dataclass(frozen=True)
class Link:
    line: int  # 1-based, relative to the text given
    text: str
    target: str


def is_relative(target: str) -> bool:
    """A link into the catalog: no scheme, not a bare anchor, not empty."""
    return bool(target) and not target.startswith("#") and not _SCHEME.match(target)


def _parse(text: str) -> tuple[list[Token], dict[str, Any]]:
    """Blocks (and reference definitions) for the whole text; the inline stage, most of a
    parse's cost, only for blocks that can hold a link ('[' or an autolink's '<')."""
    whole, blocks = _parsers()
    env: dict[str, Any] = {}
    tokens = blocks.parse(text, env)
    for token in tokens:
        if token.type == "inline" and ("[" in token.content or "<" in token.content):
            token.children = []
            whole.inline.parse(token.content, whole, env, token.children)
    return tokens, env


def _inline_links(inline: Token) -> Iterator[tuple[int, str, str]]:
    """(line offset inside the block, text, target) of every link and image in a block."""
    offset = 0
    children = inline.children or []
    for index, child in enumerate(children):
        if child.type in ("softbreak", "hardbreak"):
            offset += 1
        elif child.type == "link_open":
            words = []
            for inner in children[index + 1 :]:
                if inner.type == "link_close":
                    break
                words.append(inner.content if inner.type != "softbreak" else "\n")
            yield offset, "".join(words), _decoded(child.attrs.get("href"))
        elif child.type == "image":
            yield offset, child.content, _decoded(child.attrs.get("src"))


def _decoded(url: object) -> str:
    """A destination as the author wrote it: markdown-it percent-encodes what it parses."""
    import mdurl  # with markdown-it, only where a parse happened

    return mdurl.decode(str(url or ""))


# What makes a block's meaning depend on text beyond its blank lines: fences, indented code,
# tabs, HTML blocks and reference definitions; NULs and carriage returns, which the parser
# rewrites first; and any other white space (a form feed, a no-break space): Python strips it
# where the parser keeps it, so lines are counted differently. A text with none of these
# reads, block for block, the same as each of its blank-line-separated chunks read alone.
# Line starts are found after a '\n' (put before the text too): a literal the regex engine
# scans for quickly, where '^' under re.MULTILINE is tried at every position.
_CONTEXT_LINE = re.compile(r"\n(?: {4}| {0,3}(?:\t|```|~~~|<))")
# Every character str.isspace() accepts but space, tab and newline (a class spelled out:
# "[^\S \t\n]" takes twice as long to search).
_ODD_SPACE = re.compile(
    "[\x0b\x0c\r\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
)


def _depends_on_context(text: str) -> bool:
    return (
        "]:" in text
        or "\0" in text
        or _ODD_SPACE.search(text) is not None
        or _CONTEXT_LINE.search("\n" + text) is not None
    )


def links(text: str) -> list[Link]:
    """Every link in prose: inline, reference-style (at the line that uses it), split across
    lines, and images; plus reference definitions no link uses (at their own line). Code
    spans, fenced and indented code blocks hold no links."""
    if "[" not in text and "<" not in text:  # no link of any kind can be in it
        return []
    if _depends_on_context(text):
        return _links_in(text)
    plain = _plain_links(text)
    if plain is not None:
        return plain
    # Parse only the chunks that can hold a link (block parsing is most of the cost of a
    # catalog of 10,000 files); tests/catalog/test_markdown.py holds this equal to _links_in.
    found: list[Link] = []
    lines = text.split("\n")
    start = 0
    while start < len(lines):
        if not lines[start].strip():
            start += 1
            continue
        end = start
        while end < len(lines) and lines[end].strip():
            end += 1
        chunk = "\n".join(lines[start:end])
        if "[" in chunk or "<" in chunk:
            in_chunk = _plain_links(chunk)
            if in_chunk is None:
                in_chunk = _links_in(chunk)
            found += [Link(link.line + start, link.text, link.target) for link in in_chunk]
        start = end
    return found


# A link whose text is plain words and whose target is a plain relative path: in a chunk that
# holds no other inline syntax, CommonMark reads each match as a link, on the line it is on.
_PLAIN_LINK = re.compile(r"\[([^\[\]\\`*_<>&\n]*)\]\(([A-Za-z0-9._~/#?=+,;@$'*-]*)\)")
# Other syntax a plain chunk must not hold: autolinks and HTML, code spans, escapes, entities,
# images, and four spaces or a tab (after a list marker or '>' they open a code block).
_NOT_PLAIN = re.compile(r"[<`\\&\r\0\t]")


def _plain_links(chunk: str) -> list[Link] | None:
    """The links of a text or chunk (one that depends on no context) whose every bracket
    belongs to a plain link, found without the parser (a catalog of 10,000 files spent most of
    its load there); None for any other. tests/catalog/test_markdown.py holds this equal to a
    parse."""
    if "    " in chunk or "![" in chunk or _NOT_PLAIN.search(chunk):
        return None
    found: list[Link] = []
    for number, line in enumerate(chunk.split("\n"), start=1):
        if "[" not in line and "]" not in line:
            continue
        rest = _PLAIN_LINK.sub("", line)
        if "[" in rest or "]" in rest:
            return None
        found += [Link(number, m[1], m[2]) for m in _PLAIN_LINK.finditer(line)]
    return found


def _links_in(text: str) -> list[Link]:
    tokens, env = _parse(text)
    found: list[Link] = []
    for token in tokens:
        if token.type == "inline" and token.map is not None:
            for offset, words, target in _inline_links(token):
                found.append(Link(token.map[0] + 1 + offset, words, target))
    used = {link.target for link in found}
    for label, definition in env.get("references", {}).items():
        href = _decoded(definition.get("href"))
        where = definition.get("map")
        if href not in used and where is not None:
            found.append(Link(int(where[0]) + 1, label, href))
    return sorted(found, key=lambda link: link.line)


@dataclass(frozen=True)
class LinkSource:
    """Where a prose link (not an image) is written: ``text[start:end]`` is its whole source,
    ``[words](target)`` or a reference-style use, which :func:`rewrite_links` replaces."""

    start: int
    end: int
    words: str  # the link text as written
    target: str


def link_sources(text: str) -> list[LinkSource]:
    """Every prose link that :func:`rewrite_links` may replace, in order: each link the parser
    confirmed in its block, found in the block's source outside code spans. Images are
    confirmed but never replaced, so they are not listed."""
    tokens, env = _parse(text)
    references = env.get("references", {})
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    found: list[LinkSource] = []
    for token in tokens:
        if token.type == "inline" and token.map is not None:
            first, last = token.map
            block = "\n".join(lines[first:last])
            wanted = [(words, target) for _, words, target in _inline_links(token)]
            found += [
                LinkSource(starts[first] + start, starts[first] + end, words, target)
                for start, end, words, target in _block_sources(block, wanted, references)
            ]
    return found


def rewrite_links(
    text: str,
    rewrite: Callable[[str, str], str | None],
    sources: tuple[LinkSource, ...] | None = None,
) -> str:
    """Replace each prose link for which ``rewrite(text, target)`` returns a string.
    ``sources``: the text's :func:`link_sources`, when known (the build stores them for the
    shipped catalog); otherwise the text is parsed here."""
    out: list[str] = []
    position = 0
    for source in link_sources(text) if sources is None else sources:
        replacement = rewrite(source.words, source.target)
        if replacement is not None:
            out.append(text[position : source.start])
            out.append(replacement)
            position = source.end
    out.append(text[position:])
    return "".join(out)


def _block_sources(
    block: str, wanted: list[tuple[str, str]], references: dict[str, Any]
) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, words, target) in ``block`` of each of the parser's links (``wanted``, in
    order) that is not an image: matched in the source outside code spans."""
    code = [m.span() for m in _CODE_SPAN.finditer(block)]
    for match in _LINK_SOURCE.finditer(block):
        if not wanted:
            break
        if any(start <= match.start() < end for start, end in code):
            continue
        target = _target_of(match, references)
        if target is None or not _same(match.group("text"), target, wanted[0]):
            continue
        wanted.pop(0)
        if not match.group("image"):
            yield match.start(), match.end(), match.group("text"), target


def _target_of(match: re.Match[str], references: dict[str, Any]) -> str | None:
    if match.group("target") is not None:
        return match.group("target")
    label = match.group("label") or match.group("text")
    definition = references.get(_normalise_label(label))
    return None if definition is None else _decoded(definition.get("href"))


def _normalise_label(label: str) -> str:
    return " ".join(label.split()).upper()  # markdown-it keys labels upper-cased


def _same(source_text: str, target: str, parsed: tuple[str, str]) -> bool:
    words, href = parsed
    plain = re.sub(r"[`*_\\]", "", source_text)
    return href == _decoded(target) and " ".join(plain.split()) == " ".join(
        re.sub(r"[`*_\\]", "", words).split()
    )


def first_heading(text: str) -> str | None:
    """The text of the first heading in prose, if any.

    Parsed first only through the first line that may be an ATX heading (and the line after
    it): blocks before that line end where they end in the whole text, so a heading found
    there is the first one. Only when none is (the line sat in a code block, say) is the whole
    text parsed. Recipes put their heading at the top, so start-up parses a few lines each."""
    known, heading = _leading_atx_heading(text)
    if known:
        return heading
    lines = text.split("\n")  # the parser's lines: splitlines() would also cut at form feeds
    candidate = next((i for i, line in enumerate(lines) if _ATX_LINE.match(line)), None)
    sources = [text] if candidate is None else ["\n".join(lines[: candidate + 2]), text]
    for source in sources:
        tokens = _parsers()[1].parse(source)
        for index, token in enumerate(tokens):
            if token.type == "heading_open":
                return tokens[index + 1].content.strip() or None
    return None


def _leading_atx_heading(text: str) -> tuple[bool, str | None]:
    """(True, its text) when the first non-blank line is an ATX heading, which is then the
    first heading, its text cut as markdown-it cuts it (closing '#'s and spaces off);
    (False, None) when only a parse can tell. tests/catalog/test_markdown.py holds this equal
    to a parse."""
    if "\r" in text or "\0" in text:  # markdown-it rewrites these before reading
        return False, None
    line = next((line for line in text.split("\n") if line.strip(" \t")), "")
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3 or not stripped.startswith("#"):
        return False, None
    level = len(stripped) - len(stripped.lstrip("#"))
    rest = stripped[level:]
    if level > 6 or (rest and rest[0] not in " \t"):
        return False, None
    content = rest.rstrip(" \t")
    before_closing = content.rstrip("#")
    if len(before_closing) < len(content) and before_closing and before_closing[-1] in " \t":
        content = before_closing
    return True, content.strip() or None
