"""Whether the live skills changed: the one place that decides it.

The MCP server asks three questions of the same file: *what are the live skills now* (a
prompts listing), *did anything change since I last looked* (never waiting: the event loop
asks it), and *what changed since the last look* (the change feed turns the answer into
notifications). :class:`LiveSkills` answers all three for one :class:`~.db.Store`, so they
can never disagree.

Each reading is compared with the one before it of its kind — a look's names and versions
(``updated_at``), a listing's names and descriptions — and :attr:`Listing.generation` moves on
whenever one finds a live skill that came or went, another version or another description (a
body alone changes the version, which a look sees: the server looks at every commit of
another process and after each of its own writes). Nothing else moves it: a read receipt, a
draft saved beside the live skills or a revision waiting for a person commit to the file and
are read past, but the generation stays, so an answer kept against it stays good.

Cost, at 100,000 live skills (``bench/run.py`` sections 2 and 4): :meth:`LiveSkills.look`
reads names and versions from a covering index and no text, so one unreadable row cannot
blind it and it answers fast; descriptions (about a second to read) are read by
:meth:`LiveSkills.listing` only when something was committed since the last listing, and by
:meth:`LiveSkills.described` after the caller has announced what :meth:`~LiveSkills.look`
found. :meth:`LiveSkills.unchanged` reads no row: one ``stat`` and one PRAGMA.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

from .db import Mark, Store
from .records import SkillSummary

__all__ = ["Listing", "LiveChange", "LiveSkills"]


@dataclass(frozen=True)
class Listing:
    """Every live skill's name and description, sorted by name, and the generation they
    belong to: two listings with the same generation hold the same skills."""

    generation: int
    skills: tuple[SkillSummary, ...]


@dataclass(frozen=True)
class LiveChange:
    """What :meth:`LiveSkills.look` found since the look before it."""

    first: bool = False
    """The first look: nothing to compare with (and nothing to announce)."""
    came_or_went: bool = False
    """A live skill came or went (published, archived, deleted, renamed…)."""
    changed: tuple[str, ...] = ()
    """Every live skill that came, went or has another version (``updated_at``), by name."""

    @property
    def moved(self) -> bool:
        """Whether the live skills' versions differ from the last look (or this was the
        first): only then can a description have changed."""
        return self.first or bool(self.changed)


@dataclass(frozen=True)
class _Listed:
    mark: Mark  # the file's mark taken just before the rows were read
    listing: Listing


class LiveSkills:
    """The live skills of one store, as last read, and what changed since. Safe to share
    between threads: the readings are taken one at a time, and :meth:`unchanged` never
    waits for them."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._generation = 0
        self._listed: _Listed | None = None  # replaced whole, so unchanged() reads it unlocked
        self._versions: dict[str, str] | None = None  # as the last look read them
        self._descriptions: dict[str, str] | None = None  # as the last described() saw
        self._unchecked: set[str] = set()  # changed names a failed described() did not read
        self._polled: int | None = None  # the store's data_version at the last look

    # ---- the listing ----------------------------------------------------------------------

    def listing(self) -> Listing:
        """The live skills' names and descriptions (no body; a row that is not valid UTF-8
        is left out and logged once by the store). Reads them only when something was
        committed to the file since the last listing; otherwise answers the last one."""
        with self._lock:
            return self._listing()

    def unchanged(self) -> Listing | None:
        """The last listing, when :meth:`listing` would answer the same now, found without
        waiting and without reading a row. None when that cannot be told this way (nothing
        was listed yet, something was committed since, another thread is using the store,
        the file was replaced or is gone): then call :meth:`listing` off the event loop."""
        listed = self._listed
        if listed is None:
            return None
        mark = self._store.mark_without_waiting()
        return listed.listing if mark is not None and mark == listed.mark else None

    def _listing(self) -> Listing:
        listed = self._listed
        mark = self._store.mark()  # before the rows: a commit in between is read again later
        if listed is not None and listed.mark == mark:
            return listed.listing
        skills = tuple(self._store.live_summaries())
        if listed is not None and listed.listing.skills == skills:
            skills = listed.listing.skills  # keep one copy, not two
        elif listed is not None:
            self._generation += 1
        listing = Listing(self._generation, skills)
        self._listed = _Listed(mark, listing)
        return listing

    # ---- what changed since the last look ------------------------------------------------

    def look(self) -> LiveChange:
        """Read the live skills' names and versions (no text) and say what differs from the
        previous look. Raises ``StoreUnavailable`` (or ``sqlite3.Error``) when the store
        cannot be read; the next look then compares with the last good one."""
        with self._lock:
            try:
                if self._polled is None:
                    self._polled = self._store.data_version()
                return self._look()
            except BaseException:
                self._polled = None  # read everything again once the store answers
                raise

    def poll(self) -> LiveChange | None:
        """:meth:`look`, when another connection (another process) committed to the file
        since the last look, or the file was replaced; None (and nothing read) otherwise.
        A write through this store is not seen here: its writer calls :meth:`look`."""
        with self._lock:
            try:
                version = self._store.data_version()
                if version == self._polled:
                    return None
                if self._polled is None:
                    self._polled = version
                change = self._look()
                self._polled = version
                return change
            except BaseException:
                self._polled = None
                raise

    def _look(self) -> LiveChange:
        versions = self._store.live_versions()
        previous, self._versions = self._versions, versions
        if previous is None:
            return LiveChange(first=True)
        if previous == versions:
            return LiveChange()
        self._moved_on()
        # A name is in the items' symmetric difference when it came, went or has another
        # version: compared by the dicts' own code, where a loop over every name took about
        # 70 ms at 100,000 live skills, for each other process's commit.
        return LiveChange(
            came_or_went=previous.keys() != versions.keys(),
            changed=tuple(sorted({name for name, _ in previous.items() ^ versions.items()})),
        )

    def _moved_on(self) -> None:
        """A new generation, which the listing kept so far takes too: it is read again as
        ever once the file's mark moved on, and an answer kept against the old generation is
        not given again. Each generation is thus paired with one listing only."""
        self._generation += 1
        listed = self._listed
        if listed is not None:
            self._listed = replace(
                listed, listing=replace(listed.listing, generation=self._generation)
            )

    def described(self, change: LiveChange) -> bool:
        """Whether a live skill named in ``change`` (what :meth:`look` found) kept its name but
        changed its description since the last call (False the first time, which reads every
        description once, through :meth:`listing`). After that only the changed skills'
        descriptions are read: a description changes only with the skill's version, and
        reading all of them took about a second at 100,000 live skills, which held up the
        next look (bench section 4). Call it after announcing what :meth:`look` found."""
        with self._lock:
            before = self._descriptions
            if before is None:
                self._descriptions = {s.name: s.description for s in self._listing().skills}
                return False
            names = sorted(self._unchecked.union(change.changed))
            if not names:
                return False
            self._unchecked = set(names)  # read again next time if this reading fails
            now = self._store.live_descriptions(names)
            self._unchecked = set()
            said = any(name in before and before[name] != text for name, text in now.items())
            for name in names:
                if name in now:
                    before[name] = now[name]
                else:
                    before.pop(name, None)
            return said
