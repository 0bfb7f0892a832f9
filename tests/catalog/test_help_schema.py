"""The help reply's wire shape has one owner: ``HelpPage.to_dict`` and its schema
``HELP_PAGE_SCHEMA`` (the ``help`` tool's output schema), written side by side in
kite_skills/catalog/model.py. These tests fail when the two drift apart."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import jsonschema
import pytest

from kite_skills import catalog
from kite_skills.catalog import HELP_PAGE_SCHEMA, HelpPage
from kite_skills.catalog.model import ChildLabel, PageKind

VALIDATOR = jsonschema.Draft202012Validator(HELP_PAGE_SCHEMA)


def pages(cat: catalog.Catalog) -> list[HelpPage]:
    return [cat.help(key) for key in cat.keys]


@pytest.mark.parametrize("which", ["embedded", "fixture"])
def test_every_page_dict_fits_the_schema_exactly(which: str, catalog_dir: Path) -> None:
    cat = catalog.load() if which == "embedded" else catalog.load(catalog_dir)
    kinds = set()
    for page in pages(cat):
        data = page.to_dict()
        problems = [e.message for e in VALIDATOR.iter_errors(data)]
        assert problems == [], (page.key, problems)
        assert set(data) <= set(HELP_PAGE_SCHEMA["properties"]), page.key  # nothing unnamed
        child_schema = HELP_PAGE_SCHEMA["properties"]["children"]["items"]
        for child in data["children"]:
            assert set(child) == set(child_schema["properties"]), page.key
        kinds.add(page.kind)
    assert kinds == {"root", "category", "recipe"}  # every kind of page was checked


def test_the_schema_enums_are_the_models_own_literals() -> None:
    properties: dict[str, Any] = HELP_PAGE_SCHEMA["properties"]
    assert properties["kind"]["enum"] == list(get_args(PageKind))
    assert properties["children"]["items"]["properties"]["label"]["enum"] == list(
        get_args(ChildLabel)
    )


def test_a_dict_the_schema_does_not_describe_is_refused() -> None:
    """The check above can fail: a page whose dict lost a field, or names a kind the schema
    does not know, breaks the schema."""
    page = catalog.load().help("/orders")
    data = page.to_dict()
    del data["text"]
    assert [e.validator for e in VALIDATOR.iter_errors(data)] == ["required"]
    odd = {**page.to_dict(), "kind": "chapter"}
    assert [e.validator for e in VALIDATOR.iter_errors(odd)] == ["enum"]
