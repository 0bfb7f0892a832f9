"""docs/guard.md's table of limits is the rule rows of kite_skills/guard/limits.py: each
setting with its default, none missing and none extra."""

from __future__ import annotations

import re
from pathlib import Path

from kite_skills.guard.limits import EXTRA, RULES

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guard.md"


def test_the_limits_table_is_the_rule_rows() -> None:
    rows = re.findall(r"^\| [^|]+ \| `(\w+)` \| [^|]+ \| ([^|]+) \|$", PAGE.read_text(), re.M)
    table = {setting: default.strip() for setting, default in rows}
    expected = {r.setting: r.default for r in RULES} | {name: "on" for name, _ in EXTRA}
    assert table == expected
