"""This OS's per-user folders, each OS's answer checked on any OS."""

from __future__ import annotations

from pathlib import Path

import pytest

from kite_skills import os_dirs
from kite_skills.os_dirs import config_dir, data_dir, home

HOMES = {"HOME": "/h", "USERPROFILE": "C:/Users/h"}


@pytest.mark.parametrize(
    ("platform", "env", "data", "config"),
    [
        ("linux", HOMES, "/h/.local/share", "/h/.config"),
        ("linux", {**HOMES, "XDG_DATA_HOME": "/d", "XDG_CONFIG_HOME": "/c"}, "/d", "/c"),
        (
            "linux",
            {**HOMES, "XDG_DATA_HOME": "d", "XDG_CONFIG_HOME": "c"},
            "/h/.local/share",
            "/h/.config",
        ),
        ("darwin", HOMES, "/h/Library/Application Support", "/h/Library/Application Support"),
        ("win32", HOMES, "C:/Users/h/AppData/Local", "C:/Users/h/AppData/Roaming"),
        ("win32", {**HOMES, "LOCALAPPDATA": "L:/", "APPDATA": "R:/"}, "L:/", "R:/"),
    ],
)
def test_each_os_folders(platform: str, env: dict[str, str], data: str, config: str) -> None:
    assert data_dir(env, platform) == Path(data)
    assert config_dir(env, platform) == Path(config)


def test_home_without_home_is_the_password_databases() -> None:
    assert home({"HOME": "  "}, "linux") == home({}, "linux")
    assert home({}, "linux").is_absolute()


def test_bin_dir_is_dot_local_bin_everywhere() -> None:
    """Where install-command puts its launcher (pipx and uv use it too)."""
    assert os_dirs.bin_dir({"HOME": "/h"}, "linux") == Path("/h/.local/bin")
    assert os_dirs.bin_dir({"HOME": "/h"}, "darwin") == Path("/h/.local/bin")
    assert os_dirs.bin_dir({"USERPROFILE": r"C:\Users\p"}, "win32") == Path(
        r"C:\Users\p", ".local", "bin"
    )


def test_downloads_and_temp_folders() -> None:
    linux = os_dirs.downloads_and_temp({"HOME": "/h", "TMPDIR": "/scratch"}, "linux")
    assert {Path("/h/Downloads"), Path("/scratch"), Path("/tmp"), Path("/var/tmp")} <= set(linux)
    windows = os_dirs.downloads_and_temp({"USERPROFILE": "/u", "TEMP": "/u/T"}, "win32")
    assert {Path("/u/Downloads"), Path("/u/T"), Path("/u/AppData/Local/Temp")} <= set(windows)
