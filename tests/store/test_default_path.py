"""Where the store lives on each OS when nothing says otherwise (issue 10, item 8)."""

from __future__ import annotations

from pathlib import Path

from kite_skills.store import default_db_path


def test_linux_keeps_xdg() -> None:
    env = {"HOME": "/h", "XDG_DATA_HOME": "/d"}
    assert default_db_path(env, "linux") == Path("/d/kite-skills/skills.db")
    assert default_db_path({"HOME": "/h"}, "linux") == Path("/h/.local/share/kite-skills/skills.db")


def test_macos_uses_application_support() -> None:
    # XDG_DATA_HOME is a Linux convention; on macOS the Library folder is the place.
    env = {"HOME": "/Users/me", "XDG_DATA_HOME": "/d"}
    assert default_db_path(env, "darwin") == Path(
        "/Users/me/Library/Application Support/kite-skills/skills.db"
    )


def test_windows_uses_local_app_data() -> None:
    env = {"LOCALAPPDATA": r"C:\Users\me\AppData\Local", "USERPROFILE": r"C:\Users\me"}
    assert default_db_path(env, "win32") == Path(r"C:\Users\me\AppData\Local") / (
        "kite-skills/skills.db"
    )
    assert default_db_path({"USERPROFILE": "/u"}, "win32") == Path(
        "/u/AppData/Local/kite-skills/skills.db"
    )


def test_kite_skills_db_wins_everywhere() -> None:
    for platform in ("linux", "darwin", "win32"):
        env = {"KITE_SKILLS_DB": "/x/y.db", "HOME": "/h", "LOCALAPPDATA": "/l"}
        assert default_db_path(env, platform) == Path("/x/y.db")
    assert default_db_path({"KITE_SKILLS_DB": "~/s.db", "HOME": "/h"}, "darwin") == Path("/h/s.db")
