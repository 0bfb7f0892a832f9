"""dist/kite-skills-linux-aarch64.pyz run for real: Debian's arm64 CPython 3.11 under
qemu-user (no chroot, no binfmt_misc). tools/arm64-python.sh sets it up once, as root: it
installs qemu-user-static, adds the arm64 architecture to dpkg and unpacks python3.11:arm64
from Debian's registry into .build/arm64-python (about half a minute; the runs take ~20 s)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .server.harness import ROOT, server_env, zipapp
from .zipapp_platforms import platform_file, session

pytestmark = pytest.mark.zipapp


@pytest.fixture(scope="module")
def arm64_python() -> list[str]:
    root = ROOT / ".build" / "arm64-python"
    subprocess.run([str(ROOT / "tools" / "arm64-python.sh"), str(root)], check=True, timeout=900)
    return ["qemu-aarch64-static", "-L", str(root), str(root / "usr" / "bin" / "python3.11")]


def run(python: list[str], pyz: Path, args: list[str], env: dict[str, str], stdin: str = ""):  # type: ignore[no-untyped-def]
    return subprocess.run(
        [*python, str(pyz), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def test_the_aarch64_file_runs_under_emulation(arm64_python: list[str], tmp_path: Path) -> None:
    env = server_env(tmp_path / "shiv", tmp_path / "skills.db")
    machine = subprocess.run(
        [*arm64_python, "-c", "import platform; print(platform.machine())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert machine.stdout.strip() == "aarch64"
    pyz = platform_file("linux-aarch64")
    version = run(arm64_python, pyz, ["--version"], env)
    assert version.returncode == 0, version.stderr
    page = run(arm64_python, pyz, ["help", "/orders"], env)
    assert page.returncode == 0 and "/orders/reconcile" in page.stdout, page.stderr
    code, replies, err = session([*arm64_python, str(pyz)], env)
    assert code == 0, err
    assert replies[1]["result"]["serverInfo"]["name"]  # type: ignore[index]
    assert not replies[4]["result"].get("isError"), replies[4]  # type: ignore[union-attr]  # skillSave
    skills = replies[5]["result"]["skills"]  # type: ignore[index]
    assert "skill://orders/SKILL.md" in {s["uri"] for s in skills}


def test_the_x86_64_file_names_the_aarch64_one(arm64_python: list[str], tmp_path: Path) -> None:
    result = run(arm64_python, zipapp(), ["--version"], server_env(tmp_path / "s", tmp_path))
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.endswith(
        "download kite-skills-linux-aarch64.pyz instead (from the same place as this file)"
    ), line
