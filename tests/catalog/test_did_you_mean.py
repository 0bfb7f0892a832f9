"""An unknown help key gets "did you mean" pages and the pages that mention its word
(issue 22 §4), on the embedded catalog a person and an agent browse."""

from __future__ import annotations

import pytest

from kite_skills import catalog
from kite_skills.errors import UnknownHelpKey

LOADED = catalog.load()


def unknown(key: str) -> UnknownHelpKey:
    with pytest.raises(UnknownHelpKey) as info:
        LOADED.help(key)
    return info.value


@pytest.mark.parametrize("key", ["orders", "/order", "/Orders", "/orders/", "order"])
def test_a_near_miss_suggests_the_page(key: str) -> None:
    if key == "/orders/":
        assert LOADED.help(key).key == "/orders"  # a trailing slash is no miss at all
        return
    error = unknown(key)
    assert error.similar[0].key == "/orders"
    assert "Did you mean /orders (Orders)?" in str(error)
    assert error.mentions == ()  # a plain typo: a list of pages would bury the answer


def test_a_leaf_name_alone_finds_its_page() -> None:
    error = unknown("/prepare")
    assert error.similar[0].key == "/orders/prepare"


def test_a_word_that_is_no_key_points_to_the_pages_that_mention_it() -> None:
    error = unknown("/funds")
    keys = [c.key for c in error.mentions]
    assert keys[0] == "/orders/funds-check"  # in its title: first
    assert "/daily-review/account-briefing" in keys
    assert "/" not in keys  # the root names every topic: no help
    message = str(error)
    assert "Pages that mention 'funds':\n- /orders/funds-check (Funds and margin check" in message
    assert "/orders/funds-check" in {c.key for c in error.similar}


def test_nothing_alike_gives_only_the_nearest_page() -> None:
    error = unknown("/qqqq")
    assert error.similar == () and error.mentions == ()
    assert "Did you mean" not in str(error)
    assert "Nearest page: /" in str(error)


def test_a_long_key_is_compared_with_nothing() -> None:
    error = unknown("/orders/" + "x" * 900)
    assert error.similar == () and error.mentions == ()
    assert error.nearest.key == "/orders"
