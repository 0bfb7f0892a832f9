"""The zipapp's own modules a server start loads before its first answer, in the order it first
loads them: kite_skills/launcher/server_modules.json, which a first start compiles ahead on
another core (kite_skills/launcher/compile_ahead.py).

    python tools/server_modules.py [PYZ]    # default dist/kite-skills.pyz; rewrites the file

It unpacks PYZ into a fresh shiv cache, then runs its server there without any bytecode, once
per protocol era (initialize or server/discover, then tools/list), and lists the sources it
compiles from the cache's site-packages. tests/test_zipapps.py checks the file against the
same run of the built file, so a change in what a start imports fails the suite until the
file is written again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from kite_skills.launcher.compile_ahead import LISTING  # noqa: E402

CLIENT = {"name": "server_modules.py", "version": "0"}
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT,
}
SESSIONS = {
    "legacy": [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ],
    "modern": [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": META}},
    ],
}


# Runs the file as `python PYZ` would, telling on stderr each source file compiled ("compile"
# is the audit event of Python's compile(), which the import system calls on a missing .pyc).
RUN_LOGGING_COMPILES = (
    "import runpy, sys\n"
    "def tell(event, args):\n"
    "    if event == 'compile' and isinstance(args[1], str):\n"
    "        sys.stderr.write('compiled: ' + args[1] + '\\n')\n"
    "sys.addaudithook(tell)\n"
    "sys.argv = sys.argv[1:]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def server_modules(pyz: Path, python: str = sys.executable) -> list[str]:
    """What the listing (:data:`LISTING`) holds for ``pyz`` run by ``python``: the sources
    its server compiles in an unpacked cache without bytecode, in the order it compiles
    them."""
    pyz = pyz.resolve()  # the runs' working directory is another
    found: dict[str, None] = {}
    with tempfile.TemporaryDirectory(prefix="server-modules-") as tmp:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "SHIV_ROOT": str(Path(tmp) / "shiv"),
            "KITE_SKILLS_DB": str(Path(tmp) / "skills.db"),
        }
        unpack = subprocess.run(
            [python, str(pyz), "--version"], env=env, capture_output=True, text=True
        )
        if unpack.returncode != 0:
            sys.exit(
                f"server_modules.py: '{pyz} --version' failed — give it a file ./build.sh "
                f"built:\n{unpack.stderr[-3000:]}"
            )
        (site_packages,) = Path(tmp, "shiv").glob("*/site-packages")
        for era, messages in SESSIONS.items():
            for cache in list(site_packages.rglob("__pycache__")):
                shutil.rmtree(cache)
            stdin = "".join(json.dumps(m) + "\n" for m in messages)
            run = subprocess.run(
                [python, "-c", RUN_LOGGING_COMPILES, str(pyz)],
                input=stdin, capture_output=True, text=True, env=env, timeout=300,
                cwd=tmp,  # -c puts the working directory first on sys.path: not a checkout
            )  # fmt: skip
            replies = [json.loads(line) for line in run.stdout.splitlines()]
            if run.returncode != 0 or [r.get("id") for r in replies if "result" in r] != [1, 2]:
                sys.exit(f"server_modules.py: {pyz}'s {era} session failed:\n{run.stderr[-3000:]}")
            for line in run.stderr.splitlines():
                if line.startswith("compiled: "):
                    path = Path(line.removeprefix("compiled: "))
                    if path.is_relative_to(site_packages):
                        found[path.relative_to(site_packages).as_posix()] = None
    return list(found)


def main(argv: list[str]) -> None:
    pyz = Path(argv[0] if argv else ROOT / "dist" / "kite-skills.pyz")
    if not pyz.is_file():
        sys.exit(f"server_modules.py: {pyz} is missing — run ./build.sh first")
    modules = server_modules(pyz)
    (ROOT / LISTING).write_text(json.dumps(modules, indent=0) + "\n")
    print(f"{LISTING}: {len(modules)} modules")  # noqa: T201


if __name__ == "__main__":
    main(sys.argv[1:])
