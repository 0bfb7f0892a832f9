"""Issue 38: a line that mixes right-to-left characters with left-to-right letters or
European digits is refused on write (a browser or a terminal that does bidi reverses the run
holding its numbers), whoever writes it; a line in one script stays writable. And U+2028 /
U+2029 are refused in a body like the other line-breaking controls."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kite_skills.errors import InvalidSkill
from kite_skills.rtl import is_rtl, mixed_at
from kite_skills.store import Store, agent, human

from .helpers import counts

# The class, not the case: Hebrew punctuation that looks like | : ', letters of each
# right-to-left script (R and AL), Arabic-Indic digits and separators (AN), presentation
# forms, and a code point Unicode has not assigned yet in a right-to-left block.
RIGHT_TO_LEFT = {
    "U+05C0 HEBREW PUNCTUATION PASEQ": "\u05c0",
    "U+05C3 HEBREW PUNCTUATION SOF PASUQ": "\u05c3",
    "U+05F3 HEBREW PUNCTUATION GERESH": "\u05f3",
    "U+05D0 HEBREW LETTER ALEF": "\u05d0",
    "U+0627 ARABIC LETTER ALEF": "\u0627",
    "U+0661 ARABIC-INDIC DIGIT ONE": "\u0661",
    "U+066B ARABIC DECIMAL SEPARATOR": "\u066b",
    "U+0710 SYRIAC LETTER ALAPH": "\u0710",
    "U+0780 THAANA LETTER HAA": "\u0780",
    "U+07CA NKO LETTER A": "\u07ca",
    "U+0800 SAMARITAN LETTER ALAF": "\u0800",
    "U+1E900 ADLAM CAPITAL LETTER ALIF": "\U0001e900",
    "U+FB2A HEBREW LETTER SHIN WITH SHIN DOT": "\ufb2a",
    "U+FE8D ARABIC LETTER ALEF ISOLATED FORM": "\ufe8d",
    "U+05FF (unassigned)": "\u05ff",
}
# Left-to-right letters and European digits (bidi L and EN).
LEFT_TO_RIGHT = ["a", "Z", "7", "\u06f7", "\u0915", "\u00b2"]


@pytest.mark.parametrize("named", sorted(RIGHT_TO_LEFT))
def test_a_line_mixing_right_to_left_with_latin_or_digits_is_refused(
    store: Store, db_path: Path, named: str
) -> None:
    ch = RIGHT_TO_LEFT[named]
    for other in LEFT_TO_RIGHT:
        body = (
            f"# Limits\n\nstop-loss {ch} 900 {ch} target\n" if other == "a" else f"x\n{ch}{other}\n"
        )
        with pytest.raises(InvalidSkill) as info:
            agent.save(store, "limits", "When setting limits", body, who="bot")
        where = "line 3, column 11" if other == "a" else "line 2, column 1"
        assert f"({named} at {where})" in str(info.value)
        assert "write each line in one script" in str(info.value)
    assert counts(db_path) == (0, 0)


def test_the_attack_from_the_issue_is_refused_for_agents_and_people(
    store: Store, db_path: Path
) -> None:
    body = "# Limits\n\nstop-loss \u05c0 1200 \u05c0 target\u05c3 900 \u05f3\n"
    with pytest.raises(InvalidSkill, match="U\\+05C0 HEBREW PUNCTUATION PASEQ at line 3"):
        agent.save(store, "limits", "When setting limits", body, who="bot")
    with pytest.raises(InvalidSkill, match="U\\+05C0"):
        human.create(store, "limits", description="Limits", body=body, via="cli", who="pat")
    with pytest.raises(InvalidSkill, match=r"description of 'limits' .*character 7\)"):
        agent.save(store, "limits", "limit \u05c0 900", "# Limits\n", who="bot")
    assert counts(db_path) == (0, 0)


def test_a_line_in_one_script_stays_writable(store: Store) -> None:
    """One step inside the rule: the same characters, each line in one script."""
    body = (
        "# Limits\n\nstop-loss 900, target 1200\n"
        "\u05d0\u05dc \u05ea\u05de\u05db\u05d5\u05e8 "
        "\u05d1\u05dc\u05d9 \u05dc\u05e9\u05d0\u05d5\u05dc\u05f3\n"
        "\u0628\u0639 \u0661\u0662\u0660\u0660 \u0633\u0647\u0645 \u05c0 \u0710\u0712\n"
    )
    agent.save(store, "limits", "When setting limits", body, who="bot")
    assert store.get("limits").body == body
    agent.save(
        store, "hebrew", "\u05de\u05ea\u05d9 \u05dc\u05de\u05db\u05d5\u05e8", "# x\n", who="b"
    )
    assert store.get("hebrew").description == "\u05de\u05ea\u05d9 \u05dc\u05de\u05db\u05d5\u05e8"


@given(st.text(min_size=1, max_size=40))
def test_mixed_at_finds_a_mix_exactly_when_a_line_holds_both(line: str) -> None:
    rtl = [i for i, ch in enumerate(line) if is_rtl(ch)]
    ltr = any(unicodedata.bidirectional(ch) in ("L", "EN") for ch in line)
    assert mixed_at(line) == (rtl[0] if rtl and ltr else None)


@pytest.mark.parametrize("ch", ["\u2028", "\u2029"])
def test_a_body_refuses_line_and_paragraph_separators(store: Store, db_path: Path, ch: str) -> None:
    """Issue 38: accepted in a body, then flagged as hidden wherever shown."""
    with pytest.raises(InvalidSkill) as info:
        agent.save(store, "notes", "Notes", f"# Notes\n1. one{ch}2. two\n", who="bot")
    assert f"a control character, U+{ord(ch):04X}" in str(info.value)
    assert "at line 2, column 7: remove it (write line breaks as \\n alone)" in str(info.value)
    with pytest.raises(InvalidSkill, match=f"U\\+{ord(ch):04X}"):
        human.create(store, "notes", description="Notes", body=f"a{ch}", via="cli", who="pat")
    assert counts(db_path) == (0, 0)
