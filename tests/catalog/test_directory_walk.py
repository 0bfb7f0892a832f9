"""Property: in any valid catalog, walking every directory from each skill root with directory
reads (in pages of any size) reaches exactly the files of that skill's manifest, and every
directory inside a skill is reached."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kite_skills import catalog

from .conftest import STATED
from .test_directory import walk

# Files and directories draw from disjoint name pools: a file 'x.md' and a directory 'x'
# side by side would share the help key '/…/x', which the validator refuses.
FILE = st.from_regex(r"f[a-z0-9]{0,4}", fullmatch=True)
DIRECTORY = st.from_regex(r"d[a-z0-9]{0,4}", fullmatch=True)
TOPIC = st.from_regex(r"t[a-z0-9]{0,4}", fullmatch=True)


def tree(depth: int, skill: st.SearchStrategy[bool]) -> st.SearchStrategy[dict[str, Any]]:
    below = (
        st.dictionaries(DIRECTORY, tree(depth - 1, st.booleans()), max_size=2)
        if depth
        else st.just({})
    )
    return st.fixed_dictionaries(
        {"skill": skill, "files": st.sets(FILE, max_size=3), "dirs": below}
    )


CATALOGS = st.dictionaries(TOPIC, tree(2, st.just(True)), min_size=1, max_size=3)


def write(directory: Path, node: dict[str, Any]) -> None:
    directory.mkdir(parents=True)
    if node["skill"]:
        (directory / "SKILL.md").write_bytes(
            f"---\nname: {directory.name}\ndescription: Skill {directory.name}.\n".encode()
            + STATED
            + f"---\n# {directory.name}\n".encode()
        )
    for name in node["files"]:
        (directory / f"{name}.md").write_bytes(f"# Page {name}\n".encode())
    for name, child in node["dirs"].items():
        write(directory / name, child)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CATALOGS, st.integers(min_value=1, max_value=4))
def test_walk_from_each_skill_root_reaches_exactly_its_manifest(
    topics: dict[str, dict[str, Any]], page_size: int
) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary) / "catalog"
        root.mkdir()
        (root / "index.md").write_bytes(b"# Catalog\n")
        for name, node in topics.items():
            write(root / name, node)
        cat = catalog.load(root)
        reached: set[str] = set()
        for skill in cat.skills:
            files, directories = walk(cat, skill.uri.removesuffix("/SKILL.md"), page_size)
            assert files == [r.uri for r in skill.resources]
            assert len(directories) == len(set(directories))
            reached.update(directories)
        assert reached == set(cat.directories)
        # every directory on disk below a topic is a directory resource
        on_disk = {
            "skill://" + p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_dir()
        }
        assert set(cat.directories) == on_disk
