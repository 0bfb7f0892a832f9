"""Frontmatter: whole-line delimiters, LF and CRLF, YAML 1.2 core scalars, key order."""

from __future__ import annotations

import pytest

from kite_skills.catalog._frontmatter import FrontmatterProblem, normalise, split


def parse(text: str) -> dict | None:
    return split(normalise(text)).frontmatter


def test_crlf_and_lf_give_the_same_frontmatter() -> None:
    lf = "---\nname: orders\ndescription: Orders.\n---\n# Orders\n"
    assert (
        parse(lf)
        == parse(lf.replace("\n", "\r\n"))
        == {
            "name": "orders",
            "description": "Orders.",
        }
    )


def test_body_starts_after_the_closing_line() -> None:
    parsed = split(normalise("---\ndescription: x\n---\n# Title\nbody\n"))
    assert parsed.body == "# Title\nbody\n"
    assert parsed.body_line == 4


@pytest.mark.parametrize(
    "text",
    [
        "--- \nname: x\n---\n",  # opening line with a trailing blank is not the delimiter
        "---name: x\n---\n",
        "# Title\n---\nname: x\n---\n",
    ],
)
def test_delimiter_must_be_a_whole_first_line(text: str) -> None:
    assert parse(text) is None


def test_closing_delimiter_must_be_a_whole_line() -> None:
    with pytest.raises(FrontmatterProblem) as info:
        parse("---\nname: x\n--- not a delimiter\n")
    assert info.value.line == 1
    assert "never closed" in info.value.message
    assert parse("---\nname: x\n---  \n# T\n") == {"name": "x"}


def test_yaml_12_core_scalars() -> None:
    data = parse(
        "---\na: yes\nb: on\nc: 2024-01-01\nd: 012\ne: 1_000\nf: 0x1F\ng: 0o17\nh: 1.5\n"
        "i: true\nj: ~\nk: '012'\nl: \"2024-01-01\"\n---\n"
    )
    assert data == {
        "a": "yes",
        "b": "on",
        "c": "2024-01-01",
        "d": 12,
        "e": "1_000",
        "f": 31,
        "g": 15,
        "h": 1.5,
        "i": True,
        "j": None,
        "k": "012",
        "l": "2024-01-01",
    }


def test_key_order_is_kept_at_every_level() -> None:
    data = parse("---\nzeta: 1\nalpha: 2\nmetadata:\n  z: a\n  a: b\n---\n")
    assert data is not None
    assert list(data) == ["zeta", "alpha", "metadata"]
    assert list(data["metadata"]) == ["z", "a"]


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("---\nname: x\nv: .inf\n---\n", 3, "quote it"),
        ("---\nname: x\nname: y\n---\n", 3, "appears twice"),
        ("---\nname: [x\n---\n", 2, "not valid YAML"),
        ("---\n- a\n- b\n---\n", 2, "mapping"),
        ("---\na: &x 1\nb: *x\n---\n", 2, "aliases"),
        ("---\na: !!binary aGk=\n---\n", 2, "not supported"),
    ],
)
def test_bad_frontmatter_reports_its_line(text: str, line: int, fragment: str) -> None:
    with pytest.raises(FrontmatterProblem) as info:
        parse(text)
    assert info.value.line == line
    assert fragment in info.value.message
