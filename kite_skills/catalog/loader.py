"""Read a catalog directory and check it, collecting every problem (never the first only)."""

from __future__ import annotations

import bisect
import posixpath
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from ..skill_rules import MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, NAME_PATTERN, NAME_SHAPE
from . import _facts, _markdown, _schema
from ._facts import KnownFacts
from ._frontmatter import normalise, split
from ._frontmatter_problem import FrontmatterProblem
from ._markdown import Link, LinkSource
from .model import Problem

CATALOG_PACKAGE = "skills_catalog"


@dataclass(frozen=True)
class CatalogFile:
    """One Markdown file: original bytes (for reads and digests) and its parsed copy."""

    path: str  # relative to the catalog root, '/'-separated
    raw: bytes
    frontmatter: dict[str, Any] | None = field(hash=False)
    body: str
    body_line: int
    heading: str | None  # the first heading of the body
    links: tuple[Link, ...]  # every link in the body, lines counted from the body's first
    # Where each prose link is written, when the build stored it (a help page parses the
    # body otherwise): derived from the body, so not part of what makes two files equal.
    sources: tuple[LinkSource, ...] | None = field(default=None, compare=False)

    # String slicing, not posixpath: a load asks these ~10 times a file.
    @property
    def directory(self) -> str:
        return self.path.rpartition("/")[0]

    @property
    def is_skill(self) -> bool:
        return self.path.rpartition("/")[2] == _schema.SKILL_FILE


@dataclass
class Scan:
    """What a catalog directory holds, and every problem found in it."""

    label: str
    known: KnownFacts | None = None  # the build's parser findings, for the shipped catalog
    files: dict[str, CatalogFile] = field(default_factory=dict)
    directories: set[str] = field(default_factory=set)
    markdown: set[str] = field(default_factory=set)  # every .md path, parsed or not
    problems: list[Problem] = field(default_factory=list)

    @cached_property  # asked by every check once the walk has read every file
    def skill_directories(self) -> set[str]:
        """Directories that hold a parsed SKILL.md."""
        return {f.directory for f in self.files.values() if f.is_skill}

    def problem(self, path: str, line: int, code: str, message: str) -> None:
        shown = f"{self.label}/{path}" if path else self.label
        self.problems.append(Problem(shown, line, code, message))


def embedded_root() -> Traversable:
    """The catalog shipped inside the installed package (venv, editable or zipapp)."""
    return resources.files(CATALOG_PACKAGE)


def skill_names() -> list[str]:
    """The shipped catalog's skill names, read from its folders without loading it (a
    skill's name is its folder's, which the loader checks): for the look-alike check."""
    return sorted(
        entry.name
        for entry in embedded_root().iterdir()
        if entry.is_dir() and entry.joinpath("SKILL.md").is_file()
    )


def scan(root: Traversable | Path, label: str, known: KnownFacts | None = None) -> Scan:
    """Read and check the catalog at ``root``; ``known`` (the shipped catalog's stored
    parser findings) spares parsing the bodies it holds, and its file is not content."""
    result = Scan(label, known)
    if not root.is_dir():
        result.problem("", 0, "no-catalog", "not a directory — give the catalog's root directory")
        return result
    _walk(root, "", result)
    _check(result)
    result.problems.sort()
    return result


def key_of(path: str) -> str:
    """The help key of a catalog file or directory path."""
    if path == _schema.ROOT_PAGE:
        return "/"
    if posixpath.basename(path) == _schema.SKILL_FILE:
        return "/" + posixpath.dirname(path)
    if path.endswith(".md"):
        return "/" + path[: -len(".md")]
    return "/" + path


def resolve_link(source: str, target: str) -> str | None:
    """The catalog path a relative link points to, or None when it leaves the catalog."""
    target = target.split("#", 1)[0]
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
    if joined.startswith("../") or joined == ".." or joined.startswith("/"):
        return None
    return joined


def _walk(directory: Traversable | Path, prefix: str, result: Scan) -> None:
    for entry in sorted(directory.iterdir(), key=lambda e: e.name):
        path = f"{prefix}{entry.name}"
        if not prefix and entry.name in _schema.PACKAGING_NAMES:
            continue
        if not prefix and result.known is not None and entry.name == _facts.FACTS_FILE:
            continue
        if isinstance(entry, Path) and entry.is_symlink():
            result.problem(path, 0, "symlink", "symbolic links are not allowed — copy the file in")
        elif entry.name.startswith("."):
            result.problem(
                path, 0, "hidden", "hidden files do not belong in the catalog — remove it"
            )
        elif entry.is_dir():
            result.directories.add(path)
            _walk(entry, f"{path}/", result)
        elif not entry.name.endswith(".md"):
            result.problem(
                path,
                0,
                "not-markdown",
                "only Markdown (.md) files belong in the catalog — remove it",
            )
        else:
            result.markdown.add(path)
            _read(path, entry.read_bytes(), result)


