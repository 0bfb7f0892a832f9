"""NUL in a search text is refused with its own message (issue 9, item 14): SQLite cuts the
text at the NUL and used to answer "unterminated string … another process is busy"."""

from __future__ import annotations

from pathlib import Path

import pytest

from kite_skills.errors import InvalidQuery
from kite_skills.store import Store, human


@pytest.mark.parametrize(("q", "position"), [("\x00", 1), ("a\x00b", 2), ("funds \x00", 7)])
def test_nul_in_a_search_is_refused(tmp_path: Path, q: str, position: int) -> None:
    with Store.open(tmp_path / "s.db") as store:
        human.import_skills(store, [("funds", "Funds", "# Funds\n")], via="cli", who="p")
        with pytest.raises(InvalidQuery) as info:
            store.search(q)
    message = str(info.value)
    assert message.startswith("search text contains a NUL character")
    assert f"at character {position}" in message
    assert "busy" not in message and "unterminated" not in message
