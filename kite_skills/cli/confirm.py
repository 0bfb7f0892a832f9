"""The person's confirmation at the controlling terminal, before a CLI verb puts text into
service (issue 38; which verbs: :func:`kite_skills.store.lifecycle.puts_text_in_service`).

Agents' shell tools (Claude Code, Cursor, …) run commands as the person, with pipes for stdin
and stdout. So the question is asked on the process's controlling terminal (``/dev/tty``; on
Windows the console, ``CONIN$`` and ``CONOUT$``), which a pipe cannot answer, and the person
types the skill's name: no flag or environment variable skips it. A process with no
controlling terminal is refused and pointed to the dashboard.
"""

from __future__ import annotations

import os
from typing import TextIO

from kite_skills.display import for_terminal
from kite_skills.errors import KiteError

# Where the person at this process's terminal reads and types: (input, output).
_TERMINAL = ("CONIN$", "CONOUT$") if os.name == "nt" else ("/dev/tty", "/dev/tty")


class NotConfirmed(KiteError):
    """The person did not confirm at the terminal, or there is none; nothing changed."""


def _open_terminal() -> tuple[TextIO, TextIO] | None:
    """The controlling terminal's input and output, or None when the process has none."""
    try:
        given = open(_TERMINAL[0], encoding="utf-8", errors="replace")
    except OSError:
        return None
    try:
        return given, open(_TERMINAL[1], "w", encoding="utf-8", errors="replace")
    except OSError:
        given.close()
        return None


def confirm(verb: str, name: str, what: str, *, kite: str) -> None:
    """Ask the person at the controlling terminal to type the skill's name to ``verb`` it;
    ``what`` says what it does (``revision … (draft -> live): agents will read it``). Returns
    when they typed it;
    raises :class:`NotConfirmed` otherwise, or when there is no terminal."""
    shown = for_terminal(name)
    terminal = _open_terminal()
    if terminal is None:
        raise NotConfirmed(
            f"cannot {verb} '{shown}' here: you confirm this by typing at a terminal, and this "
            "command has none (a script, a pipe or an agent's shell tool runs it); run it "
            f"yourself in a terminal, or use the dashboard ('{kite} dashboard', page "
            "/skills); nothing changed"
        )
    given, shows = terminal
    with given, shows:
        shows.write(
            f"\nkite-skills: {verb} '{shown}' {for_terminal(what)}.\n"
            "If you did not run this command yourself, press Enter: nothing changes.\n"
            f"Type its name to {verb} it: "
        )
        shows.flush()
        typed = given.readline().strip()
    if typed != name:
        raise NotConfirmed(f"did not {verb} '{shown}': its name was not typed; nothing changed")
