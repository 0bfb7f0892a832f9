"""The ``--db`` option: declared and resolved in one place for every command that opens the
store: the server, ``skills …``, ``dashboard``, ``setup``, ``doctor`` and ``settings``.

``--db PATH`` names the store file; without it, ``$KITE_SKILLS_DB``, else ``skills.db`` in this
OS's per-user data folder (:func:`kite_skills.store.default_db_path`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..store import default_db_path

DB_VARIABLE: Final = "KITE_SKILLS_DB"
"""The environment variable naming the store file (read by :func:`default_db_path`)."""

if TYPE_CHECKING:  # argparse loads only where a parser is built: a server start needs none
    import argparse

DB_DEFAULT: Final = (
    "(default: $KITE_SKILLS_DB, else skills.db in this OS's per-user data folder; "
    "'kite-skills doctor' shows it)"
)
DB_HELP: Final = f"the store file {DB_DEFAULT}"


def add_db_option(parser: argparse.ArgumentParser, help_text: str = DB_HELP) -> None:
    """Declare ``--db PATH`` on ``parser``. Absent, it sets nothing (``argparse.SUPPRESS``), so
    a ``--db`` given before a subcommand is not reset by the subcommand's own default."""
    import argparse

    parser.add_argument("--db", metavar="PATH", default=argparse.SUPPRESS, help=help_text)


def db_parent() -> argparse.ArgumentParser:
    """A parent parser holding only ``--db``: pass it as ``parents=[…]`` so that every
    subcommand also takes ``--db`` after its name (``skills list --db PATH``)."""
    import argparse

    parent = argparse.ArgumentParser(add_help=False)
    add_db_option(parent)
    return parent


def db_named(args: argparse.Namespace | None) -> bool:
    """Whether the person named the store (``--db``, or ``$KITE_SKILLS_DB``) rather than
    leaving it at this user's default place."""
    return bool(getattr(args, "db", None) or os.environ.get(DB_VARIABLE, "").strip())


def db_path(args: argparse.Namespace | None) -> Path:
    """The store file the command line names: ``--db``, else the default for this user."""
    db = getattr(args, "db", None)
    return Path(db) if db else default_db_path(os.environ)
