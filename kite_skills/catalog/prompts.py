"""Recipes as prompts (client slash commands): one per recipe, named from its path.

Pure: computed from a loaded ``Catalog`` through its public API. The MCP adapter
(``kite_skills.server.prompts``) turns these into protocol objects.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from . import _schema
from .catalog import Catalog
from .loader import is_recipe, prompt_name


@dataclass(frozen=True)
class RecipePrompt:
    """One recipe as a prompt: ``orders/prepare.md`` → ``orders-prepare``."""

    name: str
    title: str | None
    description: str | None
    uri: str  # the recipe's resource, e.g. skill://orders/prepare.md
    mime_type: str  # as resources/list gives the resource
    raw: bytes  # the recipe's original bytes, as resources/read serves them

    @property
    def text(self) -> str:
        return self.raw.decode("utf-8")  # the loader refuses files that are not UTF-8


def recipe_prompts(catalog: Catalog) -> tuple[RecipePrompt, ...]:
    """Every recipe (:func:`~.loader.is_recipe`) of every skill, sorted by name."""
    skill_dirs = {
        posixpath.dirname(skill.uri.removeprefix(_schema.URI_SCHEME)) for skill in catalog.skills
    }
    prompts = []
    for resource in catalog.resources():
        path = resource.uri.removeprefix(_schema.URI_SCHEME)
        if not is_recipe(path, skill_dirs):
            continue
        raw = catalog.read(resource.uri)
        assert raw is not None  # listed by the same catalog
        prompts.append(
            RecipePrompt(
                prompt_name(path),
                resource.title,
                resource.description or resource.title,
                resource.uri,
                resource.mime_type,
                raw,
            )
        )
    return tuple(sorted(prompts, key=lambda p: p.name))
