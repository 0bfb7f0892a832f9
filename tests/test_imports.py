"""The package's import graph, read from the source (ast, every ``import`` wherever it stands:
module level, inside a function, under ``TYPE_CHECKING``): no module reaches itself again
through its imports (issue 40), and the MCP kit imports no server, sandbox, store or catalog."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kite_skills"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules ``name`` imports: ``from .x import y`` names ``.x.y`` when ``y`` is a
    module, else ``.x``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            submodules = {f"{source}.{a.name}" for a in node.names} & known
            found.update(submodules)
            if len(submodules) < len(node.names):  # a name defined in ``source`` itself
                found.add(source)
    # A package's own parents run first whatever a module imports: not an edge of a circle.
    parents = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
    return {m for m in found if m in known and m != name and m not in parents}


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imports_of(name, path, known) for name, path in found.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_walk_sees_an_import_circle() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles_in_the_package() -> None:
    found = circles(graph())
    assert not found, "import circles (break each: move what both need to a third module): " + (
        "; ".join(" ↔ ".join(c) for c in found)
    )


def test_the_kit_imports_no_server_sandbox_store_or_catalog() -> None:
    edges = graph()
    for name, imported in edges.items():
        if name.startswith("kite_skills.mcpkit"):
            outside = {
                m
                for m in imported
                if not m.startswith("kite_skills.mcpkit") and m != "kite_skills.display"
            }
            assert not outside, f"{name} imports {sorted(outside)}: the kit stands on its own"
