"""The tool schemas per generation, as data: ``tools/<generation>.json``, each tool with the
repository, commit and path of the Go source it was transcribed from."""

from __future__ import annotations

import importlib.resources
import json
from typing import Any, Final

GENERATIONS: Final = ("grouped", "legacy", "legacy-oldest")


def load(generation: str) -> list[dict[str, Any]]:
    """The tools of ``generation`` in the real server's registration order."""
    if generation not in GENERATIONS:
        raise ValueError(f"unknown tool generation {generation!r}; one of {', '.join(GENERATIONS)}")
    text = importlib.resources.files(__package__).joinpath("tools", f"{generation}.json")
    tools: list[dict[str, Any]] = json.loads(text.read_text(encoding="utf-8"))["tools"]
    return tools