def _read(path: str, raw: bytes, result: Scan) -> None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        result.problem(path, line, "not-utf8", "not valid UTF-8 — save the file as UTF-8")
        return
    try:
        parsed = split(normalise(text))
    except FrontmatterProblem as exc:
        result.problem(path, exc.line, "frontmatter", exc.message)
        return
    facts = result.known.of(parsed.body) if result.known else _facts.parse(parsed.body)
    result.files[path] = CatalogFile(
        path,
        raw,
        parsed.frontmatter,
        parsed.body,
        parsed.body_line,
        facts.heading,
        facts.links,
        facts.sources,
    )


def _check(result: Scan) -> None:
    if _schema.ROOT_PAGE not in result.markdown:
        result.problem(
            _schema.ROOT_PAGE, 0, "no-index", "the root help page is missing — add index.md"
        )
    for directory in sorted(result.directories):
        if "/" not in directory and f"{directory}/{_schema.SKILL_FILE}" not in result.markdown:
            result.problem(
                f"{directory}/{_schema.SKILL_FILE}",
                0,
                "no-skill-file",
                "a topic directory needs a SKILL.md with 'name' and 'description'",
            )
    for file in result.files.values():
        if "/" not in file.path and file.path != _schema.ROOT_PAGE:
            result.problem(
                file.path, 0, "loose-file", "only index.md sits at the root — move it into a topic"
            )
        if file.is_skill:
            _check_skill(file, result)
        else:
            _check_page(file, result)
        _check_links(file, result)
    _check_keys(result)
    _check_prompt_names(result)
    _check_limits(result)


def _line_of(file: CatalogFile, key: str) -> int:
    """The line where a top-level frontmatter key is written (for messages)."""
    for number, line in enumerate(normalise(file.raw.decode("utf-8")).split("\n"), start=1):
        if line.startswith(f"{key}:") or line.startswith(f'"{key}":'):
            return number
    return 1


@dataclass(frozen=True)
class FieldProblem:
    """What is wrong with one frontmatter field; ``key`` is where the line is looked up."""

    key: str
    code: str
    message: str


def _check_skill(file: CatalogFile, result: Scan) -> None:
    if file.frontmatter is None:
        result.problem(
            file.path,
            1,
            "no-frontmatter",
            "SKILL.md must start with '---' frontmatter holding 'name' and 'description'",
        )
        return
    _report(file, result, skill_problems(file.frontmatter, posixpath.basename(file.directory)))


def skill_problems(meta: dict[str, Any], directory: str) -> list[FieldProblem]:
    """Every problem of a SKILL.md's frontmatter, field by field (as agentskills' skills-ref
    validates, and stricter: this catalog's skills must state their license, what they need
    to run and their version), for a skill in ``directory``; ``[]`` when it is valid."""
    return [
        *_unknown_fields(meta, _schema.SKILL_FIELDS, f"allowed: {', '.join(_schema.SKILL_FIELDS)}"),
        *_name_problems(meta.get("name"), directory),
        *_description_problems(meta, required=True),
        *_compatibility_problems(meta.get("compatibility")),
        *_metadata_problems(meta.get("metadata")),
        *_license_problems(meta),
        *_allowed_tools_problems(meta.get("allowed-tools")),
    ]


def _report(file: CatalogFile, result: Scan, problems: list[FieldProblem]) -> None:
    for found in problems:
        result.problem(file.path, _line_of(file, found.key), found.code, found.message)


def _unknown_fields(
    meta: dict[str, Any], allowed: Collection[str], hint: str
) -> list[FieldProblem]:
    return [
        FieldProblem(key, "unknown-field", f"unknown frontmatter field '{key}' — {hint}")
        for key in meta
        if key not in allowed
    ]


