"""Every error kite-skills raises on purpose.

    KiteError
    ├── CatalogError          a broken catalog; carries every Problem found
    ├── HelpKeyError          a help key that names no page
    │   ├── HelpKeyTooLong    over 1024 UTF-8 bytes (refused before any lookup)
    │   └── UnknownHelpKey    carries the nearest existing page as guidance
    ├── DirectoryReadError    a directory URI or cursor that names no listing
    ├── CalcError             a ``calc`` input refused; carries every field's problem
    └── StoreError            the user-skill store refused an operation
        ├── InvalidSkill      bad input: name, description or body break a rule
        ├── UnknownSkill      no skill by that name
        ├── IllegalTransition the lifecycle does not allow that move
        ├── StoreUnavailable  the store cannot be used; ``reason`` names the cause
        │   └── SchemaTooNew  the database was written by a newer kite-skills
        ├── UnreadableSkill   a skill's stored text is not valid UTF-8
        ├── SkillNotLive      the skill exists but is a draft or archived
        ├── StaleRevision     the text changed since the person reviewed it
        └── InvalidQuery      a search text or limit is out of range

Adapters (cli, server, dashboard) catch ``KiteError`` and show its message;
anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

from collections.abc import Sequence

from .display import counted


class KiteError(Exception):
    """Base of every deliberate kite-skills error. ``str(exc)`` is for people."""


class CatalogError(KiteError):
    """The catalog failed validation. ``problems`` holds every problem found,
    sorted by path and line; the message lists them one per line."""

    def __init__(self, problems: Sequence[object]) -> None:  # catalog.Problem items
        self.problems = list(problems)
        lines = [str(p) for p in self.problems]
        super().__init__(
            f"the skill catalog has {counted(len(lines), 'problem')}:\n" + "\n".join(lines)
        )


class CalcError(KiteError):
    """A ``calc`` request that cannot be answered: ``problems`` holds one line per field
    (the field, what is wrong, what to send), every field's, not only the first."""

    def __init__(self, mode: str, problems: Sequence[str]) -> None:
        self.mode = mode
        self.problems = list(problems)
        super().__init__(
            f"calc {mode}: {counted(len(self.problems), 'problem')}:\n" + "\n".join(self.problems)
        )


class HelpKeyError(KiteError):
    """A help key that names no page."""


class HelpKeyTooLong(HelpKeyError):
    """The key is longer than the limit; no lookup was made."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        super().__init__(
            f"help key is {size} bytes; keys are at most {limit} UTF-8 bytes — "
            "use a key such as '/orders' (start at '/' to see them all)"
        )


class UnknownHelpKey(HelpKeyError):
    """No page at ``key``; ``nearest`` is the closest existing ancestor page, ``similar``
    the pages whose key looks like it ("did you mean") and ``mentions`` the pages whose
    text mentions its last word (all ``catalog.HelpChild`` values)."""

    def __init__(
        self,
        key: str,
        nearest: object,  # catalog.HelpPage
        similar: Sequence[object] = (),
        mentions: Sequence[object] = (),
    ) -> None:
        self.key = key
        self.nearest = nearest
        self.similar = tuple(similar)
        self.mentions = tuple(mentions)
        children = getattr(nearest, "children", ())
        lines = [
            f"no help page at {key!r} (keys are case-sensitive paths such as '/orders'; "
            "no wildcards, encoding or '..')."
        ]
        if self.similar:
            from .suggest import did_you_mean  # only a miss needs it: a start imports no more

            offer = did_you_mean([_key_title(c) for c in self.similar])
            lines.append(offer[:1].upper() + offer[1:])
        if self.mentions:
            word = key.strip().strip("/").rsplit("/", 1)[-1]
            lines.append(f"Pages that mention {word!r}:")
            lines += [f"- {_key_title(c)}" for c in self.mentions]
        lines.append(
            f"Nearest page: {nearest.key}"  # type: ignore[attr-defined]
            + (f" — {nearest.title}" if getattr(nearest, "title", "") else "")  # type: ignore[attr-defined]
            + (". Its pages:" if children else ".")
        )
        lines += [f"- {c.key} ({c.label}) — {c.description}" for c in children]
        super().__init__("\n".join(lines))


def _key_title(child: object) -> str:
    """``/orders (Orders)`` for a ``catalog.HelpChild`` whose description is its title."""
    key, title = getattr(child, "key", ""), getattr(child, "description", "")
    return f"{key} ({title})" if title else str(key)


class DirectoryReadError(KiteError):
    """``resources/directory/read`` refused: the URI names no directory inside a skill, or
    the cursor was never issued for it. ``uri`` and ``cursor`` are what the caller sent."""

    def __init__(self, message: str, uri: object, cursor: object = None) -> None:
        self.uri = uri
        self.cursor = cursor
        super().__init__(message)

    @property
    def data(self) -> dict[str, object]:
        """What to put in a JSON-RPC ``error.data``: the URI, and the cursor if one was sent."""
        data: dict[str, object] = {"uri": self.uri}
        if self.cursor is not None:
            data["cursor"] = self.cursor
        return data


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


class StoreUnavailable(StoreError):
    """The store cannot be opened or used right now; the message names the cause and the fix.

    ``reason`` is a short code for adapters and tests: ``read-only``, ``disk-full``,
    ``corrupt``, ``not-a-database``, ``schema-too-new``, ``is-a-directory``, ``busy``,
    ``cannot-open``, ``moved``, ``closed``, ``no-fts5``, ``io-error`` or ``other``. A server
    catches this one class to keep serving everything that does not need the store.
    """

    def __init__(self, message: str, reason: str = "other") -> None:
        self.reason = reason
        super().__init__(message)


class SchemaTooNew(StoreUnavailable):
    """The database file was written by a newer kite-skills than this one."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "schema-too-new")


class UnreadableSkill(StoreError):
    """A skill's stored text is not valid UTF-8 (written by another tool); ``name`` is the
    skill's name with any undecodable bytes shown as ``\\xNN``."""

    def __init__(self, name: str, message: str) -> None:
        self.name = name
        super().__init__(message)

    @classmethod
    def bad_utf8(cls, name: str, fields: list[str], fix: str) -> UnreadableSkill:
        """The message for text that is not valid UTF-8: which of its ``fields`` (``name``,
        ``description``, ``body``), and ``fix``, what a person can do about it."""
        return cls(
            name,
            f"skill '{name}' has text that is not valid UTF-8 (in its {' and '.join(fields)}) "
            f"— it was written by another tool, not kite-skills; {fix}",
        )


class SkillNotLive(StoreError):
    """The skill exists but is not in service (a draft or archived); ``status`` says which."""

    def __init__(self, name: str, status: str, message: str) -> None:
        self.name = name
        self.status = status
        super().__init__(message)


class InvalidQuery(StoreError):
    """A search text, name filter or ``limit`` is out of range (the message gives the range)."""


class StaleRevision(StoreError):
    """A person's publish or accept named a revision id that is no longer the text: it
    changed after they reviewed it. Nothing was changed."""

    def __init__(self, name: str, reviewed: str, current: str | None, message: str) -> None:
        self.name = name
        self.reviewed = reviewed
        self.current = current
        super().__init__(message)
