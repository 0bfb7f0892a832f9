"""The loaded catalog: help pages, skill entries and resources, all built from the files."""

from __future__ import annotations

import hashlib
import posixpath
import re
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path

from ..errors import CatalogError, HelpKeyTooLong, UnknownHelpKey
from . import _facts, _markdown, _schema
from .directory import PAGE_SIZE, DirectoryIndex
from .loader import CatalogFile, Scan, embedded_root, key_of, resolve_link, scan, under
from .model import (
    CatalogResource,
    ChildLabel,
    DirectoryPage,
    HelpChild,
    HelpPage,
    ManifestEntry,
    PageKind,
    Problem,
    SkillEntry,
)

EMBEDDED_LABEL = "skills_catalog"

_SURE = 0.9  # at least this close, the key is a typo of that page
_WORD = re.compile(r"[a-z0-9][a-z0-9_-]{2,39}")  # a word worth searching the pages for


def check(root: Traversable | Path | None = None, label: str | None = None) -> list[Problem]:
    """Every problem of the catalog at ``root`` (default: the embedded one), sorted: the
    files' own and, for ``catalog validate`` and the build, every tool call a page writes
    checked against the recorded schemas of the generations it claims (``load()`` leaves
    the calls to them: a start-up has no use for the schemas)."""
    from ._callcheck import call_problems  # the schemas: only a check needs them

    result = _scan(root, label)
    return sorted(result.problems + call_problems(result))


def load(root: Traversable | Path | None = None, label: str | None = None) -> Catalog:
    """Load and validate a catalog; raise one ``CatalogError`` listing every problem."""
    result = _scan(root, label)
    if result.problems:
        raise CatalogError(result.problems)
    return Catalog(result)


def validate(root: Traversable | Path | None = None, label: str | None = None) -> Catalog:
    """``load()`` for an author or the build: also checks every tool call the pages write
    (``check()``); raises one ``CatalogError`` listing every problem."""
    from ._callcheck import call_problems

    result = _scan(root, label)
    problems = sorted(result.problems + call_problems(result))
    if problems:
        raise CatalogError(problems)
    return Catalog(result)


def write_facts(root: Path) -> Path:
    """Store the parser's findings for the catalog at ``root`` beside it (the build does this
    for the catalog it packs), so that loading it parses nothing; returns the file written."""
    return _facts.write(root, [file.body for file in scan(root, str(root)).files.values()])


def _scan(root: Traversable | Path | None, label: str | None) -> Scan:
    if root is None:
        embedded = embedded_root()
        return scan(embedded, label or EMBEDDED_LABEL, _facts.read(embedded))
    return scan(root, label or str(root))


@dataclass(frozen=True)
class _Node:
    key: str
    kind: PageKind
    path: str  # the file, or for a supporting directory the directory
    parent: str | None
    title: str
    description: str
    body: str


