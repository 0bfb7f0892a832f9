"""The Skills extension lives in one room, kite_skills/server/skills_extension.py: its id,
its settings, its methods and the capability fix-up are written nowhere else in the package."""

from __future__ import annotations

from pathlib import Path

import kite_skills

PACKAGE = Path(kite_skills.__file__).parent
ROOM = PACKAGE / "server" / "skills_extension.py"
# What only the room may write: the id, the settings' key, the methods, the capability.
OWNED = (
    "io.modelcontextprotocol/skills",
    "directoryRead",
    '"skills/list"',
    '"skills/get"',
    '"resources/directory/read"',
    "server.extensions[",
    '"extensions"',
)


def test_the_extension_is_written_only_in_its_room() -> None:
    elsewhere = [
        f"{path.relative_to(PACKAGE)}: {needle}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != ROOM
        for needle in OWNED
        if needle in path.read_text(encoding="utf-8")
    ]
    assert elsewhere == []
    room = ROOM.read_text(encoding="utf-8")
    assert all(needle in room for needle in OWNED)  # the test names what the room holds
