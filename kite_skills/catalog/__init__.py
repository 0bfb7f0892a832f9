"""The built-in catalog: load and validate it, navigate help pages, build skill entries.

A pure library: no MCP import. ``load()`` reads the catalog shipped in the installed
package (``importlib.resources``), never the working directory.
"""

from .catalog import Catalog, check, load
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

__all__ = [
    "Catalog",
    "CatalogResource",
    "DirectoryPage",
    "DirectoryResource",
    "HelpChild",
    "HelpPage",
    "ManifestEntry",
    "Problem",
    "SkillEntry",
    "check",
    "load",
]
