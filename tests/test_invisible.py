"""Issue 45: where a joiner or a variation selector counts as visible (kite_skills/invisible.py),
on both sides of each boundary: the store refuses what counts as hidden, and every display
marks it (kite_skills/display.py)."""

from __future__ import annotations

import pytest

from kite_skills.display import count_hidden, visible
from kite_skills.errors import InvalidSkill
from kite_skills.invisible import invisible_at
from kite_skills.store._validate import check_body

ZWNJ, ZWJ = "\u200c", "\u200d"
VS16, VS15, KEYCAP = "\ufe0f", "\ufe0e", "\u20e3"

# (what, text, where its hidden characters are): a joiner is visible only between two letters
# (or marks) of a script that joins them, the Arabic to Sinhala blocks (U+0600-U+0DFF).
JOINERS = [
    ("between two Persian letters", f"می{ZWNJ}خواهم", []),
    ("between two Arabic letters", f"ب{ZWJ}ت", []),
    ("after a Devanagari virama", f"क्{ZWJ}ष", []),
    ("between two Sinhala letters, the last block", f"ක{ZWNJ}ඛ", []),
    ("between two Hebrew letters, below the blocks", f"א{ZWNJ}ב", [1]),
    ("between two Thai letters, above the blocks", f"ก{ZWNJ}ข", [1]),
    ("between two Latin letters", f"a{ZWJ}b", [1]),
    ("after a Persian letter, before a Latin one", f"م{ZWNJ}a", [1]),
    ("after a Latin letter, before a Persian one", f"a{ZWNJ}م", [1]),
    ("after a Persian letter, before a space", f"م{ZWNJ} خ", [1]),
    ("after a Persian letter, before an Arabic digit", f"م{ZWNJ}٣", [1]),
    ("after an Arabic digit, before a Persian letter", f"٣{ZWNJ}م", [1]),
    ("at the end, after a Persian letter", f"خ{ZWNJ}", [1]),
    ("at the start, before a Persian letter", f"{ZWJ}خ", [0]),
    ("two between two Persian letters", f"م{ZWNJ}{ZWNJ}خ", [1, 2]),
]

# A variation selector after a digit, #, or *: visible only in a keycap sequence.
KEYCAPS = [
    ("keycap 1", f"1{VS16}{KEYCAP}", []),
    ("keycap 0", f"0{VS16}{KEYCAP}", []),
    ("keycap 9", f"9{VS16}{KEYCAP}", []),
    ("keycap #", f"#{VS16}{KEYCAP}", []),
    ("keycap *", f"*{VS16}{KEYCAP}", []),
    ("a digit and a selector at the end", f"price 1{VS16}", [7]),
    ("a digit and a selector before a letter", f"1{VS16}x", [1]),
    ("a digit and a text-style selector", f"5{VS15} lots", [1]),
    ("a digit and a selector before a space and a keycap", f"1{VS16} {KEYCAP}", [1]),
    ("two selectors before the keycap", f"1{VS16}{VS16}{KEYCAP}", [1, 2]),
    ("a letter, a selector and a keycap", f"a{VS16}{KEYCAP}", [1]),
    ("a selector and a keycap at the start", f"{VS16}{KEYCAP}", [0]),
]


@pytest.mark.parametrize(
    ("text", "hidden"),
    [pytest.param(text, hidden, id=what) for what, text, hidden in JOINERS + KEYCAPS],
)
def test_where_a_joiner_or_a_selector_counts_as_hidden(text: str, hidden: list[int]) -> None:
    assert invisible_at(text) == hidden
    assert count_hidden(text) == len(hidden)
    marked = visible(text)
    for index in hidden:
        assert f"\\u{ord(text[index]):04x}" in marked
    if not hidden:
        assert marked == text
        assert check_body("my-skill", f"# Steps\n{text}\n") == f"# Steps\n{text}\n"
    else:
        with pytest.raises(InvalidSkill, match=f"U\\+{ord(text[hidden[0]]):04X}"):
            check_body("my-skill", f"# Steps\n{text}\n")
