"""A first server start's bytecode, compiled on another core while the start imports.

The first start of a new file on a CPython compiles every module its server loads, some 400,
one at a time between loading them: about half of that start (docs/benchmarks.md). Which
modules, and in which order, is known in advance (``server_modules.json``, written by
tools/server_modules.py and checked by the tests against the built file). So once the
preamble has unpacked, a second process compiles them into the cache from the last one
backwards while the start imports from the first; each skips what the other has written, and
they meet in the middle. The import system and py_compile each write a ``.pyc`` to a
temporary file and rename it, so a module both compile is written whole either way.

Run from the archive by ``start`` before anything is imported from the unpacked copy:
standard library only.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

LISTING = Path("kite_skills", "launcher", "server_modules.json")
# argv: site-packages, then the listing (sources relative to it, in the order a start loads
# them). Timestamp-checked bytecode, as the import system writes it: py_compile's default
# where SOURCE_DATE_EPOCH is set is hash-checked bytecode, whose source every start would hash.
_COMPILE = (
    "import json, os, py_compile, sys\n"
    "from importlib.util import cache_from_source\n"
    "with open(sys.argv[2], encoding='utf-8') as listing:\n"
    "    sources = [os.path.join(sys.argv[1], name) for name in json.load(listing)]\n"
    "for source in reversed(sources):\n"
    "    if os.path.exists(cache_from_source(source)):\n"
    "        continue\n"
    "    try:\n"
    "        py_compile.compile(source, doraise=False, quiet=2,\n"
    "                           invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)\n"
    "    except OSError:\n"
    "        pass\n"
)


def start(site_packages: Path, held: int | None) -> None:
    """Start compiling the server's modules in ``site_packages`` (just unpacked) in the
    background. The compiler shares ``held``, the start's lock on the extraction (see
    ``preamble.hold``), so no other start prunes the extraction while it writes there, should
    this server end first. Its output goes nowhere: stdout is the MCP wire."""
    listing = site_packages / LISTING
    if not listing.is_file():
        return
    try:
        subprocess.Popen(
            # -I -S: no environment, working directory or site to read; py_compile needs none
            [sys.executable, "-I", "-S", "-c", _COMPILE, str(site_packages), str(listing)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=() if held is None else (held,),
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),  # Windows: no console
        )
    except OSError:
        pass  # the start compiles everything itself, as without this
