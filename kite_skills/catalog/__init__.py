"""The built-in catalog: load and validate it, navigate help pages, build skill entries.

A pure library: no MCP import. ``load()`` reads the catalog shipped in the installed
package (``importlib.resources``), never the working directory.
"""

from ._hidden import HiddenConstruct, HiddenKind, hidden_constructs
from .calls import Call, Param, Unavailable, extract
from .catalog import Catalog, check, load, validate
from .loader import prompt_name
from .model import (
    CatalogResource,
    DirectoryPage,
    DirectoryResource,
    HelpChild,
    HelpPage,
    ManifestEntry,
    Problem,
    SkillEntry,
)
from .prompts import RecipePrompt, recipe_prompts

__all__ = [
    "Call",
    "Catalog",
    "CatalogResource",
    "DirectoryPage",
    "DirectoryResource",
    "HelpChild",
    "HelpPage",
    "HiddenConstruct",
    "HiddenKind",
    "ManifestEntry",
    "Param",
    "Problem",
    "RecipePrompt",
    "SkillEntry",
    "Unavailable",
    "check",
    "extract",
    "hidden_constructs",
    "load",
    "prompt_name",
    "recipe_prompts",
    "validate",
]
