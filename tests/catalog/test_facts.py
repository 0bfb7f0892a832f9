"""The parser findings the build stores beside the shipped catalog (markdown-facts.json): a
load that uses them must equal a load that parses, and anything they do not match is parsed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kite_skills import catalog
from kite_skills.catalog import _facts, loader
from kite_skills.catalog.catalog import Catalog, write_facts

SHIPPED = Path(__file__).parents[2] / "skills_catalog"


@pytest.fixture
def shipped_copy(tmp_path: Path) -> Path:
    """The shipped catalog, copied, with its facts written as the build writes them."""
    root = tmp_path / "skills_catalog"
    shutil.copytree(SHIPPED, root, ignore=shutil.ignore_patterns("__pycache__", "*.json"))
    write_facts(root)
    return root


def pages(loaded: Catalog) -> dict[str, object]:
    """Everything the catalog serves: every help page, entry and resource."""
    return {
        "help": {key: loaded.help(key) for key in loaded.keys},
        "skills": loaded.skills,
        "resources": loaded.resources(),
    }


def test_a_load_with_the_facts_equals_a_load_that_parses(shipped_copy: Path) -> None:
    known = _facts.read(shipped_copy)
    with_facts = loader.scan(shipped_copy, "c", known)
    parsed = loader.scan(SHIPPED, "c")
    assert len(known) == len(with_facts.files) == len(parsed.files)
    assert with_facts.files == parsed.files
    # The help pages below come from the stored link sources on one side, a parse on the other.
    assert all(file.sources is not None for file in with_facts.files.values())
    assert all(file.sources is None for file in parsed.files.values())
    assert with_facts.problems == parsed.problems == []
    assert pages(Catalog(with_facts)) == pages(Catalog(parsed))


def test_with_every_body_known_nothing_is_parsed(shipped_copy: Path) -> None:
    """In a fresh interpreter: loading the catalog and rendering every help page imports no
    Markdown parser."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from kite_skills.catalog import _facts, loader\n"
        "from kite_skills.catalog.catalog import Catalog\n"
        f"root = Path({str(shipped_copy)!r})\n"
        "result = loader.scan(root, 'c', _facts.read(root))\n"
        "assert not result.problems, result.problems\n"
        "loaded = Catalog(result)\n"
        "assert [loaded.help(key) for key in loaded.keys]\n"
        "print(sorted(m for m in sys.modules if m.startswith(('markdown_it', 'mdurl'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_an_edited_body_is_parsed_again(shipped_copy: Path) -> None:
    recipe = shipped_copy / "orders" / "prepare.md"
    recipe.write_text(recipe.read_text() + "\nSee [the gone page](gone.md).\n# Late heading\n")
    result = loader.scan(shipped_copy, "c", _facts.read(shipped_copy))
    broken = [p for p in result.problems if p.path == "c/orders/prepare.md"]
    assert [p.message for p in broken] == ["link 'gone.md' is broken — no such catalog file"]


def test_facts_from_another_parser_are_ignored(shipped_copy: Path) -> None:
    """Findings under another fingerprint (another markdown-it, another reader) are not
    used, even where they name a body this catalog holds."""
    facts_file = shipped_copy / _facts.FACTS_FILE
    stored = json.loads(facts_file.read_text())
    for entry in stored["bodies"].values():
        entry["heading"] = "Forged heading"
        entry["links"] = []
    facts_file.write_text(json.dumps(stored))
    assert len(_facts.read(shipped_copy)) == len(stored["bodies"])  # same parser: taken

    stored["parser"] = "0" * 64
    facts_file.write_text(json.dumps(stored))
    assert len(_facts.read(shipped_copy)) == 0
    result = loader.scan(shipped_copy, "c", _facts.read(shipped_copy))
    assert "Forged heading" not in {f.heading for f in result.files.values()}
    assert any(f.links for f in result.files.values())


@pytest.mark.parametrize("content", [b"", b"{not json", b'{"parser": 1}', b"[]", b"\xff\xfe"])
def test_an_unreadable_facts_file_is_ignored(shipped_copy: Path, content: bytes) -> None:
    (shipped_copy / _facts.FACTS_FILE).write_bytes(content)
    known = _facts.read(shipped_copy)
    assert len(known) == 0
    assert loader.scan(shipped_copy, "c", known).problems == []


def test_an_authors_directory_never_uses_a_facts_file(shipped_copy: Path) -> None:
    """`catalog validate DIR` parses everything: a facts file there is not content, and is
    reported like any other file that is not Markdown."""
    problems = [str(p) for p in catalog.check(shipped_copy)]
    assert problems == [
        f"{shipped_copy}/{_facts.FACTS_FILE}: only Markdown (.md) files belong in the catalog"
        " — remove it"
    ]
