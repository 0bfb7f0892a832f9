"""The rendered view (kite_skills.dashboard.render) over any text: no hidden character
reaches the page, whatever the parser decodes, and no mark lands inside an attribute."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kite_skills.dashboard.render import body_html, source_html

_PIECES = [
    "&#x202E;", "&#8203;", "&ZeroWidthSpace;", "&rlm;", "%E2%80%AE", "\u202e", "\u200b",
    "<https://x/", ">", "[", "](", ")", "![", '"', "'", "```", "\n", "\n\n", " ", "05.99",
    "\\", "`", "*", "[a]: /u ", "[a]", "\r", "\ue000", "\ue001",
]  # fmt: skip
_HIDDEN = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_no_hidden_character_reaches_the_rendered_view(text: str) -> None:
    rendered = str(body_html(text))
    html = rendered + str(source_html(text, "L"))
    assert _HIDDEN.search(html) is None, (text, html)
    assert re.search(r'="[^"]*<', html) is None, (text, html)  # no markup in an attribute
    assert "\ue000" not in rendered and "\ue001" not in rendered, (text, rendered)  # no mark left
