"""The built zipapp as a user meets it: from another directory with a private SHIV_ROOT,
its version, the wrong-interpreter preamble, its checksum, and its warm start-up time.

Nothing here rebuilds: ./build.sh builds once and passes KITE_SKILLS_PYZ."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kite_skills import __version__
from kite_skills.preamble import interpreter_problem

from .server.harness import LEGACY, server_env, zipapp

pytestmark = pytest.mark.zipapp

PYTHON312 = Path("/root/.pyenv/versions/3.12.1/bin/python3.12")


@pytest.fixture(scope="module")
def shiv_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("shiv")


def run_zipapp(
    args: list[str], shiv_root: Path, cwd: Path, python: str = sys.executable
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, str(zipapp()), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=server_env(shiv_root, cwd / "skills.db"),
        timeout=60,
    )


def test_help_from_another_directory(shiv_root: Path, tmp_path: Path) -> None:
    run = run_zipapp(["help", "/orders"], shiv_root, tmp_path)
    assert run.returncode == 0, run.stderr
    assert "/orders/reconcile" in run.stdout and "/orders/prepare" in run.stdout
    assert any(shiv_root.iterdir()), "the zipapp did not extract into the private SHIV_ROOT"
    assert "Traceback" not in run.stderr


def test_version(shiv_root: Path, tmp_path: Path) -> None:
    run = run_zipapp(["--version"], shiv_root, tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"kite-skills {__version__}"


def test_checksum_file_matches() -> None:
    pyz = zipapp()
    line = (pyz.parent / (pyz.name + ".sha256")).read_text()
    digest, name = line.split()
    assert name == pyz.name
    assert digest == hashlib.sha256(pyz.read_bytes()).hexdigest()


def test_interpreter_problem() -> None:
    built = ("3.11", "linux", "x86_64")
    assert interpreter_problem(built, (3, 11), "linux", "x86_64") is None
    for version, os_name, machine, have in [
        ((3, 12), "linux", "x86_64", "Python 3.12 on linux x86_64"),
        ((3, 10), "linux", "x86_64", "Python 3.10"),
        ((3, 11), "darwin", "x86_64", "on darwin"),
        ((3, 11), "linux", "aarch64", "aarch64"),
    ]:
        message = interpreter_problem(built, version, os_name, machine)
        assert message is not None
        assert "\n" not in message
        assert message.startswith("kite-skills: this zipapp needs CPython 3.11 on linux x86_64")
        assert have in message
        assert "python3.11 kite-skills.pyz" in message and "./build.sh" in message


@pytest.mark.skipif(not PYTHON312.exists(), reason=f"{PYTHON312} is not on this machine")
def test_wrong_interpreter_gets_one_line(tmp_path: Path) -> None:
    run = run_zipapp(["--version"], tmp_path / "shiv", tmp_path, python=str(PYTHON312))
    assert run.returncode == 1
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert "CPython 3.11" in lines[0] and "Python 3.12" in lines[0]
    assert "Traceback" not in run.stderr


MINIMAL_SERVER = textwrap.dedent(
    """
    import anyio
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    async def list_tools(ctx, params):
        return types.ListToolsResult(
            tools=[types.Tool(name="echo", input_schema={"type": "object"})]
        )

    async def main():
        server = Server("minimal", on_list_tools=list_tools)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
    """
)


def first_response_seconds(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """Wall time from spawn to the tools/list reply after initialize."""
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "timer", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
    process.stdin.flush()
    while True:
        line = process.stdout.readline()
        assert line, "no tools/list reply"
        if json.loads(line).get("id") == 2:
            break
    elapsed = time.perf_counter() - started
    process.stdin.close()
    process.wait(timeout=10)
    return elapsed


def test_warm_time_to_first_response(shiv_root: Path, tmp_path: Path) -> None:
    """Measured, printed for the closing note, and bounded loosely."""
    env = server_env(shiv_root, tmp_path / "skills.db")
    minimal = tmp_path / "minimal_server.py"
    minimal.write_text(MINIMAL_SERVER)
    pyz = [sys.executable, str(zipapp())]
    first_response_seconds(pyz, env, tmp_path)  # warm the shiv cache
    ours = min(first_response_seconds(pyz, env, tmp_path) for _ in range(3))
    base = min(
        first_response_seconds([sys.executable, str(minimal)], env, tmp_path) for _ in range(3)
    )
    print(
        f"\nwarm initialize + tools/list: zipapp {ours * 1000:.0f} ms, "
        f"minimal mcp lowlevel server {base * 1000:.0f} ms"
    )
    assert ours < 5
