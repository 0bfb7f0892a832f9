"""The built-in catalog: load and validate it, navigate help pages, build skill entries.

A pure library: no MCP import. ``load()`` reads the catalog shipped in the installed
package (``importlib.resources``), never the working directory. ``check()`` and
``validate()`` also check every Kite MCP tool call the pages write (``extract_calls``)
against the recorded schemas of the generations each page claims (``kite_schemas``).
"""

from ._hidden import HiddenConstruct, HiddenKind, hidden_constructs
from .calls import Call, Param, Unavailable
from .calls import extract as extract_calls
from .catalog import Catalog, check, load, validate
from .loader import prompt_name
from .model import (
    HELP_PAGE_SCHEMA,
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
    "HELP_PAGE_SCHEMA",
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
    "extract_calls",
    "hidden_constructs",
    "load",
    "prompt_name",
    "recipe_prompts",
    "validate",
]
