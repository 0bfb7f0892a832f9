"""Runs inside the zipapp before anything is imported from it (shiv ``--preamble``).

The zipapp carries compiled extensions (pydantic_core, rpds, cffi) for one CPython minor
and one platform. On another interpreter shiv would fail with a masked ImportError; this
says what is needed instead, on stderr (stdout is the MCP wire), and exits 1.
Standard library only: nothing from the bundle may be imported yet.
"""

from __future__ import annotations

import platform
import sys

# build.sh replaces this line with the interpreter the zipapp was built for.
BUILT_FOR: tuple[str, str, str] | None = None  # (python "3.11", sys.platform, machine)


def interpreter_problem(
    built_for: tuple[str, str, str], version: tuple[int, int], os_name: str, machine: str
) -> str | None:
    """The message for a mismatched interpreter, or None when this one fits."""
    python, want_os, want_machine = built_for
    have = f"{version[0]}.{version[1]}"
    if have == python and os_name == want_os and machine == want_machine:
        return None
    return (
        f"kite-skills: this zipapp needs CPython {python} on {want_os} {want_machine}; "
        f"it was started with Python {have} on {os_name} {machine} — "
        f"run it as 'python{python} kite-skills.pyz' or rebuild it with ./build.sh on this machine"
    )


if __name__ == "__main__" and BUILT_FOR is not None:
    message = interpreter_problem(BUILT_FOR, sys.version_info[:2], sys.platform, platform.machine())
    if message:
        print(message, file=sys.stderr)  # noqa: T201
        sys.exit(1)
