"""Every error kite-skills raises on purpose.

    KiteError
    ├── CatalogError          a broken catalog; carries every Problem found
    └── StoreError            the user-skill store refused an operation
        ├── InvalidSkill      bad input: name, description or body break a rule
        ├── UnknownSkill      no skill by that name
        ├── IllegalTransition the lifecycle does not allow that move
        ├── SchemaTooNew      the database was written by a newer kite-skills
        └── StoreUnavailable  the file cannot be opened or lacks FTS5

Adapters (cli, server, dashboard) catch ``KiteError`` and show its message;
anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class KiteError(Exception):
    """Base of every deliberate kite-skills error. ``str(exc)`` is for people."""


class CatalogError(KiteError):
    """The catalog failed validation. ``problems`` holds every problem found,
    sorted by path and line; the message lists them one per line."""

    def __init__(self, problems: list) -> None:  # list[catalog.Problem]
        self.problems = list(problems)
        lines = [str(p) for p in self.problems]
        super().__init__(
            f"the skill catalog has {len(lines)} problem(s):\n" + "\n".join(lines)
        )


class StoreError(KiteError):
    """The user-skill store refused an operation; nothing was changed."""


class InvalidSkill(StoreError):
    """A name, description or body breaks a rule (the message says which)."""


class UnknownSkill(StoreError):
    """No skill by that name exists in the store."""

    def __init__(self, name: str, message: str | None = None) -> None:
        self.name = name
        super().__init__(
            message or f"no skill named '{name}'; list them with 'kite-skills skills list'"
        )


class IllegalTransition(StoreError):
    """The lifecycle does not allow that move from the skill's current state."""

    def __init__(self, name: str, message: str) -> None:
        self.name = name
        super().__init__(message)


class SchemaTooNew(StoreError):
    """The database file was written by a newer kite-skills than this one."""


class StoreUnavailable(StoreError):
    """The store file cannot be opened, or this SQLite lacks FTS5."""
