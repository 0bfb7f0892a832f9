"""Structure, links, frontmatter, skills-ref validation and size of the catalog."""

import re
from pathlib import Path

import pytest
from content_helpers import (
    REQUIRED_RECIPES,
    STOP_LINE,
    TOPICS,
    approval_problems,
    catalog_root,
    links,
    load_yaml,
    markdown_files,
    mode_pairs,
    names_write,
    numbered_steps,
    recipe_files,
    rel,
    sections,
    skill_files,
    split_frontmatter,
    uses_order_tool,
    uses_paginated_tool,
)
from skills_ref.validator import validate

ALWAYS = (
    "When to use",
    "Check first",
    "Steps",
    "Stale or missing data",
    "Uncertainty",
    "What this server cannot do",
)
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SKILL_KEYS = {"name", "description", "license", "compatibility", "metadata"}


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def body_sections(path: Path) -> dict[str, str]:
    return sections(split_frontmatter(read(path)).body)


# ------------------------------------------------------------------ layout


def test_layout_has_every_topic_and_required_recipe():
    root = catalog_root()
    assert (root / "index.md").is_file()
    for topic in TOPICS:
        assert (root / topic / "SKILL.md").is_file(), topic
    for recipe in REQUIRED_RECIPES:
        assert (root / recipe).is_file(), recipe
    topics = sorted(p.name for p in root.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert topics == sorted(TOPICS)


def test_catalog_holds_only_markdown():
    root = catalog_root()
    others = [
        rel(p)
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix != ".md"
        and p.name != "__init__.py"
        and "__pycache__" not in p.parts
    ]
    assert others == []


@pytest.mark.parametrize("path", markdown_files(), ids=rel)
def test_utf8_lf_and_whole_line_delimiters(path):
    raw = path.read_bytes()
    raw.decode("utf-8")
    assert b"\r" not in raw, "use LF line endings"
    text = raw.decode("utf-8")
    if path.name == "index.md" and path.parent == catalog_root():
        assert text.startswith("# ")
        return
    assert text.startswith("---\n"), "frontmatter must open with a whole '---' line"
    assert "\n---\n" in text, "frontmatter must close with a whole '---' line"


# ------------------------------------------------------------------ frontmatter


@pytest.mark.parametrize("path", skill_files(), ids=rel)
def test_skill_frontmatter(path):
    doc = split_frontmatter(read(path))
    data = load_yaml(doc.frontmatter)
    assert isinstance(data, dict)
    assert set(data) <= SKILL_KEYS, set(data) - SKILL_KEYS
    metadata = data.pop("metadata")
    assert all(isinstance(v, str) for v in data.values()), data
    assert all(isinstance(v, str) for v in metadata.values()), metadata
    assert metadata["version"].strip(), "metadata.version names the skill's version"
    assert data["license"] == "MIT", "the catalog is shared under the project's license"
    compatibility = data["compatibility"]
    assert "Kite MCP server" in compatibility and len(compatibility) <= 500, compatibility
    assert data["name"] == path.parent.name
    assert NAME_RE.fullmatch(data["name"]) and len(data["name"]) <= 64
    desc = data["description"]
    assert desc.strip() and "\n" not in desc and len(desc) <= 1024
    assert "Use " in desc, "description must say when to use the topic"
    assert doc.body.lstrip("\n").startswith("# ")


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_recipe_frontmatter(path):
    doc = split_frontmatter(read(path))
    assert doc.frontmatter is not None
    data = load_yaml(doc.frontmatter)
    assert isinstance(data, dict) and list(data) == ["description"]
    desc = data["description"]
    assert isinstance(desc, str) and desc.strip() and "\n" not in desc
    assert doc.body.lstrip("\n").startswith("# ")


@pytest.mark.parametrize("topic", TOPICS)
def test_skills_ref_validation(topic):
    assert validate(catalog_root() / topic) == []


# ------------------------------------------------------------------ links


@pytest.mark.parametrize("path", markdown_files(), ids=rel)
def test_relative_links_resolve_inside_catalog(path):
    root = catalog_root().resolve()
    for target in links(read(path)):
        if re.match(r"^[a-z]+:", target):
            assert target.startswith(("https://", "http://")), target
            continue
        assert not target.startswith("/"), f"absolute link {target}"
        file_part = target.split("#", 1)[0]
        resolved = (path.parent / file_part).resolve()
        assert resolved.is_relative_to(root), f"{target} leaves the catalog"
        assert resolved.suffix == ".md" and resolved.is_file(), f"{target} does not resolve"


@pytest.mark.parametrize("topic", TOPICS)
def test_skill_links_every_recipe_in_its_directory(topic):
    directory = catalog_root() / topic
    targets = set(links(read(directory / "SKILL.md")))
    for recipe in sorted(directory.glob("*.md")):
        if recipe.name != "SKILL.md":
            assert recipe.name in targets, f"SKILL.md does not link {recipe.name}"


def test_index_links_topics_and_states_the_rules():
    text = read(catalog_root() / "index.md")
    targets = set(links(text))
    for topic in TOPICS:
        assert f"{topic}/SKILL.md" in targets
    for phrase in (
        "`tools/list`",
        "EXCLUDED_TOOLS",
        "no indicator engine",
        "approval",
        "`help`",
        "skills/list",
        "skill://orders/SKILL.md",
    ):
        assert phrase in text, phrase


# ------------------------------------------------------------------ recipe sections


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_recipe_has_required_sections(path):
    secs = body_sections(path)
    for title in ALWAYS:
        assert title in secs, f"missing '## {title}'"
        assert secs[title].strip(), f"'## {title}' is empty"


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_steps_are_numbered_and_name_tools(path):
    steps = sections(split_frontmatter(read(path)).body)["Steps"]
    items = numbered_steps(steps)
    assert len(items) >= 3
    numbers = [int(re.match(r"\d+", item).group()) for _, item, _ in items]
    assert numbers == list(range(1, len(numbers) + 1)), numbers
    assert mode_pairs(steps), "steps must name an exact tool and mode"


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_pagination_section_when_paginated_tool_used(path):
    text = read(path)
    secs = body_sections(path)
    if not uses_paginated_tool(text):
        return
    assert "Pagination" in secs, "uses a paginated tool but has no '## Pagination'"
    for word in ("`from`", "`limit`", "`total`", "`has_more`"):
        assert word in secs["Pagination"], word


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_partial_fills_section_when_orders_involved(path):
    text = read(path)
    secs = body_sections(path)
    if not uses_order_tool(text):
        return
    assert "Partial fills" in secs, "uses order tools but has no '## Partial fills'"
    section = secs["Partial fills"]
    for word in ("PARTIAL", "filled_quantity", "average_price"):
        assert word in section, word


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_stale_data_section_names_missing_markers(path):
    section = body_sections(path)["Stale or missing data"]
    assert re.search(r"0001-01-01|`\"\"`|forming|missing", section)


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_write_steps_stop_for_approval(path):
    assert approval_problems(read(path)) == []


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_writing_recipes_reconcile_before_retry(path):
    text = read(path)
    if not any(names_write(item) for _, item, _ in numbered_steps(text)):
        return
    uncertainty = body_sections(path)["Uncertainty"]
    assert re.search(r"before any (retry|new attempt)", uncertainty)
    assert STOP_LINE in text


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_approval_stops_follow_steps(path):
    lines = read(path).split("\n")
    for i, line in enumerate(lines):
        if line.startswith(STOP_LINE):
            previous = [x for x in lines[:i] if x.strip()]
            assert previous and (
                previous[-1].startswith("   ") or re.match(r"\d+\. ", previous[-1])
            )


# ------------------------------------------------------------------ size


@pytest.mark.parametrize("path", recipe_files(), ids=rel)
def test_recipe_word_count(path):
    words = len(read(path).split())
    assert words <= 1500, f"{words} words"


@pytest.mark.parametrize("path", skill_files(), ids=rel)
def test_skill_line_count(path):
    lines = read(path).count("\n")
    assert lines <= 40, f"{lines} lines"
