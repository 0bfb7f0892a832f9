"""Issue 40 §2: the CLI's command groups each register their parser in short functions (no
``register`` over 60 lines, where ``cli_skills.register`` once held 131), so adding an option
reads as one place, not a page. Read from the source (ast), nothing runs."""

from __future__ import annotations

import ast
from pathlib import Path

import kite_skills.cli

CLI = Path(kite_skills.cli.__file__).parent
MAX_REGISTER_LINES = 60


def register_lengths() -> dict[str, int]:
    """Each function named ``register`` or ``_register_*`` in the CLI, with its lines (its
    ``def`` to its last line, docstring included)."""
    return {
        f"{path.name}:{node.name}": (node.end_lineno or node.lineno) - node.lineno + 1
        for path in sorted(CLI.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        if isinstance(node, ast.FunctionDef)
        and (node.name == "register" or node.name.startswith("_register"))
    }


def test_no_register_is_over_sixty_lines() -> None:
    lengths = register_lengths()
    assert "skills.py:register" in lengths and "setup.py:register" in lengths
    long = {name: n for name, n in lengths.items() if n > MAX_REGISTER_LINES}
    assert long == {}, f"split these into one function per command: {long}"
