"""The build's facts: what a zipapp was built for, in one member the build writes.

``tools/zipapps.py`` writes :data:`FILE` beside this module in the zipapp's site-packages
(``site-packages/kite_skills/launcher/build_info.json``, :data:`MEMBER`), as data: the
platform the file is for, the CPythons it carries binaries for, and the kite-skills version.
Everything that asks "is this a zipapp build, and of what?" reads it through :func:`current`:
the start and the preamble (which Python and machine may run it), ``doctor`` (what it
reports), ``setup`` (how this program is started again) and the bytecode writer (whether the
cache is the zipapp's own). A checkout or an installed wheel has no such member: there
:func:`current` answers None ("not a zipapp build").

Standard library only, and cheap to import: the start reads it before anything is unpacked.
"""

from __future__ import annotations

import json
import os
from typing import Any, NamedTuple

FILE = "build_info.json"
MEMBER = f"site-packages/kite_skills/launcher/{FILE}"
"""Where the build puts it in the archive (the unpacked copy is beside this module)."""


class BuildInfo(NamedTuple):
    """One build's facts (a NamedTuple, not a dataclass: the start reads it before anything
    else is imported, and ``dataclasses`` brings ``inspect``)."""

    platform: str
    """The file it is, a key of ``preamble.PLATFORMS`` ("linux-x86_64")."""
    pythons: tuple[str, ...]
    """The CPython versions whose binaries it carries, oldest first ("3.11", … "3.14")."""
    version: str
    """The kite-skills version it packs."""

    @property
    def accepted(self) -> str:
        """The CPythons it runs on, for a person: "CPython 3.11–3.14"."""
        if len(self.pythons) > 1:
            return f"CPython {self.pythons[0]}–{self.pythons[-1]}"
        return f"CPython {self.pythons[0]}"


def dumps(info: BuildInfo) -> str:
    """The member's text, the same for the same facts (the build is byte-reproducible)."""
    return json.dumps(info._asdict(), indent=2, sort_keys=True) + "\n"


def loads(data: str | bytes) -> BuildInfo:
    """The facts from the member's text."""
    raw = json.loads(data)
    return BuildInfo(str(raw["platform"]), tuple(str(p) for p in raw["pythons"]), raw["version"])


def current() -> BuildInfo | None:
    """The facts of the zipapp this code runs from, or None when it is not a zipapp build (a
    checkout, an installed wheel).

    Read beside this module through the loader that loaded it: from the unpacked copy, or from
    the archive itself when the start ran this module from there (before unpacking)."""
    where = os.path.join(os.path.dirname(__file__), FILE)
    loader: Any = globals().get("__loader__")
    try:
        data = loader.get_data(where) if hasattr(loader, "get_data") else _read(where)
    except OSError:
        return None
    return loads(data)


def _read(path: str) -> bytes:
    with open(path, "rb") as member:
        return member.read()
