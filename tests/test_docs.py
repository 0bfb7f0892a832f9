"""The README and the pages in docs/ as a reader follows them: every relative link leads to a
file that exists (and, into a Markdown page, to a heading or anchor that exists), and every
command and subcommand of ``kite-skills`` is shown somewhere, so a new command cannot ship
undocumented. Pure: reads the sources, builds nothing."""

from __future__ import annotations

import argparse
import re
import unicodedata
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from kite_skills import __version__, cli
from kite_skills.guard import cli as guard_cli
from kite_skills.sandbox import cli as sandbox_cli

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
HTML_ID = re.compile(r"""<a\s[^>]*\b(?:id|name)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def _walk(tokens: list[Token]) -> Iterator[Token]:
    for token in tokens:
        yield token
        if token.children:
            yield from _walk(token.children)


def _slug(text: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, each space a hyphen."""
    kept = "".join(ch for ch in text.lower() if ch in "-_ " or unicodedata.category(ch)[0] in "LNM")
    return kept.replace(" ", "-")


def _heading_text(inline: Token) -> str:
    return "".join(
        child.content for child in inline.children or [] if child.type in ("text", "code_inline")
    )


@cache
def anchors(page: Path) -> frozenset[str]:
    """The anchors GitHub gives a page: one per heading (repeats get -1, -2 …), plus HTML ids."""
    tokens = _parser().parse(page.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    found: set[str] = set()
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            slug = _slug(_heading_text(tokens[i + 1]))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
        if token.type in ("html_block", "html_inline"):
            found.update(HTML_ID.findall(token.content))
        for child in token.children or []:
            if child.type == "html_inline":
                found.update(HTML_ID.findall(child.content))
    return frozenset(found)


def links(page: Path) -> Iterator[tuple[int, str]]:
    """(line, target) of every link and image; code spans and code blocks hold none."""
    for block in _parser().parse(page.read_text(encoding="utf-8")):
        line = block.map[0] + 1 if block.map else 0
        for token in _walk([block]):
            if token.type == "link_open":
                yield line, str(token.attrGet("href"))
            elif token.type == "image":
                yield line, str(token.attrGet("src"))


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    problems = []
    for line, target in links(page):
        parts = urlsplit(target)
        if parts.scheme or parts.netloc:
            continue  # https:, mailto: … are not ours to check offline
        where = f"{page.relative_to(root)}:{line}: link '{target}'"
        path = unquote(parts.path)
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            problems.append(f"{where} leads to a missing file — create it or fix the link")
            continue
        fragment = unquote(parts.fragment)
        if fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            problems.append(
                f"{where} names no heading of {dest.relative_to(root)} — "
                "link an existing heading or keep the old heading"
            )
    return problems


def test_the_pages_are_there() -> None:
    names = {page.name for page in PAGES}
    assert {"README.md", "troubleshooting.md", "clients.md", "your-skills.md"} <= names
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200, "README.md grew past 200 lines: move detail to docs/"


def test_the_readme_keeps_no_commit_ids_or_results() -> None:
    """Results go stale the day after they are typed: they live in docs/benchmarks.md."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commit_like = re.findall(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b", readme)
    assert commit_like == [], f"README.md names commits {commit_like}: say it in docs/"
    assert not re.search(r"\|\s*\**(PASS|MISS|INFO)\**\s*\|", readme), "README.md holds results"


def test_the_index_lists_every_page() -> None:
    index = ROOT / "docs" / "README.md"
    listed = {(index.parent / urlsplit(target).path).resolve() for _, target in links(index)}
    unlisted = [
        p.name for p in PAGES if p.parent == index.parent and p != index and p not in listed
    ]
    assert unlisted == [], f"docs/README.md does not list {unlisted} — add a line for each"
    readme_targets = {urlsplit(target).path for _, target in links(ROOT / "README.md")}
    assert "docs/README.md" in readme_targets, "README.md no longer links the docs index"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_link_check_catches_a_missing_page_and_a_missing_heading(tmp_path: Path) -> None:
    page = tmp_path / "README.md"
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "there.md").write_text("# Where `x` lives: here\n", encoding="utf-8")
    page.write_text(
        "[ok](docs/there.md#where-x-lives-here) [gone](docs/gone.md)\n"
        "[bad anchor](docs/there.md#nowhere) `[in code](docs/nope.md)`\n\n"
        "```\n[fenced](docs/nope.md)\n```\n",
        encoding="utf-8",
    )
    problems = broken_links(page, tmp_path)
    assert len(problems) == 2, problems
    assert "docs/gone.md" in problems[0] and "missing file" in problems[0]
    assert "#nowhere" in problems[1] and "names no heading" in problems[1]


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """A parser's visible subcommands by their first name (aliases and hidden ones left out)."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            shown = {choice.dest for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if name in shown and sub not in found.values():
                    found[name] = sub
    return found


def commands() -> list[tuple[str, ...]]:
    """Every command path of kite-skills, walked from the parser the program itself builds.

    ``kite-skills sandbox`` is handed over to the sandbox's own parser (``cli.main``), so its
    subcommands are walked from that one."""

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        for name, sub in _subcommands(parser).items():
            here = (*path, name)
            yield here
            own = {("sandbox",): sandbox_cli.build_parser, ("guard",): guard_cli.build_parser}
            yield from walk(own[here]() if here in own else sub, here)

    return sorted(walk(cli.build_parser(), ()))


def _shown(path: tuple[str, ...], text: str) -> bool:
    words = r"\s+".join(re.escape(word) for word in path)
    return (
        re.search(rf"(?:\bkite-skills|\.pyz)\s+(?:--db\s+\S+\s+)?{words}(?![\w-])", text)
        is not None
    )


def test_every_command_is_documented() -> None:
    text = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    found = commands()
    assert ("skills", "publish") in found and ("sandbox", "journal") in found, found
    missing = [" ".join(path) for path in found if not _shown(path, text)]
    assert missing == [], (
        f"kite-skills commands no page shows: {missing} — show each as 'kite-skills COMMAND …' "
        "in README.md or a page in docs/"
    )


def test_the_command_check_needs_the_whole_invocation() -> None:
    assert _shown(("skills", "list"), "run `kite-skills skills list --pending`")
    assert _shown(("help",), "python3 dist/kite-skills.pyz help /orders")
    assert not _shown(("skills", "list"), "run `kite-skills skills listing`")
    assert not _shown(("catalog", "validate"), "the catalog is validated")


def test_every_command_says_what_it_does_in_its_own_help() -> None:
    """``kite-skills skills review --help`` opens with what the command does, as the list in
    ``kite-skills skills --help`` does, not with its usage line alone."""

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> Iterator[str]:
        for name, sub in _subcommands(parser).items():
            here = (*path, name)
            own = (
                sandbox_cli.build_parser()
                if here == ("sandbox",)
                else guard_cli.build_parser()
                if here == ("guard",)
                else sub
            )
            if not (own.description or "").strip():
                yield " ".join(here)
            yield from walk(own, here)

    assert list(walk(cli.build_parser(), ())) == []


def test_the_version_is_written_once_and_the_docs_name_its_wheel() -> None:
    """kite_skills.__version__ is the one place: the wheel's metadata reads it, and a page
    that names the wheel file names this version's."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert not re.search(r"(?m)^version\s*=\s*\"", pyproject), "pyproject.toml writes a version"
    assert 'attr = "kite_skills.__version__"' in pyproject
    stale = [
        f"{page.relative_to(ROOT)}: {name}"
        for page in PAGES
        for name in re.findall(r"kite_skills-([0-9][^-]*)-py3", page.read_text(encoding="utf-8"))
        if name != __version__
    ]
    assert stale == [], f"pages name another version's wheel: {stale}"
