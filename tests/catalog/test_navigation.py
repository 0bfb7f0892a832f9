"""help navigation: three levels and every key rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from kite_skills import catalog
from kite_skills.errors import HelpKeyTooLong, UnknownHelpKey


@pytest.fixture
def cat(catalog_dir: Path) -> catalog.Catalog:
    return catalog.load(catalog_dir)


def test_root_lists_categories_only(cat: catalog.Catalog) -> None:
    page = cat.help("/")
    assert page.kind == "root"
    assert page.parent is None
    assert [(c.key, c.label) for c in page.children] == [
        ("/holdings", "category"),
        ("/orders", "category"),
    ]
    assert page.children[1].description == "Inspect orders and prepare approved changes."


@pytest.mark.parametrize("key", [None, "", "/"])
def test_omitted_or_empty_key_is_root(cat: catalog.Catalog, key: str | None) -> None:
    assert cat.help(key).key == "/"


def test_category_shows_entry_text_and_direct_children(cat: catalog.Catalog) -> None:
    page = cat.help("/orders")
    assert page.kind == "category"
    assert page.parent == "/"
    assert [(c.key, c.label, c.description) for c in page.children] == [
        ("/orders/audit", "category", "Audit order history."),
        ("/orders/examples", "category", "Supporting pages (1)"),
        ("/orders/prepare", "recipe", "Prepare a new order for approval."),
        ("/orders/reconcile", "recipe", "Reconcile fills"),  # no description: first heading
    ]
    # Branches never include descendants' text.
    assert "SECRET-PREPARE-STEPS" not in page.to_markdown()
    assert "AUDIT-ENTRY-TEXT" not in page.to_markdown()


def test_recipe_returns_full_steps_with_parent(cat: catalog.Catalog) -> None:
    page = cat.help("/orders/prepare")
    assert page.kind == "recipe"
    assert page.parent == "/orders"
    assert page.children == ()
    assert "SECRET-PREPARE-STEPS" in page.text


def test_relative_links_render_as_help_keys(cat: catalog.Catalog) -> None:
    text = cat.help("/orders").text
    assert "prepare (`/orders/prepare`)" in text
    assert "reconcile (`/orders/reconcile`)" in text  # the anchor is dropped
    assert "`[x](nope.md)`" in text  # code spans are left alone
    assert "[y](nope.md)" in text  # fenced blocks too
    assert "the audit (`/orders/audit`)" in cat.help("/orders/prepare").text
    assert "prepare (`/orders/prepare`)" in cat.help("/orders/examples/market").text


def test_nested_skill_and_supporting_directory_pages(cat: catalog.Catalog) -> None:
    nested = cat.help("/orders/audit")
    assert nested.parent == "/orders"
    assert [c.key for c in nested.children] == ["/orders/audit/checks"]
    support = cat.help("/orders/examples")
    assert support.kind == "category"
    assert [c.key for c in support.children] == ["/orders/examples/market"]
    assert cat.help("/orders/examples/market").parent == "/orders/examples"


def test_one_trailing_slash_accepted(cat: catalog.Catalog) -> None:
    assert cat.help("/orders/").key == "/orders"
    with pytest.raises(UnknownHelpKey):
        cat.help("/orders//")


def test_unknown_key_names_nearest_ancestor_and_its_children(cat: catalog.Catalog) -> None:
    with pytest.raises(UnknownHelpKey) as info:
        cat.help("/orders/unknown")
    assert info.value.nearest.key == "/orders"
    message = str(info.value)
    assert "/orders/prepare (recipe) — Prepare a new order for approval." in message
    assert "/orders/reconcile (recipe)" in message


def test_keys_are_case_sensitive(cat: catalog.Catalog) -> None:
    with pytest.raises(UnknownHelpKey) as info:
        cat.help("/Orders")
    assert info.value.nearest.key == "/"
    assert "/orders (category)" in str(info.value)


@pytest.mark.parametrize(
    ("key", "nearest"),
    [
        ("/orders/../holdings", "/orders"),
        ("/etc/passwd", "/"),
        ("%2Forders", "/"),
        ("/orders%2Fprepare", "/"),
        ("/orders/*", "/orders"),
        ("orders", "/"),
        ("/orders/./prepare", "/orders"),
        (str(Path.home()), "/"),
    ],
)
def test_traversal_wildcards_and_encodings_are_simply_unknown(
    cat: catalog.Catalog, key: str, nearest: str
) -> None:
    with pytest.raises(UnknownHelpKey) as info:
        cat.help(key)
    assert info.value.nearest.key == nearest


def test_key_limit_is_1024_utf8_bytes(cat: catalog.Catalog) -> None:
    at_limit = "/orders/" + "x" * (1024 - len("/orders/"))
    with pytest.raises(UnknownHelpKey):  # 1024 bytes: looked up (and unknown)
        cat.help(at_limit)
    with pytest.raises(HelpKeyTooLong) as info:
        cat.help(at_limit + "x")
    assert info.value.size == 1025
    # Multi-byte characters count as bytes: 342 × 3 bytes = 1026.
    with pytest.raises(HelpKeyTooLong):
        cat.help("/" + "é" * 512)


def test_oversized_key_is_refused_before_any_lookup(cat: catalog.Catalog) -> None:
    # A long key under an existing prefix would otherwise recover to /orders.
    with pytest.raises(HelpKeyTooLong) as info:
        cat.help("/orders/" + "y" * 2000)
    assert not isinstance(info.value, UnknownHelpKey)


def test_markdown_rendering_lists_children_and_parent(cat: catalog.Catalog) -> None:
    text = cat.help("/orders").to_markdown()
    assert "- `/orders/prepare` (recipe) — Prepare a new order for approval." in text
    assert text.rstrip().endswith("Up: `/`")


def test_structured_page(cat: catalog.Catalog) -> None:
    data = cat.help("/orders/prepare").to_dict()
    assert data["key"] == "/orders/prepare"
    assert data["kind"] == "recipe"
    assert data["parent"] == "/orders"
    assert data["children"] == []
    assert "parent" not in cat.help("/").to_dict()
