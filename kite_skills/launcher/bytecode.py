"""Bytecode for the zipapp's own extracted modules when PYTHONDONTWRITEBYTECODE is set.

shiv extracts the zipapp's site-packages into a cache directory (SHIV_ROOT, default
~/.shiv) and Python writes each module's ``.pyc`` there on the first start, so later starts
skip compiling. With PYTHONDONTWRITEBYTECODE=1 in the environment (some MCP clients and
sandboxes set it) no ``.pyc`` is ever written and *every* start compiles the whole MCP SDK
again, which measured ~1.5× the normal start (bench/run.py, section 1). The variable is meant
to keep bytecode out of source trees; the shiv cache is a cache the zipapp made itself. So once
per extraction, when the server stops (by then every module a session loads is loaded, the
event loop's among them), a detached, low-priority process writes the ``.pyc`` of the modules
this process loaded there, and later starts read them (the variable stops writing, not
reading).
"""

from __future__ import annotations

import subprocess
import sys
from importlib.util import cache_from_source
from pathlib import Path
from typing import Literal

from . import build_info

# One marker per program: the sandbox loads modules the server never does (and the reverse).
_MARKER = ".kite-skills-bytecode-{program}-{tag}"
# argv: the done-marker, then the sources. The marker is written last, so a compiler that
# failed leaves none and the next server that stops tries again. Windows has no os.nice: there
# the process is started below normal priority instead. Timestamp-checked bytecode, as the
# import system writes it (py_compile's default where SOURCE_DATE_EPOCH is set is
# hash-checked bytecode, whose source every start would hash).
_COMPILE = (
    "import os, py_compile, sys\n"
    "if hasattr(os, 'nice'):\n"
    "    os.nice(10)\n"
    "for path in sys.argv[2:]:\n"
    "    py_compile.compile(path, doraise=False, quiet=2,\n"
    "                       invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)\n"
    "open(sys.argv[1], 'a').close()\n"
)


def write_later(program: Literal["server", "sandbox"]) -> None:
    """Start compiling the loaded modules of the extracted zipapp in the background, once per
    ``program``."""
    if not sys.dont_write_bytecode or build_info.current() is None:
        return  # bytecode is written as usual, or this is not a zipapp build
    site = Path(__file__).resolve().parents[2]
    if site.name != "site-packages":
        return  # kite_skills comes from elsewhere (PYTHONPATH, a checkout): not our cache
    marker = site / _MARKER.format(program=program, tag=sys.implementation.cache_tag)
    if marker.exists():
        return
    loaded = [getattr(module, "__file__", None) for module in list(sys.modules.values())]
    # A warm start also loads the unpacked preamble and build facts (start.py); a first
    # start, which runs the archive's copies, does not.
    launcher = site / "kite_skills" / "launcher"
    loaded += [str(launcher / "preamble.py"), str(launcher / "build_info.py")]
    sources = [
        path
        for path in dict.fromkeys(loaded)
        if path
        and path.endswith(".py")
        and path.startswith(str(site))
        and not Path(cache_from_source(path)).exists()
    ]
    try:
        subprocess.Popen(
            [sys.executable, "-c", _COMPILE, str(marker), *sources],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            # Windows: a lower priority, and no console window (a desktop client starts the
            # server without one, and a console program started from it would open its own)
            creationflags=getattr(subprocess, "BELOW_NORMAL_PRIORITY_CLASS", 0)
            | getattr(subprocess, "CREATE_NO_WINDOW", 0),
        )
    except OSError:
        pass  # a read-only cache: starts stay slower, nothing else changes
