"""The validator reads Markdown with a CommonMark parser: reference-style links, links split
across lines and indented code blocks are handled as CommonMark defines them, and every
problem keeps its ``path:line``."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kite_skills import catalog
from kite_skills.catalog import _markdown

from .conftest import FILES, STATED, write_catalog

# Line numbers below count from the first line of the file (frontmatter included).
RECIPE = (
    b"---\ndescription: Links of every kind.\n---\n"  # lines 1-3
    b"# Links\n\n"  # 4-5
    b"Use [the guide][guide] first.\n\n"  # 6-7
    b"Then read the\n[long\nname](gone-split.md) after.\n\n"  # 8-11; the link starts on 9
    b"    [not a link](gone-indented.md)\n\n"  # 12-13, an indented code block
    b"1. A step\n\n       [indented code in a list](gone-list-code.md)\n\n"  # 14-17
    b"[guide]: gone-ref.md\n"  # 18
    b"[spare]: gone-unused.md\n"  # 19
    b"[fine]: prepare.md\n"  # 20
)


def problems_for(tmp_path: Path, recipe: bytes) -> list[str]:
    root = write_catalog(tmp_path / "cat", {**FILES, "orders/links.md": recipe})
    return [str(p).removeprefix(f"{root}/") for p in catalog.check(root)]


def test_reference_style_broken_link_is_reported_where_it_is_used(tmp_path: Path) -> None:
    found = problems_for(tmp_path, RECIPE)
    assert "orders/links.md:6: link 'gone-ref.md' is broken — no such catalog file" in found


def test_unused_broken_definition_is_reported_at_its_line(tmp_path: Path) -> None:
    found = problems_for(tmp_path, RECIPE)
    assert "orders/links.md:19: link 'gone-unused.md' is broken — no such catalog file" in found


def test_link_split_across_lines_is_found_at_its_first_line(tmp_path: Path) -> None:
    found = problems_for(tmp_path, RECIPE)
    assert "orders/links.md:9: link 'gone-split.md' is broken — no such catalog file" in found


def test_indented_code_block_is_not_a_link(tmp_path: Path) -> None:
    found = problems_for(tmp_path, RECIPE)
    assert not [p for p in found if "gone-indented" in p or "gone-list-code" in p], found
    # ... and those are the only problems: the three broken links above.
    assert len([p for p in found if p.startswith("orders/links.md:")]) == 3


def test_links_are_what_commonmark_says() -> None:
    text = (
        "A [ref][r] and [inline](a.md), `[code](c.md)`,\n"
        "[split\nacross](b.md) and ![img](pic.png).\n\n"
        "```\n[fenced](e.md)\n```\n\n    [indented](d.md)\n\n[r]: r.md\n"
    )
    assert [(link.line, link.target) for link in _markdown.links(text)] == [
        (1, "r.md"),
        (1, "a.md"),
        (2, "b.md"),
        (3, "pic.png"),
    ]


def test_rewrite_keeps_code_and_rewrites_every_kind_of_link() -> None:
    text = (
        "# Title\n\nSee [the guide][g], [inline](a.md) and `[code](a.md)`,\n"
        "then [two\nlines](b.md).\n\n    [indented](a.md)\n\n[g]: c.md\n"
    )
    out = _markdown.rewrite_links(text, lambda words, target: f"{words} -> {target}")
    assert out == (
        "# Title\n\nSee the guide -> c.md, inline -> a.md and `[code](a.md)`,\n"
        "then two\nlines -> b.md.\n\n    [indented](a.md)\n\n[g]: c.md\n"
    )


def test_first_heading_skips_code() -> None:
    assert _markdown.first_heading("```\n# not a heading\n```\n\n## Real one ##\n") == "Real one"
    assert _markdown.first_heading("    # indented code\n\nText.\n") is None


def test_recipe_prompt_names_must_not_collide_or_shadow_user_skills(tmp_path: Path) -> None:
    files = {
        **FILES,
        "orders/prepare-x.md": b"# One\n",
        "orders-prepare/SKILL.md": b"---\nname: orders-prepare\ndescription: Two.\n"
        + STATED
        + b"---\n# T\n",
        "orders-prepare/x.md": b"# Two\n",
        "my/SKILL.md": b"---\nname: my\ndescription: Mine.\n" + STATED + b"---\n# Mine\n",
        "my/notes.md": b"# Notes\n",
    }
    root = write_catalog(tmp_path / "cat", files)
    found = [str(p).removeprefix(f"{root}/") for p in catalog.check(root)]
    assert found == [
        "my/notes.md: prompt name 'my-notes' starts with 'my-', which names the person's "
        "own skills — rename the topic or the file",
        "orders-prepare/x.md: prompt name 'orders-prepare-x' is also the name of "
        "orders/prepare-x.md — rename one",
        "orders/prepare-x.md: prompt name 'orders-prepare-x' is also the name of "
        "orders-prepare/x.md — rename one",
    ]


LINE_POOL = [
    "",
    "# Heading [a](a.md)",
    "Text with [b](b.md) and `[c](c.md)` in code.",
    "- [d](d.md)",
    "1. step [e](e.md)",
    "   continued [f](f.md)",
    "> quoted [g](g.md)",
    "Setext [h](h.md)",
    "---",
    "===",
    "A link split [across",
    "lines](split.md) here.",
    "![image](img.md)",
    "<https://example.com/auto>",
    "plain words",
    "* [i](i.md) *emphasis*",
]


@given(st.lists(st.sampled_from(LINE_POOL), max_size=14))
@settings(max_examples=300, deadline=None)
def test_chunked_link_finding_equals_a_whole_parse(lines: list[str]) -> None:
    """links() parses only the blank-line chunks that hold a '[' when nothing in the text
    depends on context across blank lines; it must find what a whole parse finds."""
    text = "\n".join(lines) + "\n"
    assert _markdown.links(text) == _markdown._links_in(text)


PIECES = [
    "[a](b.md)",
    "[two words](dir/c.md#part)",
    "[](e.md)",
    "[t](f.md)(g)",
    "![i](j.md)",
    "[t](a b)",
    "[t](<a.md>)",
    "[t]( a.md )",
    '[t](a.md "title")',
    "[t](x:y)",
    "[t](%41.md)",
    "[t](é.md)",
    "[*em*](k.md)",
    "[a_b](l.md)",
    "[t][ref]",
    "[ref]",
    "[t]",
    "[",
    "]",
    "(",
    ")",
    "`",
    "``",
    "*",
    "_",
    "\\",
    "\\[",
    "<",
    "<https://example.com>",
    "&amp;",
    "!",
    "#",
    "# ",
    "## ",
    "####### ",
    " #",
    "- ",
    "1. ",
    "> ",
    "   ",
    "    ",
    "\t",
    " ",
    "word",
    "Recipe 7",
    "===",
    "---",
    ":",
    "\r",
    "\x0c",
    "\xa0",
    "+ ",
    "1) ",
    "* ",
    ">",
    "  ",
    "- [ ] ",
]
TEXT_LINES = st.lists(st.sampled_from(PIECES), max_size=6).map("".join)


@given(st.lists(st.one_of(st.just(""), TEXT_LINES), max_size=12))
@settings(max_examples=1500, deadline=None)
def test_links_without_the_parser_equal_a_whole_parse(lines: list[str]) -> None:
    """The plain-link path (no parser for chunks of plain links) must find exactly what a
    whole CommonMark parse finds, whatever the brackets, escapes and code around them."""
    text = "\n".join(lines) + "\n"
    assert _markdown.links(text) == _markdown._links_in(text)


def _first_heading_by_a_whole_parse(text: str) -> str | None:
    tokens = _markdown._parsers()[1].parse(text)
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            return tokens[index + 1].content.strip() or None
    return None


@given(st.lists(st.one_of(st.just(""), TEXT_LINES), max_size=8))
@settings(max_examples=1500, deadline=None)
def test_first_heading_equals_a_whole_parse(lines: list[str]) -> None:
    """first_heading reads a leading ATX heading without the parser, and parses a prefix
    otherwise: both must give what a whole parse gives."""
    text = "\n".join(lines) + "\n"
    assert _markdown.first_heading(text) == _first_heading_by_a_whole_parse(text)


def test_the_odd_white_space_class_is_what_python_strips_beyond_space_tab_newline() -> None:
    odd = {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()} - {" ", "\t", "\n"}
    matched = {chr(c) for c in range(sys.maxunicode + 1) if _markdown._ODD_SPACE.match(chr(c))}
    assert matched == odd
