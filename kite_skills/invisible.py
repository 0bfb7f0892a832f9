"""Which characters a person cannot see: the one rule the store refuses on write and every
display marks (:mod:`kite_skills.display`).

A character is *invisible* when Unicode says so, from two of its properties:

- general category ``Cf`` (format characters: bidi marks and overrides, zero-width spaces
  and joiners, the soft hyphen, Unicode tag characters U+E0000–E007F, which models read as
  ASCII, invisible operators U+2061–U+2064, interlinear annotation marks…), read from
  :mod:`unicodedata`;
- ``Default_Ignorable_Code_Point`` (characters a renderer shows as nothing when it has no
  glyph: variation selectors, Hangul fillers, U+034F, reserved ranges such as U+2065).
  :mod:`unicodedata` has no such property, so its ranges are written out once, below, from
  the Unicode Character Database.

Emoji and cursive scripts stay writable and readable: a ZERO WIDTH JOINER between two
pictographs (``👨‍👩‍👧``), a variation selector 15/16 after a symbol (``❤️``, ``1️⃣``), the three
subdivision flags (``🏴󠁧󠁢󠁥󠁮󠁧󠁿``, the only tag sequences Unicode recommends) and a ZERO WIDTH
(NON-)JOINER between two letters of the Arabic to Sinhala blocks (U+0600–U+0DFF: Persian
``می‌خواهم``, Devanagari conjuncts) are not invisible there: each changes how visible letters
or symbols are drawn, and an agent cannot spell words with them.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Final

__all__ = ["DEFAULT_IGNORABLE", "invisible_at", "is_invisible"]

DEFAULT_IGNORABLE: Final[tuple[tuple[int, int], ...]] = (
    # Default_Ignorable_Code_Point, from DerivedCoreProperties.txt of the Unicode Character
    # Database (https://www.unicode.org/Public/15.1.0/ucd/DerivedCoreProperties.txt; the set
    # has been stable since Unicode 9). Inclusive ranges.
    (0x00AD, 0x00AD),  # SOFT HYPHEN
    (0x034F, 0x034F),  # COMBINING GRAPHEME JOINER
    (0x061C, 0x061C),  # ARABIC LETTER MARK
    (0x115F, 0x1160),  # HANGUL CHOSEONG FILLER..JUNGSEONG FILLER
    (0x17B4, 0x17B5),  # KHMER VOWEL INHERENT AQ..AA
    (0x180B, 0x180F),  # MONGOLIAN FREE VARIATION SELECTORS, VOWEL SEPARATOR
    (0x200B, 0x200F),  # ZERO WIDTH SPACE..RIGHT-TO-LEFT MARK
    (0x202A, 0x202E),  # LEFT-TO-RIGHT EMBEDDING..RIGHT-TO-LEFT OVERRIDE
    (0x2060, 0x206F),  # WORD JOINER..NOMINAL DIGIT SHAPES (U+2065 unassigned)
    (0x3164, 0x3164),  # HANGUL FILLER
    (0xFE00, 0xFE0F),  # VARIATION SELECTOR-1..16
    (0xFEFF, 0xFEFF),  # ZERO WIDTH NO-BREAK SPACE
    (0xFFA0, 0xFFA0),  # HALFWIDTH HANGUL FILLER
    (0xFFF0, 0xFFF8),  # reserved
    (0x1BCA0, 0x1BCA3),  # SHORTHAND FORMAT LETTER OVERLAP..UP STEP
    (0x1D173, 0x1D17A),  # MUSICAL SYMBOL BEGIN BEAM..END PHRASE
    (0xE0000, 0xE0FFF),  # LANGUAGE TAG, TAG characters, VARIATION SELECTOR-17..256, reserved
)

_ZWJ: Final = "\u200d"
_VS15_VS16: Final = frozenset("\ufe0e\ufe0f")
_SKIN_TONES: Final = range(0x1F3FB, 0x1F400)
# Punctuation that Unicode lists with an emoji presentation sequence (emoji-variation-
# sequences.txt): ‼ ⁉ 〰 〽. Keycaps (#, *, 0-9 + VS16 + U+20E3) are handled apart.
_EMOJI_PUNCTUATION: Final = frozenset("\u203c\u2049\u3030\u303d")
_KEYCAP: Final = "\u20e3"
_JOINERS: Final = frozenset("\u200c\u200d")
_SHAPED_SCRIPTS: Final = range(0x0600, 0x0E00)  # Arabic .. Sinhala: joiners shape letters
# The recommended (RGI) subdivision flags: U+1F3F4, tag letters, CANCEL TAG.
_FLAG_TAGS: Final = re.compile(
    "\U0001f3f4(?:\U000e0067\U000e0062"
    "(?:\U000e0065\U000e006e\U000e0067|\U000e0073\U000e0063\U000e0074|"
    "\U000e0077\U000e006c\U000e0073)\U000e007f)"
)


@functools.lru_cache(maxsize=4096)
def is_invisible(ch: str) -> bool:
    """Whether ``ch`` is a format character (``Cf``) or default-ignorable code point."""
    if unicodedata.category(ch) == "Cf":
        return True
    code = ord(ch)
    return any(low <= code <= high for low, high in DEFAULT_IGNORABLE)


def _pictograph(ch: str) -> bool:
    return unicodedata.category(ch) == "So"


def _shaped_letter(ch: str) -> bool:
    return bool(ch) and ord(ch) in _SHAPED_SCRIPTS and unicodedata.category(ch)[0] in "LM"


def _emoji_part(text: str, index: int) -> bool:
    """Whether the invisible character at ``index`` belongs to an emoji or a cursive word a
    person sees (see the module doc)."""
    ch = text[index]
    before = text[index - 1] if index > 0 else ""
    after = text[index + 1] if index + 1 < len(text) else ""
    if ch in _VS15_VS16 and before:
        if unicodedata.category(before) in ("So", "Sm") or before in _EMOJI_PUNCTUATION:
            return True
        return before in "#*0123456789" and after == _KEYCAP
    if ch in _JOINERS and _shaped_letter(before) and _shaped_letter(after):
        return True
    if ch == _ZWJ and before and after:
        if before == "\ufe0f" or ord(before) in _SKIN_TONES:
            before = text[index - 2] if index > 1 else ""
        return bool(before) and _pictograph(before) and _pictograph(after)
    return False


def _flag_spans(text: str) -> set[int]:
    spans: set[int] = set()
    for match in _FLAG_TAGS.finditer(text):
        spans.update(range(match.start() + 1, match.end()))
    return spans


def invisible_at(text: str) -> list[int]:
    """The indexes of the invisible characters in ``text`` (see the module doc), emoji parts
    left out. Cheap for ASCII text (the common case)."""
    if text.isascii():
        return []
    found = {ch for ch in set(text) if is_invisible(ch)}
    if not found:
        return []
    pattern = re.compile("[" + "".join(re.escape(ch) for ch in sorted(found)) + "]")
    flags = _flag_spans(text) if "\U0001f3f4" in text else set()
    return [
        m.start()
        for m in pattern.finditer(text)
        if m.start() not in flags and not _emoji_part(text, m.start())
    ]
