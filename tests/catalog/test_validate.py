"""Validation returns every problem at once, as path:line: message."""

from __future__ import annotations

from pathlib import Path

import pytest

from kite_skills import catalog
from kite_skills.errors import CatalogError

from .conftest import FILES, STATED, write_catalog

BROKEN: dict[str, bytes] = {
    # no index.md
    "orders/SKILL.md": b"---\nname: Orders\ndescription: Orders.\ncolour: red\n"
    + STATED
    + b"---\n# Orders\n\n[gone](gone.md)\n[out](../../etc/passwd)\n[abs](/etc/passwd)\n",
    "orders/prepare.md": b"---\ndescription: 2024-01-01\n---\n# Prepare\n",
    "orders/prepare/notes.md": b"# Clashes with prepare.md\n",
    "orders/latin1.md": "# Caf\u00e9\n".encode("latin-1"),
    "orders/diagram.png": b"\x89PNG",
    "orders/empty.md": b"no heading here\n",
    "wrong-name/SKILL.md": b"---\nname: other\ndescription: x\n" + STATED + b"---\n# X\n",
    "nodesc/SKILL.md": b"---\nname: nodesc\n" + STATED + b"---\n# X\n",
    "nofront/SKILL.md": b"# No frontmatter\n",
    "nofile/readme.md": b"# A topic without SKILL.md\n",
    "loose.md": b"# Loose\n",
    "bad-yaml/SKILL.md": b"---\nname: bad-yaml\ndescription: [unclosed\n---\n",
}


def codes(root: Path, problems: list[catalog.Problem]) -> list[tuple[str, str]]:
    return [(p.path.removeprefix(f"{root}/"), p.code) for p in problems]


def test_shipped_fixture_is_valid(catalog_dir: Path) -> None:
    assert catalog.check(catalog_dir) == []


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    root = write_catalog(tmp_path / "broken", BROKEN)
    problems = catalog.check(root)
    assert sorted(set(codes(root, problems))) == sorted(
        {
            ("index.md", "no-index"),
            ("orders/SKILL.md", "name"),  # not lowercase, and not the directory name
            ("orders/SKILL.md", "unknown-field"),
            ("orders/SKILL.md", "link"),
            ("orders/prepare.md", "duplicate-key"),
            ("orders/prepare", "duplicate-key"),
            ("orders/latin1.md", "not-utf8"),
            ("orders/diagram.png", "not-markdown"),
            ("orders/empty.md", "no-summary"),
            ("wrong-name/SKILL.md", "name"),
            ("nodesc/SKILL.md", "description"),
            ("nofront/SKILL.md", "no-frontmatter"),
            ("nofile/SKILL.md", "no-skill-file"),
            ("loose.md", "loose-file"),
            ("bad-yaml/SKILL.md", "frontmatter"),
        }
    )
    assert problems == sorted(problems)
    messages = [str(p) for p in problems]
    assert f"{root}/orders/SKILL.md:12: link 'gone.md' is broken — no such catalog file" in messages
    assert f"{root}/orders/SKILL.md:13: link '../../etc/passwd' leaves the catalog" in messages
    assert (
        f"{root}/orders/SKILL.md:14: link '/etc/passwd' is an absolute path — use a relative link"
        in messages
    )
    assert f"{root}/bad-yaml/SKILL.md:3: " in "\n".join(messages)


def test_a_date_looking_description_stays_text(tmp_path: Path) -> None:
    # YAML 1.2 core reads 2024-01-01 as text, so it is a valid description.
    root = write_catalog(tmp_path / "c", BROKEN)
    assert not [
        p for p in catalog.check(root) if p.path.endswith("prepare.md") and p.code == "description"
    ]


def test_a_numeric_description_is_refused_with_advice(tmp_path: Path) -> None:
    files = dict(FILES)
    files["orders/prepare.md"] = b"---\ndescription: 12\n---\n# Prepare\n"
    problems = catalog.check(write_catalog(tmp_path / "c", files))
    assert len(problems) == 1
    assert problems[0].line == 2
    assert "got int" in problems[0].message and "quoted" in problems[0].message


def test_limits_per_skill(tmp_path: Path) -> None:
    files = dict(FILES)
    for n in range(512):
        files[f"holdings/r{n}.md"] = b"# R\n"
    problems = catalog.check(write_catalog(tmp_path / "c", files))
    assert [(p.code, p.path.endswith("holdings/SKILL.md")) for p in problems] == [
        ("too-many-files", True)
    ]
    assert "513 files; the limit is 512" in problems[0].message


def test_size_limit_per_skill(tmp_path: Path) -> None:
    files = dict(FILES)
    files["holdings/big.md"] = b"# Big\n" + b"x" * (16 * 1024 * 1024)
    problems = catalog.check(write_catalog(tmp_path / "c", files))
    assert [p.code for p in problems] == ["too-large"]


def test_load_raises_one_error_with_the_whole_list(tmp_path: Path) -> None:
    root = write_catalog(tmp_path / "broken", BROKEN)
    with pytest.raises(CatalogError) as info:
        catalog.load(root)
    assert len(info.value.problems) == len(catalog.check(root))
    assert str(info.value).count("\n") == len(info.value.problems)


def test_missing_directory(tmp_path: Path) -> None:
    problems = catalog.check(tmp_path / "nope")
    assert [p.code for p in problems] == ["no-catalog"]


