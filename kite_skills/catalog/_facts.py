"""What the Markdown parser finds in a file (its first heading, its links and where each prose
link is written), and the copy of those findings the build stores beside the shipped catalog.

The zipapp's catalog never changes, yet every start parsed it again: the parser's import and
the parse were most of what kite-skills added to the SDK's own start-up. So the build writes
``FACTS_FILE`` into the packed catalog: each body's findings keyed by the body's SHA-256,
under a fingerprint of the parser (this package's reader and markdown-it's version). A start
takes the findings of a body found there and parses any other body, so an edited file or
another parser can only cost time, never give a wrong answer. Where each prose link is
written (``sources``) is needed only to render a help page, so a start that parses a body
leaves it to the help page; the stored copy spares the first help answers the parser too.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from . import _markdown
from ._markdown import Link, LinkSource

FACTS_FILE = "markdown-facts.json"


@dataclass(frozen=True)
class Facts:
    heading: str | None
    links: tuple[Link, ...]
    sources: tuple[LinkSource, ...] | None = None  # None: not read yet (a help page parses)


def parse(body: str) -> Facts:
    return Facts(_markdown.first_heading(body), tuple(_markdown.links(body)))


def _digest(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def parser_fingerprint() -> str | None:
    """A digest of the code that produces facts: this package's reader and markdown-it's
    ``__init__`` (which names its version), found without importing markdown-it."""
    spec = importlib.util.find_spec("markdown_it")
    sources = [_markdown.__file__, spec.origin if spec else None]
    digest = hashlib.sha256()
    try:
        for source in sources:
            if source is None:
                return None
            digest.update(Path(source).read_bytes())
    except OSError:
        return None
    return digest.hexdigest()


class KnownFacts:
    """Facts by body digest; ``of()`` parses what it does not hold."""

    def __init__(self, by_digest: dict[str, Facts]) -> None:
        self._by_digest = by_digest

    def __len__(self) -> int:
        return len(self._by_digest)

    def of(self, body: str) -> Facts:
        known = self._by_digest.get(_digest(body)) if self._by_digest else None
        return known if known is not None else parse(body)


def read(root: Traversable | Path) -> KnownFacts:
    """The facts stored at ``root``; none when the file is missing, unreadable, or written
    for another parser."""
    try:
        stored: Any = json.loads(root.joinpath(FACTS_FILE).read_bytes())
        if stored["parser"] != parser_fingerprint():
            return KnownFacts({})
        return KnownFacts(
            {
                digest: Facts(
                    entry["heading"],
                    tuple(Link(*link) for link in entry["links"]),
                    tuple(LinkSource(*source) for source in entry["sources"]),
                )
                for digest, entry in stored["bodies"].items()
            }
        )
    except (OSError, ValueError, KeyError, TypeError):
        return KnownFacts({})


def write(root: Path, bodies: list[str]) -> Path:
    """Store the facts of ``bodies`` at ``root`` (the build does this for the packed catalog)."""
    entries = {}
    for body in bodies:
        facts = parse(body)
        entries[_digest(body)] = {
            "heading": facts.heading,
            "links": [[link.line, link.text, link.target] for link in facts.links],
            "sources": [
                [source.start, source.end, source.words, source.target]
                for source in _markdown.link_sources(body)
            ],
        }
    path = root / FACTS_FILE
    stored = {"parser": parser_fingerprint(), "bodies": dict(sorted(entries.items()))}
    path.write_text(json.dumps(stored, ensure_ascii=False, separators=(",", ":")), "utf-8")
    return path
