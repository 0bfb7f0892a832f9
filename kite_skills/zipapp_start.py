"""The zipapp's start (build.sh puts this file at the archive's root as
``_kite_skills_start.py``; ``__main__.py`` runs it once the Python can read it).

Most starts find this CPython's files unpacked already. Those do here what shiv's bootstrap
would (this file's site-packages on sys.path, its ``.pth`` files read, the entry point run),
without reading the archive's index a second and third time (zipimport has it: this module
came from it) and without compiling the preamble and shiv's bootstrap from the archive, where
no bytecode can be cached; the preamble's checks run from the unpacked copy, whose bytecode
is. About 20 ms of a warm start. Every other start, and any SHIV_* setting but SHIV_ROOT,
goes the long way: the preamble checks the machine and unpacks, then shiv's bootstrap runs.

Standard library only: nothing from the bundle can be imported before site-packages is found.
"""

from __future__ import annotations

import json
import os
import sys
import zipimport
from collections.abc import Mapping
from importlib import import_module
from pathlib import Path
from typing import Any

# build.sh replaces this line with the platform and interpreters the file was built for,
# e.g. {"platform": "linux-x86_64", "pythons": ["3.11", "3.12", "3.13", "3.14"]}.
TARGET: dict[str, Any] | None = None
# In site-packages: every file this CPython ("cp312") uses is there.
UNPACKED = ".kite-skills-unpacked-{tag}"
SITE_DIRECTORIES = ("site-packages", "dist-packages")


def shiv_root(environment: Mapping[str, Any], environ: Mapping[str, str]) -> Path:
    """Where shiv unpacks, computed as shiv's bootstrap does."""
    root = environ.get("SHIV_ROOT") or environment.get("root")
    if root:
        if root.startswith("$"):
            root = environ.get(root[1:], root[1:])
        return Path(root).expanduser()
    return Path("~/.shiv").expanduser()


def extraction_of(archive: str, environment: Mapping[str, Any], root: Path) -> Path:
    """The directory shiv unpacks this archive into, below ``root``."""
    return root / f"{Path(archive).resolve().name}_{environment['build_id']}"


def asks_shiv(environ: Mapping[str, str]) -> bool:
    """Whether a SHIV_* setting other than SHIV_ROOT asks shiv's bootstrap for something."""
    return any(name.startswith("SHIV_") and name != "SHIV_ROOT" for name in environ)


def add_site_packages(site_packages: Path) -> None:
    """Put ``site_packages`` on sys.path as shiv's bootstrap does: ``site.addsitedir`` (which
    reads its ``.pth`` files), with what it added moved ahead of the interpreter's own
    site-packages."""
    import site

    length = len(sys.path)
    sites = [i for i, part in enumerate(sys.path) if Path(part).stem in SITE_DIRECTORIES]
    index = (sites[0] if sites else None) or length  # shiv's `or`: index 0 counts as none
    site.addsitedir(str(site_packages))
    sys.path = sys.path[:index] + sys.path[length:] + sys.path[index:length]


def main() -> None:
    archive = sys.argv[0]
    environment = json.loads(zipimport.zipimporter(archive).get_data("environment.json"))
    root = shiv_root(environment, os.environ)
    extraction = extraction_of(archive, environment, root)
    site_packages = extraction / "site-packages"
    unpacked = site_packages / UNPACKED.format(tag=f"cp{sys.version_info[0]}{sys.version_info[1]}")
    if asks_shiv(os.environ) or not unpacked.is_file():
        import _kite_skills_preamble  # type: ignore[import-not-found]  # the archive's copy

        _kite_skills_preamble.main(TARGET, archive, environment, root, extraction, unpacked)
        import _bootstrap  # type: ignore[import-not-found]  # shiv's, at the archive's root

        _bootstrap.bootstrap()
        return
    add_site_packages(site_packages)
    from kite_skills import preamble  # the unpacked copy: its bytecode is cached

    preamble.refuse_unfit(TARGET, archive)
    preamble.hold_and_prune(root, extraction, prune=os.environ.get(preamble.KEEP_CACHE) != "1")
    module, _, name = environment["entry_point"].partition(":")
    sys.exit(getattr(import_module(module), name)())
