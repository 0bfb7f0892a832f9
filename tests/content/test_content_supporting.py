"""Pages in supporting directories (a directory inside a skill without its own SKILL.md):
templates and worked examples. They are not recipes, so the recipe section rules do not
apply; each must be linked from a page of its skill and listed in that skill's manifest."""

from pathlib import Path

import pytest
from content_helpers import (
    approval_problems,
    catalog_root,
    links,
    load_yaml,
    markdown_files,
    rel,
    split_frontmatter,
    supporting_files,
)

from kite_skills import catalog


def skill_root(path: Path) -> Path:
    """The topic directory (a direct child of the catalog root) that holds ``path``."""
    return catalog_root() / path.relative_to(catalog_root()).parts[0]


def test_the_catalog_has_supporting_pages():
    assert "daily-review/templates/briefing-report.md" in [rel(p) for p in supporting_files()]


@pytest.mark.parametrize("path", supporting_files(), ids=rel)
def test_supporting_page_frontmatter_and_heading(path):
    doc = split_frontmatter(path.read_text(encoding="utf-8"))
    assert doc.frontmatter is not None
    data = load_yaml(doc.frontmatter)
    assert isinstance(data, dict) and list(data) == ["description"]
    assert isinstance(data["description"], str) and "\n" not in data["description"]
    assert doc.body.lstrip("\n").startswith("# ")


@pytest.mark.parametrize("path", supporting_files(), ids=rel)
def test_supporting_page_is_linked_from_a_page_of_its_skill(path):
    linking = [
        rel(page)
        for page in markdown_files()
        if page.is_relative_to(skill_root(path))
        and page not in supporting_files()
        and any(
            (page.parent / t.split("#", 1)[0]).resolve() == path.resolve()
            for t in links(page.read_text(encoding="utf-8"))
        )
    ]
    assert linking, f"no recipe or SKILL.md of {rel(skill_root(path))} links {rel(path)}"


@pytest.mark.parametrize("path", supporting_files(), ids=rel)
def test_supporting_page_is_in_the_skill_manifest(path):
    entry = catalog.load().skill(f"skill://{rel(skill_root(path))}/SKILL.md")
    assert entry is not None
    assert f"skill://{rel(path)}" in [r.uri for r in entry.resources]


@pytest.mark.parametrize("path", supporting_files(), ids=rel)
def test_supporting_page_size_and_approval_stops(path):
    text = path.read_text(encoding="utf-8")
    assert len(text.split()) <= 1500
    assert approval_problems(text) == []
