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
import re
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KITE_MCP_HINTS = ("mcp.kite.trade", "kite-mcp", "zerodha")
"""Text that marks an entry as a Kite MCP server (Zerodha's hosted one, or a local one)."""
OUR_NAMES = ("kite-skills", "kite-sandbox")
JSONC = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/|,(\s*[}\]])', re.S)


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
    def kite_mcp(self) -> bool:
        """Whether it is a Kite MCP server."""
        if self.ours:
            return False
        text = (self.name + " " + json.dumps(self.value)).lower()
        return any(hint in text for hint in KITE_MCP_HINTS) or "kite" in self.name.lower()


def read_jsonc(data: str) -> Any:
    """JSON, also with comments and trailing commas (VS Code's mcp.json may have them)."""
    try:
        return json.loads(data)
    except ValueError:
        return json.loads(JSONC.sub(lambda m: m.group(1) or m.group(2) or "", data))


def _servers(config: Any, key: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(config, dict):
        return
    found = config.get(key)
    if isinstance(found, dict):
        yield from ((n, v) for n, v in found.items() if isinstance(v, dict))
    for project in (config.get("projects") or {}).values():  # Claude Code's per-project ones
        if isinstance(project, dict) and isinstance(project.get(key), dict):
            yield from ((n, v) for n, v in project[key].items() if isinstance(v, dict))


def entries(client: str, title: str, path: Path, key: str) -> tuple[list[Entry], str | None]:
    """The server entries in ``path`` (none when it is missing), or why it cannot be read."""
    try:
        config = read_jsonc(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [], None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not JSON"
        return [], f"cannot read it ({why})"
    return [Entry(title, path, n, v) for n, v in _servers(config, key)], None


def _exists(command: str, env: Mapping[str, str]) -> bool:
    if os.path.isabs(command):
        return os.path.isfile(command)
    return shutil.which(command, path=env.get("PATH")) is not None


def _same(word: str) -> str:
    return os.path.realpath(word) if os.path.isabs(word) else word


def check_entry(
    entry: Entry, here: tuple[str, ...], env: Mapping[str, str], fix: str
) -> tuple[str, list[Finding]]:
    """What ``entry`` (one of ours) starts, as a doctor line, and what is wrong with it: an
    interpreter or a file that is not there any more."""
    words = entry.words
    who = f"{entry.client}'s '{entry.name}'"
    if not words:
        return "no command", [Finding(f"{who} has no command — {fix}", True)]
    gone = [] if _exists(words[0], env) else [words[0]]
    gone += [w for w in words[1:2] if w.endswith(".pyz") and not os.path.isfile(w)]
    findings = [
        Finding(f"{who} starts {word}, which is not there any more — {fix}", True) for word in gone
    ]
    same = [_same(w) for w in words[: len(here)]] == [_same(w) for w in here]
    what = "this file" if same else "another kite-skills: " + " ".join(words)
    return what, findings
