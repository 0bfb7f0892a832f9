"""The directory index behind ``resources/directory/read``: roots, supporting directories,
nested skills, paging with opaque cursors, and every refusal."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest

from kite_skills import catalog
from kite_skills.catalog import Catalog, DirectoryResource
from kite_skills.catalog.directory import PAGE_SIZE
from kite_skills.errors import DirectoryReadError, KiteError

ORDERS_CHILDREN = [
    "skill://orders/SKILL.md",
    "skill://orders/audit",
    "skill://orders/examples",
    "skill://orders/prepare.md",
    "skill://orders/reconcile.md",
]


@pytest.fixture
def cat(catalog_dir: Path) -> Catalog:
    return catalog.load(catalog_dir)


def test_every_directory_inside_a_skill_is_served(cat: Catalog) -> None:
    assert cat.directories == (
        "skill://holdings",
        "skill://orders",
        "skill://orders/audit",
        "skill://orders/examples",
    )


def test_skill_root_lists_direct_children_sorted(cat: Catalog) -> None:
    page = cat.directory("skill://orders")
    assert page.uri == "skill://orders"
    assert [r.uri for r in page.resources] == ORDERS_CHILDREN
    assert page.next_cursor is None
    assert "nextCursor" not in page.to_dict()


def test_files_carry_their_ordinary_resource_metadata(cat: Catalog) -> None:
    resources = {r.uri: r for r in cat.resources()}
    for uri in cat.directories:
        for child in cat.directory(uri).resources:
            if isinstance(child, DirectoryResource):
                continue
            assert child == resources[child.uri]
            assert child.to_dict()["mimeType"] == "text/markdown"
            assert child.to_dict()["size"] == len(cat.read(child.uri) or b"")


def test_shapes_on_the_wire(cat: Catalog) -> None:
    data = cat.directory("skill://orders").to_dict()
    assert data["resources"][0] == {
        "uri": "skill://orders/SKILL.md",
        "name": "orders",
        "title": "Orders",
        "description": "Inspect orders and prepare approved changes.",
        "mimeType": "text/markdown",
        "size": len(cat.read("skill://orders/SKILL.md") or b""),
    }
    assert data["resources"][1] == {
        "uri": "skill://orders/audit",
        "name": "audit",
        "mimeType": "inode/directory",
    }
    # a recipe without frontmatter has no description; absent fields are left out
    reconcile = data["resources"][4]
    assert reconcile["uri"] == "skill://orders/reconcile.md"
    assert "description" not in reconcile and reconcile["title"] == "Reconcile fills"


def test_one_trailing_slash_in_strict_out(cat: Catalog) -> None:
    page = cat.directory("skill://orders/")
    assert page.uri == "skill://orders"
    assert [r.uri for r in page.resources] == ORDERS_CHILDREN
    assert not any(r.uri.endswith("/") for r in page.resources)
    assert cat.directory("skill://orders/examples/").uri == "skill://orders/examples"


def test_supporting_directory(cat: Catalog) -> None:
    page = cat.directory("skill://orders/examples")
    assert [r.uri for r in page.resources] == ["skill://orders/examples/market.md"]
    assert page.resources[0].name == "orders/examples/market.md"


def test_nested_skill_is_a_subdirectory_of_its_parent(cat: Catalog) -> None:
    (audit,) = [r for r in cat.directory("skill://orders").resources if r.name == "audit"]
    assert audit == DirectoryResource("skill://orders/audit", "audit")
    page = cat.directory("skill://orders/audit")
    assert [r.uri for r in page.resources] == [
        "skill://orders/audit/SKILL.md",
        "skill://orders/audit/checks.md",
    ]
    assert page.resources[0].name == "audit"


def test_a_skill_with_only_skill_md(cat: Catalog) -> None:
    page = cat.directory("skill://holdings")
    assert [r.uri for r in page.resources] == ["skill://holdings/SKILL.md"]


def test_an_empty_supporting_directory_lists_nothing(catalog_dir: Path) -> None:
    (catalog_dir / "orders" / "empty").mkdir()
    cat = catalog.load(catalog_dir)
    assert "skill://orders/empty" in cat.directories
    assert cat.directory("skill://orders/empty").to_dict() == {"resources": []}


# -- pagination ------------------------------------------------------------------------------


def pages(cat: Catalog, uri: str, size: int) -> list[list[str]]:
    out, cursor = [], None
    while True:
        page = cat.directory(uri, cursor, page_size=size)
        out.append([r.uri for r in page.resources])
        cursor = page.next_cursor
        if cursor is None:
            return out


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 6, PAGE_SIZE])
def test_pages_concatenate_to_the_listing(cat: Catalog, size: int) -> None:
    got = pages(cat, "skill://orders", size)
    assert [uri for page in got for uri in page] == ORDERS_CHILDREN
    assert all(len(page) == size for page in got[:-1])
    assert 1 <= len(got[-1]) <= size
    assert len(got) == -(-len(ORDERS_CHILDREN) // size)


def test_cursors_are_opaque_and_repeatable(cat: Catalog) -> None:
    first = cat.directory("skill://orders", page_size=2)
    again = cat.directory("skill://orders", page_size=2)
    assert first.next_cursor is not None and first.next_cursor == again.next_cursor
    assert "orders" not in first.next_cursor and "/" not in first.next_cursor
    assert first.to_dict()["nextCursor"] == first.next_cursor
    second = cat.directory("skill://orders", first.next_cursor, page_size=2)
    assert [r.uri for r in second.resources] == ORDERS_CHILDREN[2:4]
    # the same cursor read twice gives the same page
    assert cat.directory("skill://orders", first.next_cursor, page_size=2) == second


def test_an_empty_cursor_is_the_first_page(cat: Catalog) -> None:
    assert cat.directory("skill://orders", "", page_size=2) == cat.directory(
        "skill://orders", page_size=2
    )


def forged(offset: str) -> str:
    return base64.urlsafe_b64encode(f"{offset}:0123456789abcdef".encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    ["x", "AAAA", "0", forged("2"), forged("0"), forged("-1"), forged("99"), "€", " ", "=="],
)
def test_a_cursor_never_issued_is_refused(cat: Catalog, cursor: str) -> None:
    with pytest.raises(DirectoryReadError) as info:
        cat.directory("skill://orders", cursor, page_size=2)
    assert str(info.value).startswith("unknown cursor for skill://orders")
    assert info.value.data == {"uri": "skill://orders", "cursor": cursor}


def test_a_cursor_is_bound_to_its_directory_and_page_size(cat: Catalog) -> None:
    cursor = cat.directory("skill://orders", page_size=1).next_cursor
    assert cursor is not None
    with pytest.raises(DirectoryReadError, match="unknown cursor for skill://orders/audit"):
        cat.directory("skill://orders/audit", cursor, page_size=1)
    with pytest.raises(DirectoryReadError, match="unknown cursor"):
        cat.directory("skill://orders", cursor, page_size=2)
    # a tampered cursor (one character changed) is refused
    tampered = cursor[:-1] + ("A" if cursor[-1] != "A" else "B")
    with pytest.raises(DirectoryReadError, match="unknown cursor"):
        cat.directory("skill://orders", tampered, page_size=1)


def test_a_cursor_from_another_catalog_build_is_refused(catalog_dir: Path, tmp_path: Path) -> None:
    before = catalog.load(catalog_dir).directory("skill://orders", page_size=2).next_cursor
    other = shutil.copytree(catalog_dir, tmp_path / "other")
    (other / "orders" / "extra.md").write_bytes(b"# Extra\n")
    with pytest.raises(DirectoryReadError, match="unknown cursor"):
        catalog.load(other).directory("skill://orders", before, page_size=2)


@pytest.mark.parametrize("cursor", [5, 0, ["a"], {"o": 1}, True])
def test_a_cursor_that_is_not_text_is_refused(cat: Catalog, cursor: object) -> None:
    with pytest.raises(DirectoryReadError, match="'cursor' must be a string") as info:
        cat.directory("skill://orders", cursor)
    assert info.value.data == {"uri": "skill://orders", "cursor": cursor}


def test_page_size_must_be_positive(cat: Catalog) -> None:
    with pytest.raises(ValueError, match="page_size must be at least 1"):
        cat.directory("skill://orders", page_size=0)


# -- refusals --------------------------------------------------------------------------------

REFUSALS: list[tuple[object, str]] = [
    (None, "needs 'uri'"),
    (5, "'uri' must be a string (got int) — give a directory URI such as skill://holdings"),
    (["skill://orders"], "'uri' must be a string"),
    ({"uri": "skill://orders"}, "'uri' must be a string"),
    ("skill://orders/SKILL.md", "skill://orders/SKILL.md is a file, not a directory"),
    ("skill://orders/prepare.md", "list its directory skill://orders"),
    ("skill://orders/prepare.md/", "skill://orders/prepare.md is a file"),
    ("skill://orders/audit/SKILL.md", "is a file, not a directory"),
    ("skill://orders/examples/market.md", "list its directory skill://orders/examples"),
    ("skill://nope", "no directory at skill://nope — start at a skill root"),
    ("skill://orders/nope", "the nearest directory is skill://orders"),
    ("skill://orders/audit/deeper/still", "the nearest directory is skill://orders/audit"),
    ("skill://Orders", "no directory at skill://Orders"),
    ("skill://", "namespace root, outside every skill"),
    ("skill:///", "namespace root, outside every skill"),
    ("skill://index.md", "root help page, outside every skill"),
    ("skill://orders/./audit", "'.' or '..' segment"),
    ("skill://orders/..", "'.' or '..' segment"),
    ("skill://orders/../holdings", "'.' or '..' segment"),
    ("skill://./orders", "'.' or '..' segment"),
    ("skill://orders%2Faudit", "percent-encoding"),
    ("skill://orders/audit%2f", "percent-encoding"),
    ("skill://orders/%61udit", "percent-encoding"),
    ("skill://orders//audit", "empty path segment"),
    ("skill://orders//", "empty path segment"),
    ("skill://orders?x=1", "query or fragment"),
    ("skill://orders#top", "query or fragment"),
    ("skill:orders", "is not a skill:// URI"),
    ("SKILL://orders", "is not a skill:// URI"),
    ("user-skill://orders", "is not a skill:// URI"),
    ("https://orders", "is not a skill:// URI"),
    ("orders", "is not a skill:// URI"),
    ("", "is not a skill:// URI"),
]


@pytest.mark.parametrize(("uri", "words"), REFUSALS, ids=[repr(u) for u, _ in REFUSALS])
def test_refusals_name_the_problem_and_the_uri(cat: Catalog, uri: object, words: str) -> None:
    with pytest.raises(DirectoryReadError) as info:
        cat.directory(uri)
    assert words in str(info.value)
    assert " — " in str(info.value), "every refusal says what to do"
    assert info.value.uri == uri
    assert info.value.data == {"uri": uri}
    assert isinstance(info.value, KiteError)


def test_file_reads_of_directories_stay_unknown(cat: Catalog) -> None:
    for uri in cat.directories:
        assert cat.read(uri) is None
        assert cat.read(uri + "/") is None


# -- the shipped catalog ---------------------------------------------------------------------


def walk(cat: Catalog, root: str, page_size: int = PAGE_SIZE) -> tuple[list[str], list[str]]:
    """Every file and every directory reached from ``root`` through directory reads."""
    files, directories, queue = [], [root], [root]
    while queue:
        uri, cursor = queue.pop(0), None
        while True:
            page = cat.directory(uri, cursor, page_size=page_size)
            for child in page.resources:
                if isinstance(child, DirectoryResource):
                    directories.append(child.uri)
                    queue.append(child.uri)
                else:
                    files.append(child.uri)
            cursor = page.next_cursor
            if cursor is None:
                break
    return sorted(files), sorted(directories)


@pytest.mark.parametrize("page_size", [1, 2, PAGE_SIZE])
def test_shipped_catalog_walk_equals_every_manifest(page_size: int) -> None:
    cat = catalog.load()
    reached = set()
    for skill in cat.skills:
        root = skill.uri.removesuffix("/SKILL.md")
        files, directories = walk(cat, root, page_size)
        assert files == [r.uri for r in skill.resources], skill.uri
        reached.update(directories)
    assert reached == set(cat.directories)