@pytest.mark.parametrize(("length", "refused"), [(64, False), (65, True)])
def test_a_skill_name_may_have_64_characters_not_65(
    tmp_path: Path, length: int, refused: bool
) -> None:
    name = "a" * (length - 33) + "-" + "b" * 32
    assert len(name) == length
    files = dict(FILES)
    files[f"{name}/SKILL.md"] = (
        f"---\nname: {name}\ndescription: Long.\n".encode() + STATED + b"---\n# Long\n"
    )
    root = write_catalog(tmp_path / "c", files)
    problems = [str(p) for p in catalog.check(root)]
    expected = [f"{root}/{name}/SKILL.md:2: 'name' exceeds 64 characters ({length})"]
    assert problems == (expected if refused else [])


@pytest.mark.parametrize(
    ("broken", "own_code"),
    [
        ("# Caf\u00e9\n".encode("latin-1"), "not-utf8"),
        (b"---\ndescription: [unclosed\n---\n# Prepare\n", "frontmatter"),
    ],
    ids=["not-utf8", "bad-frontmatter"],
)
def test_a_link_to_a_page_that_failed_to_parse_is_reported_where_it_is(
    tmp_path: Path, broken: bytes, own_code: str
) -> None:
    """orders/SKILL.md and orders/examples/market.md link to prepare.md; when prepare.md
    cannot be read, each linking page says so too, not only prepare.md itself."""
    files = dict(FILES)
    files["orders/prepare.md"] = broken
    root = write_catalog(tmp_path / "c", files)
    problems = catalog.check(root)
    assert codes(root, problems) == [
        ("orders/SKILL.md", "link"),
        ("orders/examples/market.md", "link"),
        ("orders/prepare.md", own_code),
    ]
    unreadable = "orders/prepare.md could not be read; fix the problem reported for it"
    assert (
        str(problems[0]) == f"{root}/orders/SKILL.md:13: link 'prepare.md' is broken — {unreadable}"
    )
    assert str(problems[1]) == (
        f"{root}/orders/examples/market.md:3: link '../prepare.md' is broken — {unreadable}"
    )


def _holdings_with(tmp_path: Path, fields: bytes) -> tuple[Path, list[catalog.Problem]]:
    """The fixture catalog with holdings/SKILL.md stating ``fields`` after its description."""
    files = dict(FILES)
    files["holdings/SKILL.md"] = (
        b"---\nname: holdings\ndescription: Review holdings.\n" + fields + b"---\n# Holdings\n"
    )
    root = write_catalog(tmp_path / "c", files)
    return root, catalog.check(root)


def test_a_skill_that_states_nothing_more_gets_three_problems_at_once(tmp_path: Path) -> None:
    root, problems = _holdings_with(tmp_path, b"")
    where = f"{root}/holdings/SKILL.md:1: "
    assert [str(p) for p in problems] == [
        where + "'compatibility' is required text of 1 to 500 characters — say what the skill "
        "needs to run: the Kite MCP server, connected in the same client",
        where + "'license' is required text: the license the skill is shared under (this "
        "catalog's is MIT)",
        where + "'metadata' is required, a mapping of keys to text holding at least the "
        'skill\'s version (metadata: then version: "1.0" on the next line, indented)',
    ]
    with pytest.raises(CatalogError) as info:
        catalog.load(root)
    assert [p.code for p in info.value.problems] == ["compatibility", "license", "metadata"]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        pytest.param(
            b"license: MIT\ncompatibility: Kite.\nmetadata:\n  author: pat\n",
            [("metadata", 6, "'metadata.version' is required text")],
            id="no-version",
        ),
        pytest.param(
            b"license: MIT\ncompatibility: Kite.\nmetadata:\n  version: 1.0\n",
            [("metadata", 6, "'metadata' must map keys to text values — quote numbers")],
            id="a-number",
        ),
        pytest.param(
            b'license: MIT\ncompatibility: Kite.\nmetadata:\n  version: ""\n',
            [("metadata", 6, "'metadata.version' is required text")],
            id="empty-version",
        ),
        pytest.param(
            b'license: MIT\ncompatibility: Kite.\nmetadata: "1.0"\n',
            [("metadata", 6, "'metadata' is required, a mapping")],
            id="metadata-text",
        ),
        pytest.param(
            b'license: ""\ncompatibility: Kite.\nmetadata:\n  version: "1.0"\n',
            [("license", 4, "'license' is required text")],
            id="empty-license",
        ),
        pytest.param(
            b'license: MIT\ncompatibility: " "\nmetadata:\n  version: "1.0"\n',
            [("compatibility", 5, "'compatibility' is required text of 1 to 500 characters")],
            id="blank-compatibility",
        ),
    ],
)
def test_each_stated_field_is_checked(
    tmp_path: Path, fields: bytes, expected: list[tuple[str, int, str]]
) -> None:
    _, problems = _holdings_with(tmp_path, fields)
    assert [(p.code, p.line) for p in problems] == [(code, line) for code, line, _ in expected]
    for problem, (_, _, start) in zip(problems, expected, strict=True):
        assert problem.message.startswith(start), problem.message


@pytest.mark.parametrize(("length", "refused"), [(500, False), (501, True)])
def test_compatibility_may_have_500_characters_not_501(
    tmp_path: Path, length: int, refused: bool
) -> None:
    text = ("Needs the Kite MCP server. " * 20)[:length]
    text = text[:-1] + "x"  # no trailing blank
    fields = f'license: MIT\ncompatibility: "{text}"\nmetadata:\n  version: "1"\n'.encode()
    _, problems = _holdings_with(tmp_path, fields)
    expected = [f"'compatibility' is required text of 1 to 500 characters (got {length})"]
    assert [p.message.split(" — ")[0] for p in problems] == (expected if refused else [])
