""" "Did you mean" (kite_skills/suggest.py): which known words are offered for a mistyped one,
at the edges of its one rule."""

from __future__ import annotations

from kite_skills import suggest


def test_a_word_exactly_at_the_cutoff_is_offered_and_one_step_below_is_not() -> None:
    assert suggest.Likeness("abcd").score("abcx") == suggest.CUTOFF  # 2*3/8
    assert suggest.similar("abcd", ["abcx"]) == ["abcx"]
    assert suggest.Likeness("abcd").score("abcxy") == 0.0  # 2*3/9, below
    assert suggest.similar("abcd", ["abcxy"]) == []


def test_swapped_letters_count_as_a_near_miss() -> None:
    assert suggest.similar("mpc", ["mcp", "cli", "dashboard"]) == ["mcp"]
    assert suggest.similar("mpx", ["mcp"]) == []  # other letters: no


def test_closest_first_at_most_three_and_never_the_word_itself() -> None:
    names = ["compare-funds", "compare-fund", "compare-fonds", "compare-funds-2", "sip-setup"]
    assert suggest.similar("compare-fund", names) == [
        "compare-funds",  # 24/25
        "compare-funds-2",  # 24/27
        "compare-fonds",  # 22/25
    ]
    assert len(suggest.similar("compare-fund", names)) == suggest.MAX_OFFERED


def test_a_word_longer_than_any_typo_is_compared_with_nothing() -> None:
    at_limit = "a" * suggest.MAX_WORD_CHARS
    assert suggest.similar(at_limit, [at_limit + "b"]) == [at_limit + "b"]
    assert suggest.similar(at_limit + "a", [at_limit + "ab"]) == []


def test_the_offer_is_one_phrase() -> None:
    assert suggest.did_you_mean([]) == ""
    assert suggest.did_you_mean(["'list'"]) == "did you mean 'list'?"
    assert suggest.did_you_mean(["'a'", "'b'"]) == "did you mean 'a' or 'b'?"
