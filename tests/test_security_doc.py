"""SECURITY.md names, for each claim, the test that checks it: every such name must exist, so
a renamed or deleted test cannot leave a claim unchecked without anyone noticing."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def test_every_test_named_in_security_md_exists() -> None:
    text = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    references = REFERENCE.findall(text)
    assert len(references) > 30, references
    missing = []
    for file, name in sorted(set(references)):
        source = (ROOT / file).read_text(encoding="utf-8") if (ROOT / file).is_file() else ""
        defined = re.compile(rf"^(?:async def|def|class) {name}\b|^{name} = ", re.MULTILINE)
        if not defined.search(source):
            missing.append(f"{file}::{name}")
    assert missing == [], f"SECURITY.md names tests that do not exist: {missing}"
