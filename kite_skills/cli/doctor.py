"""What ``kite-skills doctor`` finds in the MCP clients' configs: which of them start this
file (or another kite-skills), whether each configured interpreter and file still exist, and
whether a Kite MCP server sits beside it (the recipes call its tools).

Each finding is a :class:`Finding`: an error (a config that cannot start kite-skills any
more: doctor exits 1) or a warning (something to set up); the doctor's verdict lists them,
numbered, each with what to do, or says "all good".
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KITE_MCP_HINTS = ("mcp.kite.trade", "kite-mcp", "zerodha")
"""Text that marks an entry as a Kite MCP server (Zerodha's hosted one, or a local one)."""
OUR_NAMES = ("kite-skills", "kite-sandbox")


@dataclass(frozen=True)
class Finding:
    """One thing to fix: ``error`` when a client cannot start kite-skills as configured."""

    text: str
    error: bool = False


@dataclass(frozen=True)
class Entry:
    """One server entry in a client's config: its name and what it starts."""

    client: str
    config: Path
    name: str
    value: dict[str, Any]

    @property
    def words(self) -> list[str]:
        command = self.value.get("command")
        args = self.value.get("args")
        if not isinstance(command, str):
            return []
        return (
            [command, *(a for a in args if isinstance(a, str))]
            if isinstance(args, list)
            else [command]
        )

    @property
    def ours(self) -> bool:
        """Whether it starts some kite-skills (by its name, or a kite-skills file or command)."""
        return self.name in OUR_NAMES or any(
            Path(word).name.startswith("kite-skills") or word == "kite_skills"
            for word in self.words[:3]
        )

    @property
    def guards(self) -> bool:
        """Whether it is ``kite-skills guard`` in front of a Kite MCP server."""
        words = self.words
        return self.ours and words[program_words(words) : program_words(words) + 1] == ["guard"]

    @property
    def kite_mcp(self) -> bool:
        """Whether it is a Kite MCP server."""
        if self.ours:
            return False
        text = (self.name + " " + json.dumps(self.value)).lower()
        return any(hint in text for hint in KITE_MCP_HINTS) or "kite" in self.name.lower()


def _servers(config: Any, key: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(config, dict):
        return
    found = config.get(key)
    if isinstance(found, dict):
        yield from ((n, v) for n, v in found.items() if isinstance(v, dict))
    for project in (config.get("projects") or {}).values():  # Claude Code's per-project ones
        if isinstance(project, dict) and isinstance(project.get(key), dict):
            yield from ((n, v) for n, v in project[key].items() if isinstance(v, dict))


def entries(title: str, path: Path, config: Any, key: str) -> list[Entry]:
    """The server entries in a client's parsed config (none when there is no config)."""
    return [Entry(title, path, n, v) for n, v in _servers(config, key)]


def _exists(command: str, env: Mapping[str, str]) -> bool:
    if os.path.isabs(command):
        return os.path.isfile(command)
    return shutil.which(command, path=env.get("PATH")) is not None


def _same(word: str) -> str:
    return os.path.realpath(word) if os.path.isabs(word) else word


def program_words(words: list[str]) -> int:
    """How many of an entry's first words start kite-skills (the interpreter and the file,
    ``python -m kite_skills``, or a lone command): the rest are its arguments."""
    if words[1:3] == ["-m", "kite_skills"]:
        return 3
    if len(words) > 1 and Path(words[1]).name.startswith("kite-skills"):
        return 2
    return 1


def starts(words: list[str], here: tuple[str, ...]) -> bool:
    """Whether an entry's words start the program ``here`` (the same interpreter and file)."""
    mine = words[: program_words(words)]
    return [_same(w) for w in mine] == [_same(w) for w in here]


@dataclass(frozen=True)
class State:
    """One entry of ours, as doctor shows it: ``text`` its state in words, ``here`` whether
    it starts this file, ``gone`` whether its interpreter or file is not there any more,
    ``problem`` whether it cannot start for another reason (no command)."""

    text: str
    here: bool
    gone: bool
    problem: bool = False


def check_entry(entry: Entry, here: tuple[str, ...], env: Mapping[str, str]) -> State:
    """What ``entry`` (one of ours) starts, and whether its interpreter and file are there."""
    words = entry.words
    if not words:
        return State("no command", here=False, gone=False, problem=True)
    shown = " ".join(words)
    gone = [] if _exists(words[0], env) else [words[0]]
    gone += [w for w in words[1:2] if w.endswith(".pyz") and not os.path.isfile(w)]
    if gone:
        return State(
            f"starts {shown}, but {' and '.join(gone)} {'is' if len(gone) == 1 else 'are'} "
            "not there any more",
            here=False,
            gone=True,
        )
    if starts(words, here):
        return State("starts this file", here=True, gone=False)
    return State(f"starts another kite-skills: {shown}", here=False, gone=False)
