"""The launcher's room (kite_skills/launcher/) without a build: one name per module, the
build's facts read from one member, and the first module's words agreeing with the
preamble's. The built file's own runs are in test_zipapps.py."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from kite_skills.cli import main
from kite_skills.launcher import build_info, first
from kite_skills.launcher.preamble import where_to_get

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / "kite_skills" / "launcher"
MODULES = {p.stem for p in LAUNCHER.glob("*.py")} - {"__init__"}


def imported_names(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``path`` (relative ones resolved)."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([base] if base else [])])
            found += [(node.lineno, base)]
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def test_no_launcher_module_is_imported_under_another_name() -> None:
    """Each file in kite_skills/launcher/ is imported as kite_skills.launcher.<module> and
    nothing else: not as a top-level module (a sys.path entry into the package), not from
    its old places, not as an archive copy (_kite_skills_*)."""
    sources = [
        *(ROOT / "kite_skills").rglob("*.py"),
        *(ROOT / "tools").rglob("*.py"),
        *(ROOT / "tests").rglob("*.py"),
        *(ROOT / "bench").rglob("*.py"),
    ]
    other = {*MODULES, "zipapp_start", "_bytecode"}
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: imports {name}"
        for path in sources
        for line, name in imported_names(path)
        if name.split(".")[0] in other
        or name.startswith("_kite_skills")
        or (name.startswith("kite_skills.") and name.split(".")[1] in other)
    ]
    assert wrong == []
    into_package = [  # nor a sys.path entry that would make them top-level modules
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for path in sources
        for line in path.read_text().splitlines()
        if line.lstrip().startswith("sys.path")
        and ('"kite_skills"' in line or '"launcher"' in line)
    ]
    assert into_package == []


def test_the_first_module_names_where_to_get_python_as_the_preamble_does() -> None:
    """first.py cannot import the preamble (it must parse on Python 2.7): its words are
    checked against the preamble's here."""
    assert first.WHERE == where_to_get("darwin", "3.13")
    assert first.WHERE_WINDOWS == where_to_get("win32", "3.13")
    assert first.MEMBER == build_info.MEMBER


@pytest.mark.parametrize("python", ["2.7", "3.6"])
def test_the_first_module_parses_on_old_pythons(python: str) -> None:
    """The one module an old Python reads: its syntax must be theirs (skipped where no such
    Python is installed; test_zipapps.py runs the built file on every local one)."""
    found = sorted(Path.home().glob(f".pyenv/versions/{python}.*/bin/python"))
    if not found:
        pytest.skip(f"no Python {python} here")
    source = (LAUNCHER / "first.py").read_text()
    subprocess.run(
        [str(found[0]), "-c", "import sys; compile(sys.stdin.read(), 'first.py', 'exec')"],
        input=source,
        text=True,
        check=True,
        timeout=60,
    )


def test_the_build_info_member_round_trips_the_same_bytes() -> None:
    facts = build_info.BuildInfo("macos-arm64", ("3.11", "3.14"), "1.2.3")
    text = build_info.dumps(facts)
    assert build_info.loads(text) == facts
    assert build_info.dumps(build_info.loads(text.encode())) == text  # reproducible
    assert facts.accepted == "CPython 3.11–3.14"


def test_a_checkout_is_not_a_zipapp_build(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert build_info.current() is None
    assert main(["doctor", "--db", str(tmp_path / "skills.db")]) in (0, 1)
    lines = capsys.readouterr().out.splitlines()
    site = LAUNCHER.parents[1]
    assert f"file:          not a zipapp build (the kite_skills package in {site})" in lines
    assert not [line for line in lines if line.startswith(("built for:", "extracted to:"))]


def test_the_facts_are_read_beside_the_module(tmp_path: Path) -> None:
    """An unpacked copy with the member beside the launcher is a zipapp build, read by
    build_info.current()."""
    site = tmp_path / "site-packages"
    (site / "kite_skills" / "launcher").mkdir(parents=True)
    for name in ("__init__.py", "launcher/__init__.py", "launcher/build_info.py"):
        (site / "kite_skills" / name).write_text((ROOT / "kite_skills" / name).read_text())
    facts = build_info.BuildInfo("linux-aarch64", ("3.12",), "9.9")
    (site / "kite_skills" / "launcher" / build_info.FILE).write_text(build_info.dumps(facts))
    result = subprocess.run(
        [
            sys.executable,
            "-S",
            "-c",
            "import sys; sys.path.insert(0, sys.argv[1]); "
            "from kite_skills.launcher import build_info; print(build_info.current())",
            str(site),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert result.stdout.strip() == repr(facts)
