"""`kite-skills help` and `kite-skills catalog …` as a person runs them (in-process)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
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
    assert "the embedded catalog: OK (8 skills)" in capsys.readouterr().out


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
        f"3 problems in {root}",
    ]


def test_validate_a_good_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_catalog(tmp_path / "cat", FILES)
    assert main(["catalog", "validate", str(root)]) == 0
    assert f"{root}: OK (3 skills)" in capsys.readouterr().out


def test_catalog_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 8
    uri, name, files, digest = lines[4].split("\t")
    assert (uri, name) == ("skill://orders/SKILL.md", "orders")
    raw = resources.files("skills_catalog").joinpath("orders/SKILL.md").read_bytes()
    assert digest == "sha256:" + hashlib.sha256(raw).hexdigest()
    assert files.endswith(" files")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"kite-skills {__version__}"


def test_the_server_collects_garbage_again_once_the_mcp_stack_has_loaded(tmp_path: Path) -> None:
    """The cyclic collector is off while the server loads (a tenth of a start); the objects
    loaded then are frozen out of its scans, and it must be on again for what requests
    create, or a long-running server would never free a reference cycle."""
    probe = (
        "import gc, sys\n"
        "from kite_skills.cli import main\n"
        "sys.argv = ['kite-skills']\n"
        "code = main()\n"
        "print(code, gc.isenabled(), gc.get_freeze_count())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        stdin=subprocess.DEVNULL,  # stdin at its end: the server stops once it has started
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "KITE_SKILLS_DB": str(tmp_path / "s.db")},
    )
    assert result.returncode == 0, result.stderr
    code, enabled, frozen = result.stdout.split()
    assert (code, enabled) == ("0", "True")
    assert int(frozen) > 50_000  # the MCP stack's objects, out of every later scan


def test_help_with_a_near_miss_says_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["help", "orders"]) == 2
    err = capsys.readouterr().err
    assert "Did you mean /orders (Orders)?" in err
