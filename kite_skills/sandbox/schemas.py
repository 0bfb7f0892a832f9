"""The tool schemas the sandbox serves, per generation: the recorded ones that
:mod:`kite_skills.kite_schemas` owns (each tool citing the Go source it was transcribed from),
so the sandbox serves exactly what ``catalog validate`` checks recipes against."""

from __future__ import annotations

from typing import Any, Final

from .. import kite_schemas

GENERATIONS: Final = kite_schemas.GENERATIONS


def load(generation: str) -> list[dict[str, Any]]:
    """The tools of ``generation`` in the real server's registration order."""
    if generation not in GENERATIONS:
        raise ValueError(f"unknown tool generation {generation!r}; one of {', '.join(GENERATIONS)}")
    return kite_schemas.raw(generation)
