"""Which skill names look alike: the one rule the dashboard and the CLI ask when they flag a
new draft named like another skill (issue 38: ``cornpare-funds`` beside ``compare-funds``, an
agent's draft named to pass for a skill the person trusts, or for a catalog recipe).

A name's *skeleton* writes each letter group that reads as another as what it reads as
(:data:`LOOK_ALIKES`: rn → m, vv → w, cl → d, 0 → o, 1 → l, 5 → s). Two names look alike when
their skeletons are equal, or, both being at least :data:`MIN_EDIT_CHARS` long, one edit apart
(a character added, dropped or changed, or two neighbours swapped) unless the names differ
only in their digits (``sip-2024-01`` and ``sip-2024-02`` are a series, read apart). A draft is
flagged, never refused: the person decides.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from kite_skills.catalog import skill_names

if TYPE_CHECKING:
    from kite_skills.store import Skill


LOOK_ALIKES: Final = (("rn", "m"), ("vv", "w"), ("cl", "d"), ("0", "o"), ("1", "l"), ("5", "s"))
"""Letter groups that read as another in a name, each written as what it reads as (issue 38:
``cornpare-funds`` beside ``compare-funds``)."""
MIN_EDIT_CHARS: Final = 5
"""Two names whose skeletons differ by one edit are look-alikes when both skeletons have at
least this many characters (shorter names differ by too much in one letter)."""
LOOK_ALIKE_RULE: Final = (
    "a name looks like another when, with rn read as m, vv as w, cl as d, 0 as o, 1 as l "
    f"and 5 as s, the two are the same or (both at least {MIN_EDIT_CHARS} characters) one "
    "letter apart: one added, dropped, changed, or two neighbours swapped (names that differ "
    "only in their digits are not look-alikes)"
)


@functools.lru_cache(maxsize=4096)
def skeleton(name: str) -> str:
    """``name`` with each look-alike group written as what it reads as (:data:`LOOK_ALIKES`)."""
    for group, reads_as in LOOK_ALIKES:
        name = name.replace(group, reads_as)
    return name


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` becomes ``b`` by one added, dropped or changed character, or two
    neighbours swapped."""
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        swapped = len(diff) == 2 and diff[1] == diff[0] + 1
        return len(diff) == 1 or (swapped and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return len(long) - len(short) == 1 and any(
        long[:i] + long[i + 1 :] == short for i in range(len(long))
    )


def looks_like(a: str, b: str) -> bool:
    """Whether a reader could take the name ``a`` for ``b`` (:data:`LOOK_ALIKE_RULE`)."""
    if a == b:
        return False
    x, y = skeleton(a), skeleton(b)
    if x == y:
        return True
    if a.translate(_NO_DIGITS) == b.translate(_NO_DIGITS):
        return False  # a series: the digits are read as digits
    return min(len(x), len(y)) >= MIN_EDIT_CHARS and _one_edit(x, y)


_NO_DIGITS: Final = str.maketrans("", "", "0123456789")


def _deletions(text: str) -> set[str]:
    return {text[:i] + text[i + 1 :] for i in range(len(text))}


class LookAlikes:
    """The names a reader could take a name for, among many (every skill's and the
    catalog's): each name indexed by its skeleton and the skeleton less one character, so
    a look-up reads a few keys rather than every name."""

    def __init__(self, names: Iterable[str]) -> None:
        self._by_key: dict[str, set[str]] = {}
        for name in names:
            shape = skeleton(name)
            for key in {shape} | _deletions(shape):
                self._by_key.setdefault(key, set()).add(name)

    def of(self, name: str) -> list[str]:
        """The names ``name`` looks like (:func:`looks_like`), sorted."""
        shape = skeleton(name)
        found: set[str] = set()
        for key in {shape} | _deletions(shape):
            found |= self._by_key.get(key, set())
        return sorted(other for other in found if looks_like(name, other))


def is_new_draft(skill: Skill) -> bool:
    """A draft waiting to be published (not a revision proposed beside a text): its name is
    the one an agent chose, so it is the one checked."""
    return skill.waiting and skill.proposed is None


def look_alikes(
    skills: list[Skill], *, name: str | None = None
) -> dict[str, list[tuple[str, str]]]:
    """For each new draft among ``skills`` (waiting to be published, not a proposed revision;
    only ``name`` when given), the names of the other skills and of the catalog's skills it
    looks like, each with where that one is (``live``, ``draft``, ``archived``,
    ``catalog``); a draft that looks like none is left out."""
    drafts = [s.name for s in skills if is_new_draft(s) and (name is None or s.name == name)]
    if not drafts:
        return {}
    where = dict.fromkeys(skill_names(), "catalog") | {s.name: s.status for s in skills}
    return {
        draft: list(others) for draft, others in _found(frozenset(where.items()), tuple(drafts))
    }


@functools.lru_cache(maxsize=2)  # the skills list's, and one skill page's
def _found(
    where: frozenset[tuple[str, str]], drafts: tuple[str, ...]
) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """:func:`look_alikes` for one set of names and drafts: the skills list asks again for
    every page it serves, and the names seldom change between two."""
    status = dict(where)
    names = LookAlikes(status)
    found = (
        (draft, tuple((other, status[other]) for other in names.of(draft))) for draft in drafts
    )
    return tuple((draft, others) for draft, others in found if others)
