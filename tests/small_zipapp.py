"""A small zipapp of this tree, for tests that need a program started as a file (as a
downloaded kite-skills.pyz is) without building the real one: its ``__main__`` puts this
tree first on sys.path and runs ``kite_skills.cli.main``, so ``sys.argv[0]`` is the file."""

from __future__ import annotations

import os
import subprocess
import sys
import zipapp
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAIN = f"""import sys
sys.path.insert(0, {str(ROOT)!r})
from kite_skills.cli import main
sys.exit(main())
"""


def make_pyz(folder: Path, name: str = "kite-skills.pyz") -> Path:
    """A zipapp named ``name`` in ``folder`` (made if missing)."""
    source = folder / ".src"
    source.mkdir(parents=True, exist_ok=True)
    (source / "__main__.py").write_text(MAIN)
    pyz = folder / name
    zipapp.create_archive(source, pyz)
    (source / "__main__.py").unlink()
    source.rmdir()
    return pyz


def environment(home: Path, *path: Path | str, **extra: str) -> dict[str, str]:
    """A person's environment with ``home`` as HOME and only ``path`` (then /usr/bin:/bin) on
    PATH."""
    folders = [str(p) for p in path] + ["/usr/bin", "/bin"]
    env = {"HOME": str(home), "PATH": os.pathsep.join(folders), "LANG": "C.UTF-8"}
    env["KITE_SKILLS_DB"] = str(home / "skills.db")
    env.update(extra)
    return env


def run(
    command: list[str], env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=cwd, timeout=120, check=False
    )


def run_pyz(pyz: Path, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``python PYZ ARGS`` with this interpreter, as a person types it."""
    return run([sys.executable, str(pyz), *args], env)
