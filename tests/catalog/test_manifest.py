"""Skill entries and manifests (SEP-2640) and catalog resources."""

from __future__ import annotations

import hashlib
from pathlib import Path

from kite_skills import catalog


def test_every_skill_listed_flat_sorted_by_uri(catalog_dir: Path) -> None:
    cat = catalog.load(catalog_dir)
    assert [s.uri for s in cat.skills] == [
        "skill://holdings/SKILL.md",
        "skill://orders/SKILL.md",
        "skill://orders/audit/SKILL.md",
    ]


def test_digest_and_size_are_over_raw_bytes(catalog_dir: Path) -> None:
    cat = catalog.load(catalog_dir)
    for skill in cat.skills:
        for entry in skill.resources:
            raw = (catalog_dir / entry.uri.removeprefix("skill://")).read_bytes()
            assert entry.size == len(raw)
            assert entry.digest == "sha256:" + hashlib.sha256(raw).hexdigest()


def test_crlf_file_keeps_its_bytes(catalog_dir: Path) -> None:
    cat = catalog.load(catalog_dir)
    raw = (catalog_dir / "orders/audit/SKILL.md").read_bytes()
    assert b"\r\n" in raw
    assert cat.read("skill://orders/audit/SKILL.md") == raw
    assert cat.skill("skill://orders/audit/SKILL.md").frontmatter == {  # type: ignore[union-attr]
        "name": "audit",
        "description": "Audit order history.",
        "license": "MIT",
        "compatibility": "Needs the Kite MCP server.",
        "metadata": {"version": "1"},
    }


def test_manifest_has_every_file_once_including_nested(catalog_dir: Path) -> None:
    orders = catalog.load(catalog_dir).skill("skill://orders/SKILL.md")
    assert orders is not None
    uris = [r.uri for r in orders.resources]
    assert uris == sorted(set(uris))
    assert uris == [
        "skill://orders/SKILL.md",
        "skill://orders/audit/SKILL.md",
        "skill://orders/audit/checks.md",
        "skill://orders/examples/market.md",
        "skill://orders/prepare.md",
        "skill://orders/reconcile.md",
    ]


def test_supporting_directories_add_no_synthetic_resources(catalog_dir: Path) -> None:
    cat = catalog.load(catalog_dir)
    uris = {r.uri for r in cat.resources()}
    assert "skill://orders/examples" not in uris
    assert not any(u.endswith("/") for u in uris)
    assert cat.read("skill://orders/examples") is None
    assert "skill://index.md" not in uris
    assert cat.read("skill://index.md") is None


def test_entry_shape_and_verbatim_frontmatter(catalog_dir: Path) -> None:
    entry = catalog.load(catalog_dir).skill("skill://orders/SKILL.md")
    assert entry is not None
    data = entry.to_dict()
    assert list(data) == ["uri", "frontmatter", "resources"]
    assert list(data["frontmatter"]) == [
        "name",
        "description",
        "license",
        "compatibility",
        "metadata",
    ]
    assert list(data["frontmatter"]["metadata"]) == ["zeta", "alpha", "version"]
    assert set(data["resources"][0]) == {"uri", "digest", "size"}
    data["frontmatter"]["name"] = "changed"  # callers get a copy
    assert entry.frontmatter["name"] == "orders"


def test_resources_carry_names_and_descriptions(catalog_dir: Path) -> None:
    by_uri = {r.uri: r for r in catalog.load(catalog_dir).resources()}
    skill = by_uri["skill://orders/SKILL.md"]
    assert (skill.name, skill.description, skill.mime_type) == (
        "orders",
        "Inspect orders and prepare approved changes.",
        "text/markdown",
    )
    recipe = by_uri["skill://orders/prepare.md"]
    assert recipe.description == "Prepare a new order for approval."
    assert recipe.title == "Prepare"


def test_unknown_uris_read_nothing(catalog_dir: Path) -> None:
    cat = catalog.load(catalog_dir)
    for uri in ["skill://orders/nope.md", "skill://../etc/passwd", "file:///etc/passwd", ""]:
        assert cat.read(uri) is None
    assert cat.skill("skill://orders/prepare.md") is None
