"""Bad input gets an actionable error and changes nothing (row counts checked on the file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kite_skills.errors import InvalidQuery, InvalidSkill
from kite_skills.store import Store, agent, human

from .helpers import BODY, counts, live

NAME_RULE = "use 1–64 lowercase letters, digits and single hyphens (e.g. 'compare-funds')"
TEN_MB = "x" * (10 * 1024 * 1024)


@pytest.mark.parametrize(
    "name",
    [
        "Foo Bar",
        "",
        "-lead",
        "trail-",
        "double--hyphen",
        "UPPER",
        "under_score",
        "dot.name",
        "a/b",
        "ümlaut",
        "x" * 65,
        "name\n",
        " name",
        "'; DROP TABLE skills; --",
    ],
)
def test_invalid_names(store: Store, db_path: Path, name: str) -> None:
    before = counts(db_path)
    with pytest.raises(InvalidSkill) as info:
        agent.save(store, name, "desc", BODY, who="bot")
    assert NAME_RULE in str(info.value)
    assert counts(db_path) == before


def test_name_message_is_exact() -> None:
    from kite_skills.store._validate import check_name

    with pytest.raises(InvalidSkill) as info:
        check_name("Foo Bar")
    assert str(info.value) == f"skill name 'Foo Bar' is not allowed: {NAME_RULE}"


def test_valid_edge_names(store: Store) -> None:
    for name in ("a", "0", "x" * 64, "a-1-b2"):
        agent.save(store, name, "desc", BODY, who="bot")
    assert len(store.list_all()) == 4


EMPTY = (
    "the description of 'my-skill' is empty: write one line (up to 1024 characters) saying "
    "when to use the skill"
)


def _line_break(code: str, at: int) -> str:
    return (
        f"the description of 'my-skill' has a line break, {code}, at character {at}: write it "
        "as one line (up to 1024 characters) and put details in the body"
    )


@pytest.mark.parametrize(
    ("description", "message"),
    [
        ("", EMPTY),
        ("   ", EMPTY),
        ("line one\nline two", _line_break("U+000A LF", 9)),
        ("a\rb", _line_break("U+000D CR", 2)),
        ("a\u2028b", _line_break("U+2028 LINE SEPARATOR", 2)),
        (
            "d" * 1025,
            "the description of 'my-skill' is 1025 characters; the limit is 1024: "
            "shorten it and put details in the body",
        ),
        (
            "nul\x00byte",
            "the description of 'my-skill' contains a control character, U+0000 NUL, at "
            "character 4: remove it — a description is one line of visible text (tabs allowed; "
            "no control, bidirectional-override, zero-width, tag or other invisible characters), "
            "so a person reviewing it sees exactly what is stored",
        ),
        (
            "\ud800",
            "the description of 'my-skill' is not valid Unicode text (it contains a lone "
            "surrogate); send it as UTF-8",
        ),
    ],
)
def test_invalid_descriptions(store: Store, db_path: Path, description: str, message: str) -> None:
    before = counts(db_path)
    with pytest.raises(InvalidSkill) as info:
        agent.save(store, "my-skill", description, BODY, who="bot")
    assert str(info.value) == message
    assert counts(db_path) == before


def test_description_is_stripped_and_may_be_1024_chars(store: Store) -> None:
    agent.save(store, "my-skill", "  " + "d" * 1024 + "  ", BODY, who="bot")
    assert store.get("my-skill").description == "d" * 1024


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("", "the body of 'my-skill' is empty: write the procedure in Markdown"),
        (" \n\t\n", "the body of 'my-skill' is empty: write the procedure in Markdown"),
        (
            "é" * 40_000,
            "the body of 'my-skill' is 80000 bytes of UTF-8; the limit is 65536 "
            "(64 KiB): shorten the procedure or split it into several skills",
        ),
        (
            "b" * 65_537,
            "the body of 'my-skill' is 65537 characters, over the limit of 65536 "
            "bytes (64 KiB) of UTF-8",
        ),
    ],
)
def test_invalid_bodies(store: Store, db_path: Path, body: str, message: str) -> None:
    before = counts(db_path)
    with pytest.raises(InvalidSkill) as info:
        agent.save(store, "my-skill", "desc", body, who="bot")
    assert str(info.value).startswith(message)
    assert counts(db_path) == before


def test_body_of_exactly_64_kib_is_accepted(store: Store) -> None:
    agent.save(store, "my-skill", "desc", "b" * 65_536, who="bot")
    assert len(store.get("my-skill").body) == 65_536


@pytest.mark.parametrize("field", ["name", "description", "body"])
def test_ten_megabyte_arguments_are_refused_quickly(
    store: Store, db_path: Path, field: str
) -> None:
    live(store, "my-skill")
    before = counts(db_path)
    args = {"name": "my-skill", "description": "desc", "body": BODY, field: TEN_MB}
    with pytest.raises(InvalidSkill) as info:
        agent.save(store, args["name"], args["description"], args["body"], who="bot")
    assert len(str(info.value)) < 400  # the message never echoes the argument
    assert counts(db_path) == before
    with pytest.raises(InvalidSkill):
        human.edit(
            store,
            "my-skill",
            rev=store.get("my-skill").revision,
            body=TEN_MB,
            via="cli",
            who="alice",
        )
    assert store.get("my-skill").body == BODY


def test_ten_megabyte_reads_are_refused(store: Store) -> None:
    with pytest.raises(InvalidSkill, match=r"\(10485760 characters\) is not allowed"):
        store.read_live(TEN_MB)
    with pytest.raises(InvalidQuery) as info:
        store.search(TEN_MB)
    assert str(info.value) == (
        "search text is 10485760 characters; the limit is 1000: search with a few words"
    )


@pytest.mark.parametrize("value", [None, 3, b"bytes", ["list"]])
def test_non_text_arguments(store: Store, db_path: Path, value: object) -> None:
    for args in (
        (value, "desc", BODY),
        ("my-skill", value, BODY),
        ("my-skill", "desc", value),
    ):
        with pytest.raises(InvalidSkill, match="must be text"):
            agent.save(store, *args, who="bot")  # type: ignore[arg-type]
    assert counts(db_path) == (0, 0)


@pytest.mark.parametrize("limit", [0, -1, 101, True, 2.5, "10", None])
def test_limits_are_validated(store: Store, limit: object) -> None:
    with pytest.raises(InvalidQuery) as info:
        store.list_live(limit)  # type: ignore[arg-type]
    assert str(info.value).startswith("limit must be a whole number from 1 to 100")
    with pytest.raises(InvalidQuery):
        store.search("fund", limit)  # type: ignore[arg-type]


def test_limit_bounds_are_inclusive(store: Store) -> None:
    assert store.list_live(1) == [] and store.list_live(100) == []
    assert store.search("x", 1) == [] and store.search("x", 100) == []