def _name_problems(name: object, directory: str) -> list[FieldProblem]:
    if not isinstance(name, str) or not name:
        return [
            FieldProblem(
                "name",
                "name",
                f"'name' is required text — set it to the directory name '{directory}'",
            )
        ]
    problems = []
    if len(name) > MAX_NAME_CHARS:
        problems.append(
            FieldProblem(
                "name", "name", f"'name' exceeds {MAX_NAME_CHARS} characters ({len(name)})"
            )
        )
    if not NAME_PATTERN.fullmatch(name):
        problems.append(
            FieldProblem(
                "name",
                "name",
                f"'name' {name!r} must be {NAME_SHAPE}, not starting or ending with a hyphen",
            )
        )
    if unicodedata.normalize("NFKC", name) != unicodedata.normalize("NFKC", directory):
        problems.append(
            FieldProblem(
                "name",
                "name",
                f"'name' {name!r} must equal the directory name '{directory}' — rename one of them",
            )
        )
    return problems


def _description_problems(meta: dict[str, Any], *, required: bool) -> list[FieldProblem]:
    description = meta.get("description")
    if description is None and not required:
        return []
    if not isinstance(description, str) or not description.strip():
        kind = type(description).__name__ if description is not None else "nothing"
        return [
            FieldProblem(
                "description",
                "description",
                f"'description' must be non-empty text (got {kind}) — write it on one "
                "line, quoted if it looks like a number, date or yes/no",
            )
        ]
    if len(description) > MAX_DESCRIPTION_CHARS:
        return [
            FieldProblem(
                "description",
                "description",
                f"'description' exceeds {MAX_DESCRIPTION_CHARS} characters "
                f"({len(description)}) — shorten it",
            )
        ]
    return []


def _compatibility_problems(compatibility: object) -> list[FieldProblem]:
    if (
        isinstance(compatibility, str)
        and compatibility.strip()
        and len(compatibility) <= _schema.MAX_COMPATIBILITY_LENGTH
    ):
        return []
    got = f" (got {len(compatibility)})" if isinstance(compatibility, str) else ""
    return [
        FieldProblem(
            "compatibility",
            "compatibility",
            f"'compatibility' is required text of 1 to {_schema.MAX_COMPATIBILITY_LENGTH} "
            f"characters{got} — say what the skill needs to run: {_schema.COMPATIBILITY_HINT}",
        )
    ]


def _metadata_problems(metadata: object) -> list[FieldProblem]:
    if not isinstance(metadata, dict):
        return [
            FieldProblem(
                "metadata",
                "metadata",
                "'metadata' is required, a mapping of keys to text holding at least the "
                'skill\'s version (metadata: then version: "1.0" on the next line, indented)',
            )
        ]
    if not all(isinstance(v, str) for v in metadata.values()):
        return [
            FieldProblem(
                "metadata",
                "metadata",
                "'metadata' must map keys to text values — quote numbers and dates",
            )
        ]
    if not metadata.get(_schema.VERSION_KEY, "").strip():
        return [
            FieldProblem(
                "metadata",
                "metadata",
                f"'metadata.{_schema.VERSION_KEY}' is required text: the skill's version, "
                f'quoted ({_schema.VERSION_KEY}: "1.0") — raise it when the skill changes',
            )
        ]
    return []


def _license_problems(meta: dict[str, Any]) -> list[FieldProblem]:
    license_ = meta.get("license")
    if isinstance(license_, str) and license_.strip():
        return []
    return [
        FieldProblem(
            "license",
            "license",
            "'license' is required text: the license the skill is shared under (this "
            "catalog's is MIT)",
        )
    ]


def _allowed_tools_problems(tools: object) -> list[FieldProblem]:
    if (
        tools is None
        or isinstance(tools, str)
        or (isinstance(tools, list) and all(isinstance(t, str) for t in tools))
    ):
        return []
    return [
        FieldProblem(
            "allowed-tools",
            "allowed-tools",
            "'allowed-tools' must be text or a list of text",
        )
    ]


def _check_page(file: CatalogFile, result: Scan) -> None:
    meta = file.frontmatter or {}
    _report(
        file,
        result,
        [
            *_unknown_fields(meta, _schema.RECIPE_FIELDS, "a recipe takes only 'description'"),
            *_description_problems(meta, required=False),
        ],
    )
    if "description" not in meta and file.heading is None:
        result.problem(
            file.path,
            file.body_line,
            "no-summary",
            "add a 'description' in frontmatter or a '# Heading' — "
            "navigation needs a one-line summary",
        )


