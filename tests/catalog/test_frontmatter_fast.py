"""The frontmatter fast path gives exactly what the YAML parser gives, or steps aside."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kite_skills.catalog._frontmatter import FrontmatterProblem, _load_simple, normalise
from kite_skills.catalog._frontmatter_yaml import load_yaml

ROOT = Path(__file__).resolve().parents[2]


def by_parser(source: str) -> object:
    """What the ruamel path makes of ``source`` (or the problem it reports)."""
    try:
        return load_yaml(source, 2)
    except FrontmatterProblem as exc:
        return ("problem", exc.message)


def frontmatter_of(path: Path) -> str | None:
    lines = normalise(path.read_text(encoding="utf-8")).split("\n")
    if lines[0] != "---":
        return None
    end = next(i for i in range(1, len(lines)) if lines[i].rstrip(" \t") == "---")
    return "\n".join(lines[1:end])


CATALOG = sorted((ROOT / "skills_catalog").rglob("*.md"))


@pytest.mark.parametrize("path", CATALOG, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_catalog_file_parses_the_same_either_way(path: Path) -> None:
    source = frontmatter_of(path)
    if source is None:
        return
    fast = _load_simple(source)
    if fast is not None:
        assert fast == by_parser(source)


def test_the_catalog_mostly_takes_the_fast_path() -> None:
    sources = [s for s in map(frontmatter_of, CATALOG) if s is not None]
    assert sum(_load_simple(s) is not None for s in sources) >= len(sources) // 2


@pytest.mark.parametrize(
    "source",
    [
        "name: orders",
        'description: "Buy or sell: a #hash, a: colon"',
        "description: 'single: quoted'",
        "name: a",
        "title: Orders (today) and trades - v1.2",
        'metadata:\n  version: "1.0"',
        'name: a\nmetadata:\n  version: "1.0"\n  author: pat\nlicense: MIT',
        "a:\n  b: x\nc:\n  d: 'y'",
    ],
)
def test_simple_shapes_take_the_fast_path(source: str) -> None:
    assert _load_simple(source) is not None
    assert _load_simple(source) == by_parser(source)


@pytest.mark.parametrize(
    "source",
    [
        "name: true",
        "name: Null",
        "true: x",
        "name: 2024-01-01",
        "name: 1_000",
        "name: .inf",
        "n: 12",
        'name: "escaped \\" quote"',
        "name: x\nname: y",
        "name: x # comment",
        "name: x\n\ndescription: y",
        "list:\n  - a",
        "name:  two spaces",
        "name: trailing ",
        'name: "tab\there"',
        "",
        "name: {a: 1}",
        "name: [a]",
        "name: &anchor x",
        "metadata:",
        "metadata:\nname: a",
        "metadata:\n   version: x",
        "metadata:\n  a: x\n   b: y",
        "metadata:\n  a: x\n  a: y",
        "metadata:\n  inner:\n    deep: x",
        "metadata:\n\tversion: x",
        "name: a\n  b: x",
        "metadata:\n  version: x\nmetadata:\n  version: y",
        "true:\n  a: x",
        "metadata:\n  null: x",
    ],
)
def test_anything_else_goes_to_the_parser(source: str) -> None:
    assert _load_simple(source) is None


LINE_TEXT = st.text(
    alphabet=st.sampled_from(list("aZ09 _-.:#'\"\\/()+,[]{}&*!|>%@`~é🙂\t")), max_size=12
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["name", "description", "true", "x-y", "a_b", "Null", "key"]),
            st.sampled_from(["", '"', "'"]),
            LINE_TEXT,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_fast_path_agrees_with_the_parser(lines: list[tuple[str, str, str]]) -> None:
    source = "\n".join(f"{key}: {quote}{text}{quote}" for key, quote, text in lines)
    fast = _load_simple(source)
    if fast is not None:
        assert fast == by_parser(source), source


KEY = st.sampled_from(["metadata", "version", "name", "license", "a", "b", "c", "d", "Null"])
VALUE_LINE = st.builds(
    lambda key, quote, text: f"{key}: {quote}{text}{quote}",
    KEY,
    st.sampled_from(["", '"', "'"]),
    st.from_regex(r"[a-zA-Z][a-z0-9 ._-]{0,8}[a-z0-9]", fullmatch=True) | LINE_TEXT,
)
INDENT = st.sampled_from(["  "] * 8 + ["   ", " ", "\t", ""])
CHILD = st.builds(str.__add__, INDENT, VALUE_LINE | KEY.map(lambda key: f"{key}:"))
MAPPING = st.builds(
    lambda key, children: "\n".join([f"{key}:", *children]),
    KEY,
    st.lists(st.builds(str.__add__, st.just("  "), VALUE_LINE), min_size=1, max_size=3)
    | st.lists(CHILD, max_size=3),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(VALUE_LINE | MAPPING, min_size=1, max_size=4).map("\n".join))
def test_fast_path_agrees_with_the_parser_on_nested_mappings(source: str) -> None:
    """``key:`` lines opening a mapping of indented lines, among plain ones, with the
    indents and values that must send the text to the parser mixed in."""
    fast = _load_simple(source)
    if fast is not None:
        assert fast == by_parser(source), source


def test_a_simple_catalog_never_imports_ruamel() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from kite_skills import catalog; catalog.load(); "
        "sys.exit('ruamel.yaml' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0
