""" "Did you mean": what counts as a near miss of a word, and how it is offered.

One rule for every place a person or an agent mistypes something kite-skills knows: a help
key (``catalog.Catalog.similar``), a command or subcommand, an option's value and a skill
name in the CLI (:class:`kite_skills.cli.help.SuggestingParser`,
:meth:`kite_skills.store.db.Store.get`). difflib is imported only when a miss needs it: a
server start imports no more.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from difflib import SequenceMatcher

CUTOFF: Final = 0.75
"""difflib's ratio from which a known word is offered: '/order' → '/orders' is 0.92,
'lst' → 'list' 0.86, 'compare-fund' → 'compare-funds' 0.96."""
MAX_WORD_CHARS: Final = 200
"""A longer word is no typo of anything kite-skills knows: nothing to compare."""
MAX_OFFERED: Final = 3


class Likeness:
    """How much candidate texts look like one word (a difflib ratio, 0 below :data:`CUTOFF`),
    with difflib's cheap upper bounds tried first, as ``difflib.get_close_matches`` does. The
    same letters in another order (``mpc`` for ``mcp``) count as just near enough: a short
    word's swapped letters are a typo whose ratio is low."""

    def __init__(self, word: str) -> None:
        import difflib

        self._letters = sorted(word)
        self._matcher: SequenceMatcher[str] = difflib.SequenceMatcher()
        self._matcher.set_seq1(word)

    def score(self, candidate: str) -> float:
        matcher = self._matcher
        matcher.set_seq2(candidate)
        if matcher.real_quick_ratio() < CUTOFF or matcher.quick_ratio() < CUTOFF:
            return 0.0
        ratio = matcher.ratio()
        if ratio < CUTOFF and sorted(candidate) == self._letters:
            return CUTOFF
        return ratio if ratio >= CUTOFF else 0.0


def similar(word: str, candidates: Iterable[str]) -> list[str]:
    """Up to three of ``candidates`` that look like ``word``, closest first (ties by name);
    none for a word longer than :data:`MAX_WORD_CHARS` or equal to a candidate."""
    if len(word) > MAX_WORD_CHARS:
        return []
    likeness = Likeness(word)
    scored = [(likeness.score(c), c) for c in set(candidates) if c != word]
    scored = [pair for pair in scored if pair[0] > 0]
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    return [c for _, c in scored[:MAX_OFFERED]]


def did_you_mean(offered: Sequence[str]) -> str:
    """``did you mean 'list'?`` (or ``'a' or 'b'``), for words already written as the message
    shows them; "" when nothing is offered."""
    return f"did you mean {' or '.join(offered)}?" if offered else ""
