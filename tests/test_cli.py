"""`kite-skills help` and `kite-skills catalog …` as a person runs them (in-process)."""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path

import pytest

from kite_skills import __version__
from kite_skills.cli import main

from .catalog.conftest import FILES, write_catalog


def test_help_prints_the_root_page(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["help"]) == 0
    out = capsys.readouterr().out
    assert "- `/orders` (category) — " in out
    assert "Up:" not in out


def test_help_prints_a_recipe_with_its_parent(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["help", "/orders/reconcile"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# ")
    assert out.rstrip().endswith("Up: `/orders`")


def test_unknown_key_prints_guidance_to_stderr_and_exits_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["help", "/orders/unknown"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Nearest page: /orders" in captured.err
    assert "- /orders/reconcile (recipe) — " in captured.err


def test_oversized_key_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["help", "/" + "x" * 1024]) == 1
    assert "keys are at most 1024 UTF-8 bytes" in capsys.readouterr().err


def test_validate_the_embedded_catalog(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "validate"]) == 0
    assert "the embedded catalog: OK (7 skills)" in capsys.readouterr().out


def test_validate_an_authors_directory_lists_every_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = dict(FILES)
    del files["index.md"]
    files["orders/prepare.md"] = b"---\ndescription: 12\n---\n# Prepare\n[x](gone.md)\n"
    root = write_catalog(tmp_path / "cat", files)
    assert main(["catalog", "validate", str(root)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"{root}/index.md: the root help page is missing — add index.md",
        f"{root}/orders/prepare.md:2: 'description' must be non-empty text (got int) — write "
        "it on one line, quoted if it looks like a number, date or yes/no",
        f"{root}/orders/prepare.md:5: link 'gone.md' is broken — no such catalog file",
        f"3 problem(s) in {root}",
    ]


def test_validate_a_good_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_catalog(tmp_path / "cat", FILES)
    assert main(["catalog", "validate", str(root)]) == 0
    assert f"{root}: OK (3 skills)" in capsys.readouterr().out


def test_catalog_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 7
    uri, name, files, digest = lines[3].split("\t")
    assert (uri, name) == ("skill://orders/SKILL.md", "orders")
    raw = resources.files("skills_catalog").joinpath("orders/SKILL.md").read_bytes()
    assert digest == "sha256:" + hashlib.sha256(raw).hexdigest()
    assert files.endswith(" files")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"kite-skills {__version__}"
