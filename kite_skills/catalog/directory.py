"""The directory index behind ``resources/directory/read`` (SEP-2640).

Every directory inside a served skill is a directory resource: the skill root
(``skill://orders``), a supporting directory (``skill://daily-review/templates``) and a nested
skill's directory (listed as a subdirectory of its parent). Reading one gives its direct
children, sorted by URI, in pages with opaque cursors. Pure: built from catalog paths and
resources, no I/O, no MCP.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import posixpath
from collections.abc import Iterable

from ..errors import DirectoryReadError
from . import _schema
from .model import CatalogResource, DirectoryPage, DirectoryResource

Child = CatalogResource | DirectoryResource

PAGE_SIZE = 100
"""Children per page. The shipped catalog's directories are far smaller, so a client gets one
complete page; the cursor machinery is there for larger catalogs and is tested with small pages."""


class DirectoryIndex:
    """The direct children of every directory inside a skill.

    ``directories`` are catalog paths (``orders``, ``orders/examples``); only those at or under
    one of ``skill_directories`` are served. ``resources`` are the served files.
    """

    def __init__(
        self,
        directories: Iterable[str],
        skill_directories: Iterable[str],
        resources: Iterable[CatalogResource],
    ) -> None:
        skills = set(skill_directories)
        served = sorted(d for d in set(directories) | skills if _inside_skill(d, skills))
        children: dict[str, list[Child]] = {d: [] for d in served}
        for directory in served:
            parent = posixpath.dirname(directory)
            if parent in children:
                name = posixpath.basename(directory)
                children[parent].append(DirectoryResource(_uri(directory), name))
        self._files: dict[str, CatalogResource] = {}
        for resource in resources:
            self._files[resource.uri] = resource
            parent = posixpath.dirname(_path_of(resource.uri))
            if parent in children:
                children[parent].append(resource)
        self._children = {d: tuple(sorted(c, key=lambda r: r.uri)) for d, c in children.items()}
        self._fingerprints = {d: _fingerprint(d, c) for d, c in self._children.items()}
        self._roots = sorted(_uri(d) for d in skills)

    @property
    def directories(self) -> tuple[str, ...]:
        """The URI of every directory resource, sorted."""
        return tuple(sorted(_uri(d) for d in self._children))

    def read(self, uri: object, cursor: object = None, page_size: int = PAGE_SIZE) -> DirectoryPage:
        """One page of the direct children of the directory at ``uri``.

        ``cursor`` is absent (``None`` or ``""``) for the first page, else a ``next_cursor``
        this index issued for the same directory and page size. Raises
        ``DirectoryReadError`` naming the problem for anything else.
        """
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1 (got {page_size})")
        path = self._directory(uri)
        children = self._children[path]
        start = self._offset(path, uri, cursor, page_size)
        end = start + page_size
        more = self._cursor(path, page_size, end) if end < len(children) else None
        return DirectoryPage(_uri(path), children[start:end], more)

    # -- the URI ------------------------------------------------------------------------------

    def _directory(self, uri: object) -> str:
        if uri is None:
            raise DirectoryReadError(
                "resources/directory/read needs 'uri', the URI of a directory inside a skill "
                f"(e.g. {self._example()}) — skills/list shows every skill's root",
                uri,
            )
        if not isinstance(uri, str):
            raise DirectoryReadError(
                f"'uri' must be a string (got {type(uri).__name__}) — give a directory URI "
                f"such as {self._example()}",
                uri,
            )
        if not uri.startswith(_schema.URI_SCHEME):
            raise DirectoryReadError(
                f"{uri} is not a {_schema.URI_SCHEME} URI — the directories served here are "
                f"skill roots such as {self._example()} and the folders under them",
                uri,
            )
        path = uri[len(_schema.URI_SCHEME) :]
        if path.endswith("/"):
            path = path[:-1]  # lenient on one trailing slash
        if not path:
            raise DirectoryReadError(
                f"{uri} is the namespace root, outside every skill — start at a skill root "
                f"such as {self._example()} (skills/list shows them)",
                uri,
            )
        if "?" in path or "#" in path:
            raise DirectoryReadError(
                f"{uri} has a query or fragment — a directory URI is a plain path such as "
                f"{self._example()}",
                uri,
            )
        if "%" in path:
            raise DirectoryReadError(
                f"{uri} contains percent-encoding (such as %2F), which is not decoded — "
                "write the path with plain '/' separators",
                uri,
            )
        segments = path.split("/")
        if "" in segments:
            raise DirectoryReadError(
                f"{uri} has an empty path segment ('//') — write each folder name once, "
                "with at most one trailing slash",
                uri,
            )
        if "." in segments or ".." in segments:
            raise DirectoryReadError(
                f"{uri} has a '.' or '..' segment, which is not resolved — name the "
                "directory directly",
                uri,
            )
        if path in self._children:
            return path
        if _uri(path) in self._files:
            parent = _uri(posixpath.dirname(path))
            raise DirectoryReadError(
                f"{_uri(path)} is a file, not a directory — read it with resources/read, "
                f"or list its directory {parent}",
                uri,
            )
        if path == _schema.ROOT_PAGE:
            raise DirectoryReadError(
                f"{uri} is the catalog's root help page, outside every skill, and no directory "
                f"— start at a skill root such as {self._example()}",
                uri,
            )
        raise DirectoryReadError(f"no directory at {uri} — {self._nearest(path)}", uri)

    def _nearest(self, path: str) -> str:
        while "/" in path:
            path = posixpath.dirname(path)
            if path in self._children:
                return f"the nearest directory is {_uri(path)}; list it to see what it holds"
        return f"start at a skill root from skills/list, such as {self._example()}"

    def _example(self) -> str:
        return self._roots[0] if self._roots else f"{_schema.URI_SCHEME}orders"

    # -- the cursor ---------------------------------------------------------------------------

    def _cursor(self, path: str, page_size: int, offset: int) -> str:
        seal = f"{self._fingerprints[path]}\n{page_size}\n{offset}"
        mac = hashlib.sha256(seal.encode("utf-8")).hexdigest()[:16]
        token = base64.urlsafe_b64encode(f"{offset}:{mac}".encode("ascii"))
        return token.decode("ascii").rstrip("=")

    def _offset(self, path: str, uri: object, cursor: object, page_size: int) -> int:
        if cursor is None or cursor == "":
            return 0
        if not isinstance(cursor, str):
            raise DirectoryReadError(
                f"'cursor' must be a string, a nextCursor from an earlier page "
                f"(got {type(cursor).__name__}) — omit it for the first page",
                uri,
                cursor,
            )
        try:
            padded = cursor + "=" * (-len(cursor) % 4)
            decoded = base64.urlsafe_b64decode(padded.encode("ascii")).decode("ascii")
            offset = int(decoded.split(":", 1)[0])
        except (ValueError, binascii.Error, UnicodeError):
            offset = -1
        if not 0 < offset < len(self._children[path]) or cursor != self._cursor(
            path, page_size, offset
        ):
            raise DirectoryReadError(
                f"unknown cursor for {_uri(path)}: it was not issued for this directory — "
                "pass back the nextCursor of an earlier page of the same directory, or omit "
                "it for the first page",
                uri,
                cursor,
            )
        return offset


def _uri(path: str) -> str:
    return _schema.URI_SCHEME + path


def _path_of(uri: str) -> str:
    return uri[len(_schema.URI_SCHEME) :] if uri.startswith(_schema.URI_SCHEME) else uri


def _inside_skill(directory: str, skills: set[str]) -> bool:
    candidate = directory
    while candidate:
        if candidate in skills:
            return True
        candidate = posixpath.dirname(candidate)
    return False


def _fingerprint(directory: str, children: tuple[Child, ...]) -> str:
    """Changes whenever the listing does, so a cursor from another catalog build is refused."""
    listing = "\n".join([directory, *(c.uri for c in children)])
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()
