"""Every recipe has a rehearsal, or is listed in docs/rehearsals.md as not rehearsed yet (so
the list cannot drift from the tests)."""

from __future__ import annotations

import re

from .agent import CATALOG, ROOT


def rehearsed() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "tests" / "rehearsal").glob("*.py"):
        found |= set(re.findall(r'recipe\(\s*"([a-z-]+/[a-z-]+\.md)"', path.read_text("utf-8")))
    return found


def test_every_recipe_is_rehearsed_or_listed_as_not_yet() -> None:
    recipes = {
        p.relative_to(CATALOG).as_posix() for p in CATALOG.glob("*/*.md") if p.name != "SKILL.md"
    }
    doc = (ROOT / "docs" / "rehearsals.md").read_text("utf-8")
    match = re.search(r"Not rehearsed yet: (.*?)\.\n", doc, flags=re.S)
    assert match, "docs/rehearsals.md lost its 'Not rehearsed yet:' line"
    listed = {f"{name}.md" for name in re.findall(r"[a-z-]+/[a-z-]+", match.group(1))}
    assert recipes - rehearsed() == listed
    assert not listed & rehearsed()
