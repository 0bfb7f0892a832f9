"""Values the catalog library hands out. All frozen; JSON shapes via ``to_dict``."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

PageKind = Literal["root", "category", "recipe"]
ChildLabel = Literal["category", "recipe"]


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with a catalog, at ``path:line`` (line 0: the file as a whole)."""

    path: str
    line: int
    code: str
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


_HELP_CHILD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "key": {"type": "string"},
        "label": {"type": "string", "enum": list(get_args(ChildLabel))},
        "description": {"type": "string"},
    },
    "required": ["key", "label", "description"],
}

HELP_PAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "key": {"type": "string"},
        "kind": {"type": "string", "enum": list(get_args(PageKind))},
        "title": {"type": "string"},
        "description": {"type": "string"},
        "parent": {"type": "string"},
        "text": {"type": "string", "description": "The page's Markdown, links shown as keys"},
        "children": {"type": "array", "items": _HELP_CHILD_SCHEMA},
    },
    "required": ["key", "kind", "title", "description", "text", "children"],
}
"""The JSON schema of :meth:`HelpPage.to_dict` (the ``help`` tool's output schema): written
beside the dict it describes, and checked against every page of the catalog
(tests/catalog/test_help_schema.py)."""


@dataclass(frozen=True)
class HelpChild:
    key: str
    label: ChildLabel
    description: str

    def to_dict(self) -> dict[str, str]:
        return {"key": self.key, "label": self.label, "description": self.description}


@dataclass(frozen=True)
class HelpPage:
    """One help page: a category's entry text and direct children, or a recipe's steps."""

    key: str
    kind: PageKind
    title: str
    description: str
    text: str
    parent: str | None = None
    children: tuple[HelpChild, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The page's JSON shape, described by :data:`HELP_PAGE_SCHEMA` (the ``help`` tool's
        structured result; its text is :meth:`to_markdown`)."""
        data: dict[str, Any] = {
            "key": self.key,
            "kind": self.kind,
            "title": self.title,
            "description": self.description,
        }
        if self.parent is not None:
            data["parent"] = self.parent
        data["text"] = self.text
        data["children"] = [child.to_dict() for child in self.children]
        return data

    def to_markdown(self) -> str:
        """The page as a person or a model reads it."""
        parts = [self.text.strip("\n")]
        if self.children:
            lines = ["## Pages here", ""]
            lines += [f"- `{c.key}` ({c.label}) — {c.description}" for c in self.children]
            parts.append("\n".join(lines))
        if self.parent is not None:
            parts.append(f"Up: `{self.parent}`")
        return "\n\n".join(p for p in parts if p) + "\n"


@dataclass(frozen=True)
class ManifestEntry:
    uri: str
    digest: str
    size: int

    def to_dict(self) -> dict[str, Any]:
        return {"uri": self.uri, "digest": self.digest, "size": self.size}


@dataclass(frozen=True)
class SkillEntry:
    """A SEP-2640 skill entry: the SKILL.md URI, verbatim frontmatter, every file."""

    uri: str
    name: str
    frontmatter: dict[str, Any] = field(hash=False)
    resources: tuple[ManifestEntry, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "frontmatter": copy.deepcopy(self.frontmatter),
            "resources": [entry.to_dict() for entry in self.resources],
        }


@dataclass(frozen=True)
class CatalogResource:
    """A catalog file as an MCP resource."""

    uri: str
    name: str
    title: str | None
    description: str | None
    size: int
    mime_type: str = "text/markdown"

    def to_dict(self) -> dict[str, Any]:
        """The MCP ``Resource`` shape (camelCase keys; absent fields left out): the one
        definition of a catalog file's listing, in ``resources/list`` (as the SDK's
        ``Resource``) and in ``resources/directory/read`` (as it is)."""
        data: dict[str, Any] = {"uri": self.uri, "name": self.name}
        if self.title is not None:
            data["title"] = self.title
        if self.description is not None:
            data["description"] = self.description
        data["mimeType"] = self.mime_type
        data["size"] = self.size
        return data


DIRECTORY_MIME_TYPE = "inode/directory"


@dataclass(frozen=True)
class DirectoryResource:
    """A directory inside a skill (the skill root, a supporting or a nested skill's directory),
    as a ``resources/directory/read`` child. Its URI has no trailing slash."""

    uri: str
    name: str
    mime_type: str = DIRECTORY_MIME_TYPE

    def to_dict(self) -> dict[str, Any]:
        return {"uri": self.uri, "name": self.name, "mimeType": self.mime_type}


@dataclass(frozen=True)
class DirectoryPage:
    """One page of a directory's direct children, sorted by URI; ``next_cursor`` is set
    when more pages follow."""

    uri: str
    resources: tuple[CatalogResource | DirectoryResource, ...]
    next_cursor: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"resources": [r.to_dict() for r in self.resources]}
        if self.next_cursor is not None:
            data["nextCursor"] = self.next_cursor
        return data
