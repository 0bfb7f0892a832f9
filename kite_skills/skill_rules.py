"""What a skill's name and description may be: one owner for every kind of skill.

A skill is named and described by the same rules (the Agent Skills specification's) whether it
ships in the catalog (its ``SKILL.md`` frontmatter, checked by :mod:`kite_skills.catalog.loader`)
or is written into the store by an agent or a person (:mod:`kite_skills.store._validate`). Both
libraries ask this module and word their own messages; neither keeps a copy of a rule.
"""

from __future__ import annotations

import re
from typing import Final

MAX_NAME_CHARS: Final = 64
MAX_DESCRIPTION_CHARS: Final = 1024
NAME_PATTERN: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
"""Lowercase letters and digits in groups joined by single hyphens (``re.fullmatch`` it)."""
NAME_SHAPE: Final = "lowercase letters, digits and single hyphens"
""":data:`NAME_PATTERN` in words."""
NAME_CHARS: Final = f"1–{MAX_NAME_CHARS} {NAME_SHAPE}"
"""What a name is made of, as messages say it."""
NAME_RULE: Final = f"use {NAME_CHARS} (e.g. 'compare-funds')"
"""The name rule as the store's refusals say it."""


def is_skill_name(name: str) -> bool:
    """Whether ``name`` is a valid skill name: the pattern, at most :data:`MAX_NAME_CHARS`."""
    return len(name) <= MAX_NAME_CHARS and NAME_PATTERN.fullmatch(name) is not None
