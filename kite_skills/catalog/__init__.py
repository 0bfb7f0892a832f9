"""The built-in catalog: load and validate it, navigate help pages, build skill entries.

A pure library: no MCP import. ``load()`` reads the catalog shipped in the installed
package (``importlib.resources``), never the working directory. ``check()`` and
``validate()`` also check every Kite MCP tool call the pages write (``extract_calls``)
against the recorded schemas of the generations each page claims (``kite_schemas``).

What only a check or a review uses (``extract_calls`` and its values, ``hidden_constructs``)
is imported at first use: a server start needs neither them nor the recorded Kite tool
schemas they read as they load.
"""

import importlib
from typing import TYPE_CHECKING, Any

from ._schema import MAX_KEY_BYTES, USER_PROMPT_PREFIX
from .catalog import Catalog, check, load, validate
from .loader import prompt_name, skill_names
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

if TYPE_CHECKING:
    from ._hidden import HiddenConstruct, HiddenKind, hidden_constructs
    from .calls import Call, Param, Unavailable
    from .calls import extract as extract_calls

# name -> (module, its name there), for the names imported at first use
_AT_FIRST_USE = {
    "HiddenConstruct": ("._hidden", "HiddenConstruct"),
    "HiddenKind": ("._hidden", "HiddenKind"),
    "hidden_constructs": ("._hidden", "hidden_constructs"),
    "Call": (".calls", "Call"),
    "Param": (".calls", "Param"),
    "Unavailable": (".calls", "Unavailable"),
    "extract_calls": (".calls", "extract"),
}


def __getattr__(name: str) -> Any:
    if name not in _AT_FIRST_USE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _AT_FIRST_USE[name]
    value = getattr(importlib.import_module(module, __name__), attribute)
    globals()[name] = value  # asked once
    return value


__all__ = [
    "HELP_PAGE_SCHEMA",
    "MAX_KEY_BYTES",
    "USER_PROMPT_PREFIX",
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
    "skill_names",
    "validate",
]