def _check_links(file: CatalogFile, result: Scan) -> None:
    for link in file.links:
        if not _markdown.is_relative(link.target):
            continue
        line = file.body_line + link.line - 1
        if link.target.startswith("/"):
            result.problem(
                file.path,
                line,
                "link",
                f"link '{link.target}' is an absolute path — use a relative link",
            )
            continue
        target = resolve_link(file.path, link.target)
        if target is None:
            result.problem(file.path, line, "link", f"link '{link.target}' leaves the catalog")
        elif target not in result.files:
            if target in result.markdown:  # there, but it failed to parse
                hint = f"{target} could not be read; fix the problem reported for it"
            elif not target.endswith(".md"):
                hint = "only Markdown pages can be linked"
            else:
                hint = "no such catalog file"
            result.problem(file.path, line, "link", f"link '{link.target}' is broken — {hint}")


def _check_keys(result: Scan) -> None:
    owners: dict[str, list[str]] = {}
    for path in result.files:
        owners.setdefault(key_of(path), []).append(path)
    skill_dirs = result.skill_directories
    for directory in result.directories:
        if directory not in skill_dirs:
            owners.setdefault(key_of(directory), []).append(directory + "/")
    for key, paths in owners.items():
        if len(paths) > 1:
            for path in paths:
                others = ", ".join(p for p in paths if p != path)
                result.problem(
                    path.rstrip("/") if path.endswith("/") else path,
                    0,
                    "duplicate-key",
                    f"help key '{key}' is also used by {others} — rename one",
                )


def prompt_name(path: str) -> str:
    """The prompt name of a recipe path: its path without '.md', '/' written as '-'."""
    return path.removesuffix(".md").replace("/", "-")


def is_recipe(path: str, skill_directories: Collection[str]) -> bool:
    """What counts as a recipe: a Markdown file directly in a skill's directory (one of
    ``skill_directories``), other than its SKILL.md; supporting directories hold no recipes.
    ``path`` is relative to the catalog's root (``orders/prepare.md``)."""
    directory, _, filename = path.rpartition("/")
    return (
        directory in skill_directories
        and filename.endswith(".md")
        and filename != _schema.SKILL_FILE
    )


def recipe_paths(result: Scan) -> list[str]:
    """The scanned catalog's recipes (:func:`is_recipe`), sorted."""
    skill_dirs = result.skill_directories
    return sorted(p for p in result.files if is_recipe(p, skill_dirs))


def _check_prompt_names(result: Scan) -> None:
    owners: dict[str, list[str]] = {}
    for path in recipe_paths(result):
        owners.setdefault(prompt_name(path), []).append(path)
    for name, paths in sorted(owners.items()):
        if name.startswith(_schema.USER_PROMPT_PREFIX):
            for path in paths:
                result.problem(
                    path,
                    0,
                    "prompt-name",
                    f"prompt name '{name}' starts with '{_schema.USER_PROMPT_PREFIX}', which "
                    "names the person's own skills — rename the topic or the file",
                )
        if len(paths) > 1:
            for path in paths:
                others = ", ".join(p for p in paths if p != path)
                result.problem(
                    path,
                    0,
                    "prompt-name",
                    f"prompt name '{name}' is also the name of {others} — rename one",
                )


def under(sorted_paths: list[str], directory: str) -> list[str]:
    """The paths in ``sorted_paths`` inside ``directory`` (nested ones too), by bisection:
    they sort together, from ``directory/`` up to ``directory0`` ('0' follows '/')."""
    start = bisect.bisect_left(sorted_paths, directory + "/")
    return sorted_paths[start : bisect.bisect_left(sorted_paths, directory + "0", start)]


def _check_limits(result: Scan) -> None:
    paths = sorted(result.files)
    for directory in sorted(result.skill_directories):
        members = [result.files[p] for p in under(paths, directory)]
        size = sum(len(f.raw) for f in members)
        path = f"{directory}/{_schema.SKILL_FILE}"
        if len(members) > _schema.MAX_FILES_PER_SKILL:
            result.problem(
                path,
                0,
                "too-many-files",
                f"the skill has {len(members)} files; the limit is "
                f"{_schema.MAX_FILES_PER_SKILL} — split it into nested skills",
            )
        if size > _schema.MAX_BYTES_PER_SKILL:
            result.problem(
                path,
                0,
                "too-large",
                f"the skill holds {size} bytes; the limit is "
                f"{_schema.MAX_BYTES_PER_SKILL} — split it",
            )