class Catalog:
    """A validated catalog. Build it with ``load()``."""

    def __init__(self, result: Scan) -> None:
        self._files = result.files
        self._paths = sorted(self._files)
        skill_dirs = result.skill_directories
        self._nodes: dict[str, _Node] = {}
        self._children: dict[str, list[str]] = {}
        self._headings: dict[str, str | None] = {}
        for path in sorted(self._files):
            self._add_file(self._files[path])
        for directory in sorted(result.directories - skill_dirs):
            self._add_supporting(directory)
        self._skills = tuple(self._entry(d) for d in sorted(skill_dirs, key=_skill_uri))
        self._skills_by_uri = {s.uri: s for s in self._skills}
        self._resources = self._make_resources()
        self._resources_by_uri = {r.uri: r for r in self._resources}
        self._directories = DirectoryIndex(result.directories, skill_dirs, self._resources)

    # -- help navigation ----------------------------------------------------------------

    def help(self, key: str | None = None) -> HelpPage:
        """The page at ``key``; raises ``HelpKeyTooLong`` or ``UnknownHelpKey``.

        Worked out on each call (an unknown key's nearest page, similar keys and the pages
        mentioning it take ~10 ms): a caller that asks often keeps the answers itself, as the
        server's ``help`` tool does (kite_skills/server/tools.py ``HelpTool``)."""
        key = key or "/"
        if len(key.encode("utf-8")) > _schema.MAX_KEY_BYTES:
            raise HelpKeyTooLong(len(key.encode("utf-8")), _schema.MAX_KEY_BYTES)
        lookup = key[:-1] if len(key) > 1 and key.endswith("/") else key
        node = self._nodes.get(lookup)
        if node is None:
            nearest = self._page(self._nodes[self._nearest(lookup)])
            scored = self._similar(lookup)
            sure = bool(scored) and scored[0][0] >= _SURE  # a typo: the pages are noise
            mentions = () if sure else self.mentioning(lookup)
            similar = tuple(self._as_child(k) for _, k in scored)
            raise UnknownHelpKey(key, nearest, similar, mentions)
        return self._page(node)

    def similar(self, key: str) -> tuple[HelpChild, ...]:
        """Up to three pages whose key looks like ``key`` (``orders``, ``/order`` and
        ``/Orders`` all give ``/orders``; ``/prepare`` gives ``/orders/prepare``)."""
        return tuple(self._as_child(k) for _, k in self._similar(key))

    def _similar(self, key: str) -> list[tuple[float, str]]:
        """The near misses of ``key`` as :mod:`kite_skills.suggest` judges them, by the whole
        key or by its last part (``/prepare`` → ``/orders/prepare``); a word of a page's last
        part (``/funds`` → ``/funds-and-margins``) counts as just near enough."""
        from .. import suggest  # only an unknown key needs it: a server start imports no more

        wanted = "/" + key.strip().strip("/").lower()
        if len(wanted) > suggest.MAX_WORD_CHARS:
            return []
        leaf = wanted.rsplit("/", 1)[-1]
        whole, last = suggest.Likeness(wanted), suggest.Likeness(leaf)
        scored: list[tuple[float, str]] = []
        for candidate in self._nodes:
            if candidate == "/" or candidate == key:
                continue
            own_leaf = candidate.rsplit("/", 1)[-1]
            score = suggest.CUTOFF if leaf and leaf in own_leaf.split("-") else 0.0
            score = max(score, whole.score(candidate), last.score(own_leaf))
            if score > 0:
                scored.append((score, candidate))
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        return scored[: suggest.MAX_OFFERED]

    def mentioning(self, key: str) -> tuple[HelpChild, ...]:
        """Up to five pages whose text mentions the last word of ``key`` (``/funds``: the
        pages that talk about funds), those that mention it most first; the root page, which
        names every topic, is left out."""
        word = key.strip().strip("/").rsplit("/", 1)[-1].lower()
        if not _WORD.fullmatch(word):
            return ()
        pattern = re.compile(rf"(?<![\w-]){re.escape(word)}", re.IGNORECASE)
        counts: list[tuple[int, str]] = []
        for node in self._nodes.values():
            if node.kind == "root":
                continue
            head = len(pattern.findall(f"{node.title}\n{node.description}"))
            hits = 3 * head + len(pattern.findall(node.body))
            if hits:
                counts.append((hits, node.key))
        counts.sort(key=lambda pair: (-pair[0], pair[1]))
        return tuple(self._as_child(k) for _, k in counts[:5])

    def _as_child(self, key: str) -> HelpChild:
        node = self._nodes[key]
        label: ChildLabel = "recipe" if node.kind == "recipe" else "category"
        return HelpChild(key, label, node.title)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(sorted(self._nodes))

    def _nearest(self, key: str) -> str:
        candidate = key
        while "/" in candidate.strip("/"):
            candidate = candidate.rsplit("/", 1)[0]
            if candidate in self._nodes:
                return candidate
        return "/"

    def _page(self, node: _Node) -> HelpPage:
        children = tuple(
            HelpChild(c.key, _label(c.kind), c.description)
            for c in (self._nodes[k] for k in sorted(self._children.get(node.key, [])))
        )
        text = node.body
        if node.kind != "category" or node.path.endswith(".md"):
            text = self._keyed_links(self._files[node.path])
        return HelpPage(
            node.key, node.kind, node.title, node.description, text, node.parent, children
        )

    def _keyed_links(self, file: CatalogFile) -> str:
        def as_key(text: str, target: str) -> str | None:
            if not _markdown.is_relative(target):
                return None
            resolved = resolve_link(file.path, target)
            if resolved is None or resolved not in self._files:
                return None
            return f"{text} (`{key_of(resolved)}`)"

        return _markdown.rewrite_links(file.body, as_key, file.sources)

    def _add_file(self, file: CatalogFile) -> None:
        meta = file.frontmatter or {}
        heading = self._headings[file.path] = file.heading
        key = key_of(file.path)
        if file.path == _schema.ROOT_PAGE:
            node = _Node(key, "root", file.path, None, heading or "Catalog", "", file.body)
        else:
            kind: PageKind = "category" if file.is_skill else "recipe"
            description = str(meta.get("description") or heading or "")
            title = heading or str(meta.get("name") or key)
            parent = _parent_key(file.directory if file.is_skill else file.path)
            node = _Node(key, kind, file.path, parent, title, description.strip(), file.body)
            self._children.setdefault(parent, []).append(key)
        self._nodes[key] = node

    def _add_supporting(self, directory: str) -> None:
        key = key_of(directory)
        parent = _parent_key(directory)
        count = sum(1 for p in self._files if posixpath.dirname(p) == directory)
        name = posixpath.basename(directory)
        body = f"# {name}\n\nSupporting pages of `{parent}`.\n"
        description = f"Supporting pages ({count})"
        self._nodes[key] = _Node(key, "category", directory, parent, name, description, body)
        self._children.setdefault(parent, []).append(key)

    # -- skills and resources -------------------------------------------------------------

    @property
    def skills(self) -> tuple[SkillEntry, ...]:
        """Every skill entry, sorted by URI (nested skills listed flat)."""
        return self._skills

    def skill(self, uri: str) -> SkillEntry | None:
        """The entry whose SKILL.md is at ``uri``, or None."""
        return self._skills_by_uri.get(uri)

    def resources(self) -> tuple[CatalogResource, ...]:
        """Every file that belongs to a skill, as a resource, sorted by URI."""
        return self._resources

    def _make_resources(self) -> tuple[CatalogResource, ...]:
        out = []
        for path in sorted(self._files, key=lambda p: _schema.URI_SCHEME + p):
            if path == _schema.ROOT_PAGE:
                continue
            file = self._files[path]
            meta = file.frontmatter or {}
            name = str(meta["name"]) if file.is_skill else path
            description = meta.get("description")
            out.append(
                CatalogResource(
                    uri=_schema.URI_SCHEME + path,
                    name=name,
                    title=self._headings[path],
                    description=str(description) if description is not None else None,
                    size=len(file.raw),
                )
            )
        return tuple(out)

    def resource(self, uri: str) -> CatalogResource | None:
        """The resource at ``uri`` (its listing: name, MIME type, size …), or None."""
        return self._resources_by_uri.get(uri)

    def read(self, uri: str) -> bytes | None:
        """The original bytes of the file at ``uri``, or None when no such resource."""
        if not uri.startswith(_schema.URI_SCHEME):
            return None
        path = uri[len(_schema.URI_SCHEME) :]
        if path == _schema.ROOT_PAGE:
            return None
        file = self._files.get(path)
        return file.raw if file is not None else None

    @property
    def directories(self) -> tuple[str, ...]:
        """The URI of every directory inside a skill (no trailing slash), sorted."""
        return self._directories.directories

    def directory(
        self, uri: object, cursor: object = None, page_size: int = PAGE_SIZE
    ) -> DirectoryPage:
        """One page of the direct children of a directory inside a skill
        (``resources/directory/read``); raises ``DirectoryReadError`` naming the problem."""
        return self._directories.read(uri, cursor, page_size)

    def _entry(self, directory: str) -> SkillEntry:
        skill_file = self._files[f"{directory}/{_schema.SKILL_FILE}"]
        members = [self._files[p] for p in under(self._paths, directory)]
        manifest = tuple(
            ManifestEntry(
                _schema.URI_SCHEME + f.path,
                "sha256:" + hashlib.sha256(f.raw).hexdigest(),
                len(f.raw),
            )
            for f in members
        )
        meta = skill_file.frontmatter or {}
        return SkillEntry(_skill_uri(directory), str(meta["name"]), meta, manifest)


def _skill_uri(directory: str) -> str:
    return f"{_schema.URI_SCHEME}{directory}/{_schema.SKILL_FILE}"


def _parent_key(path: str) -> str:
    parent = posixpath.dirname(path)
    return key_of(parent) if parent else "/"


def _label(kind: PageKind) -> ChildLabel:
    return "recipe" if kind == "recipe" else "category"
