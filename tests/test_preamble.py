"""The zipapp's preamble in-process: what it tells each machine, when shiv's cache directory
is unusable, and which old extractions it removes (the real files run in test_zipapps.py
and test_cache.py)."""

from __future__ import annotations

import fcntl
import os
import stat
import tempfile
import zipfile
from pathlib import Path

import pytest

from kite_skills.launcher.build_info import BuildInfo
from kite_skills.launcher.preamble import (
    IN_USE_SUFFIX,
    UnpackFailed,
    hold_and_prune,
    interpreter_of,
    interpreter_problem,
    platform_for,
    unpack,
    unwritable_problem,
)
from kite_skills.launcher.start import shiv_root, unsafe_problem

PYTHONS = ("3.11", "3.12", "3.13", "3.14")
LINUX = BuildInfo("linux-x86_64", PYTHONS, "0.1.0")
MAC = BuildInfo("macos-arm64", PYTHONS, "0.1.0")


def test_platform_for() -> None:
    assert platform_for("linux", "x86_64") == "linux-x86_64"
    assert platform_for("linux", "aarch64") == "linux-aarch64"
    assert platform_for("darwin", "arm64") == "macos-arm64"
    assert platform_for("darwin", "x86_64") == "macos-x86_64"
    assert platform_for("win32", "AMD64") == "windows-amd64"
    assert platform_for("win32", "ARM64") is None
    assert platform_for("freebsd14", "amd64") is None


def test_every_accepted_version_runs() -> None:
    for minor in (11, 12, 13, 14):
        assert interpreter_problem(LINUX, "cpython", (3, minor), "linux", "x86_64") is None
    assert interpreter_problem(MAC, "cpython", (3, 13), "darwin", "arm64") is None


@pytest.mark.parametrize("version", [(3, 10), (3, 9), (3, 15)])
def test_another_version_is_told_which_ones_run(version: tuple[int, int]) -> None:
    message = interpreter_problem(LINUX, "cpython", version, "linux", "x86_64", "k.pyz")
    assert message is not None and "\n" not in message
    assert message.startswith(
        f"kite-skills: k.pyz runs on CPython 3.11–3.14, but it was started with Python "
        f"{version[0]}.{version[1]} ("
    )
    assert "'python3.13 k.pyz'" in message and "MCP client's config" in message
    assert "build.sh" not in message  # no advice that leads in a circle
    # A person with no such Python is told where to get one.
    assert message.endswith(
        "none installed? get CPython 3.13 from python.org/downloads, Homebrew "
        "('brew install python@3.13') or uv ('uv python install 3.13')"
    )


def test_another_implementation_is_told_cpython() -> None:
    message = interpreter_problem(LINUX, "pypy", (3, 11), "linux", "x86_64")
    assert message is not None and "runs on CPython 3.11–3.14" in message


def test_windows_is_told_the_py_launcher() -> None:
    target = BuildInfo("windows-amd64", ("3.11", "3.14"), "0.1.0")
    message = interpreter_problem(target, "cpython", (3, 10), "win32", "AMD64", "k.pyz")
    assert message is not None and "'py -3.14 k.pyz'" in message  # the newest it accepts
    assert message.endswith(
        "get CPython 3.14 from python.org/downloads or uv ('uv python install 3.14')"
    )


@pytest.mark.parametrize(
    ("os_name", "machine", "use"),
    [
        ("darwin", "arm64", "macos-arm64"),
        ("darwin", "x86_64", "macos-x86_64"),
        ("win32", "AMD64", "windows-amd64"),
        ("linux", "aarch64", "linux-aarch64"),
    ],
)
def test_another_platform_is_told_its_file(os_name: str, machine: str, use: str) -> None:
    message = interpreter_problem(LINUX, "cpython", (3, 12), os_name, machine, "k.pyz")
    assert message is not None and "\n" not in message
    assert message.startswith("kite-skills: k.pyz is built for Linux x86_64 (CPython 3.11–3.14)")
    # The download's name (as tools/zipapps.py names the files), not a build folder.
    assert message.endswith(
        f"download kite-skills-{use}.pyz instead (from the same place as this file)"
    )
    assert "dist/" not in message


def test_a_platform_without_a_file_is_told_the_wheel() -> None:
    message = interpreter_problem(LINUX, "cpython", (3, 12), "win32", "ARM64")
    assert message is not None
    assert "no kite-skills file is built for Windows ARM64" in message and "pipx" in message
    assert "README" not in message


def test_shiv_root_follows_shiv() -> None:
    assert shiv_root({}, {"SHIV_ROOT": "/r"}) == Path("/r")
    assert shiv_root({"root": "$CACHE"}, {"CACHE": "/c"}) == Path("/c")
    assert shiv_root({}, {}) == Path("~/.shiv").expanduser()


def test_unwritable_root_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    root = blocker / "shiv"
    message = unwritable_problem(root, root / "x.pyz_0" / "site-packages" / "done")
    assert message is not None and "\n" not in message
    assert message.startswith(f"kite-skills: cannot unpack into {root} (Not a directory) — ")
    assert "must be writable: set SHIV_ROOT to a writable directory" in message
    assert unwritable_problem(tmp_path / "new", tmp_path / "new" / "x" / "done") is None
    assert (tmp_path / "new").is_dir()


def test_a_folder_where_the_lock_file_goes_is_one_line(tmp_path: Path) -> None:
    """Every start unpacks until one succeeds: a folder at shiv's lock path (``.<name>_lock``)
    would end each in a traceback (on Windows, wait for ever); it is named, with what to do."""
    root = tmp_path / "shiv"
    extraction = root / "kite-skills_0"
    lock = root / ".kite-skills_0_lock"
    lock.mkdir(parents=True)
    with zipfile.ZipFile(tmp_path / "a.pyz", "w") as archive:
        archive.writestr("site-packages/kite_skills/__init__.py", "")
    with zipfile.ZipFile(tmp_path / "a.pyz") as archive, pytest.raises(UnpackFailed) as failed:
        unpack(archive, extraction, "cp311", "done")
    message = str(failed.value)
    assert "\n" not in message
    assert message.startswith(
        f"kite-skills: cannot unpack into {root} (a folder is where its lock file goes) — "
        f"remove the folder {lock}, or set SHIV_ROOT to a writable directory of your own, e.g. "
    )
    assert not extraction.exists() and lock.is_dir()  # nothing written, nothing removed


def test_an_unpacked_extraction_needs_no_write(tmp_path: Path) -> None:
    site_packages = tmp_path / "x.pyz_0" / "site-packages"
    site_packages.mkdir(parents=True)
    (site_packages / ".kite-skills-unpacked-cp312").write_text("")
    tmp_path.chmod(0o500)
    try:
        assert unwritable_problem(tmp_path, site_packages / ".kite-skills-unpacked-cp312") is None
    finally:
        tmp_path.chmod(0o700)


@pytest.mark.parametrize(
    ("member", "tag"),
    [
        ("site-packages/pydantic_core/_pydantic_core.cpython-312-x86_64-linux-gnu.so", "cp312"),
        ("site-packages/rpds/rpds.cpython-314-darwin.so", "cp314"),
        ("site-packages/_cffi_backend.cp311-win_amd64.pyd", "cp311"),
        ("site-packages/_per_version/cp313/win32/win32api.pyd", "cp313"),
        ("site-packages/_per_version/cp313/pywin32_system32/pywintypes313.dll", "cp313"),
        ("site-packages/cryptography/hazmat/bindings/_rust.abi3.so", None),
        ("site-packages/cryptography/hazmat/bindings/_rust.pyd", None),
        ("site-packages/pydantic_core/__init__.py", None),
        ("site-packages/pydantic_core-2.50.5.dist-info/sboms/x.cp312.json", None),
    ],
)
def test_interpreter_of(member: str, tag: str | None) -> None:
    assert interpreter_of(member) == tag


def extraction(root: Path, name: str, *, ours: bool = True, marked: bool = True) -> Path:
    path = root / name
    (path / "site-packages" / ("kite_skills" if ours else "other")).mkdir(parents=True)
    if marked:
        (root / f".{name}{IN_USE_SUFFIX}").write_text("")
    return path


def test_prune_removes_idle_extractions_of_this_program_only(tmp_path: Path) -> None:
    old = extraction(tmp_path, "kite-skills.pyz_" + "a" * 64)
    (tmp_path / f".{old.name}_lock").write_text("")
    renamed = extraction(tmp_path, "ks.pyz_" + "b" * 64)
    busy = extraction(tmp_path, "kite-skills.pyz_" + "c" * 64)
    foreign = extraction(tmp_path, "other.pyz_" + "d" * 64, ours=False)
    unmarked = extraction(tmp_path, "kite-skills.pyz_" + "e" * 64, marked=False)
    unrelated = tmp_path / "notes"
    unrelated.mkdir()
    current = extraction(tmp_path, "kite-skills.pyz_" + "f" * 64, marked=False)
    # Another process uses `busy`: it holds a shared lock on its marker.
    holder = os.open(tmp_path / f".{busy.name}{IN_USE_SUFFIX}", os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_SH)
    try:
        held = hold_and_prune(tmp_path, current, prune=True)
    finally:
        os.close(holder)
    assert held is not None
    os.close(held)
    assert not old.exists() and not (tmp_path / f".{old.name}_lock").exists()
    assert not (tmp_path / f".{old.name}{IN_USE_SUFFIX}").exists()
    assert not renamed.exists()
    assert busy.is_dir() and foreign.is_dir() and unmarked.is_dir() and unrelated.is_dir()
    assert current.is_dir() and (tmp_path / f".{current.name}{IN_USE_SUFFIX}").is_file()


def test_keep_cache_removes_nothing(tmp_path: Path) -> None:
    old = extraction(tmp_path, "kite-skills.pyz_" + "a" * 64)
    current = extraction(tmp_path, "kite-skills.pyz_" + "f" * 64)
    held = hold_and_prune(tmp_path, current, prune=False)
    assert held is not None
    os.close(held)
    assert old.is_dir()


def test_the_held_lock_keeps_a_pruner_away(tmp_path: Path) -> None:
    first = extraction(tmp_path, "kite-skills.pyz_" + "a" * 64)
    second = extraction(tmp_path, "kite-skills.pyz_" + "b" * 64)
    held = hold_and_prune(tmp_path, first, prune=True)  # removes the idle second
    assert held is not None and not second.exists()
    second = extraction(tmp_path, "kite-skills.pyz_" + "b" * 64)
    other = hold_and_prune(tmp_path, second, prune=True)  # first is in use: kept
    assert other is not None and first.is_dir()
    os.close(held)
    os.close(other)


# Another user on the same machine (issue 24): the cache must be this user's alone.
NOBODY = 65534
as_root = pytest.mark.skipif(
    not hasattr(os, "getuid") or os.getuid() != 0,
    reason="handing a folder to another user (chown) needs root, as the CI runs",
)


def test_a_cache_folder_others_can_write_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "shiv"
    root.mkdir()
    extraction = root / ("kite-skills_" + "a" * 64)
    assert unsafe_problem(root, extraction) is None
    for mode in (0o777, 0o775, 0o757, 0o1777):
        root.chmod(mode)
        message = unsafe_problem(root, extraction)
        assert message is not None and "\n" not in message
        assert message.startswith(
            f"kite-skills: the cache folder {root} can be written by other users "
            f"(mode {mode:o}), who could put code there that kite-skills would run — "
            f"make it yours alone ('chmod go-w {root}') or set SHIV_ROOT to a folder of "
            "your own, e.g. SHIV_ROOT="
        ), message
        assert tempfile.gettempdir() not in message.split("SHIV_ROOT=")[-1]


def test_a_folder_above_the_cache_that_others_can_write_is_refused_unless_sticky(
    tmp_path: Path,
) -> None:
    above = tmp_path / "shared"
    root = above / "shiv"
    root.mkdir(parents=True)
    above.chmod(0o777)  # another user could rename shiv away and put their own there
    message = unsafe_problem(root, root / "x")
    assert message is not None
    assert message.startswith(f"kite-skills: the cache folder {above} can be written by other")
    above.chmod(0o1777)  # as /tmp: nobody may rename what another user made
    assert unsafe_problem(root, root / "x") is None
    above.chmod(0o775)  # a group of the user's own, as many systems make home folders
    assert unsafe_problem(root, root / "x") is None
    above.chmod(0o755)


@as_root
def test_a_cache_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "shiv"
    root.mkdir(mode=0o755)
    os.chown(root, NOBODY, NOBODY)
    message = unsafe_problem(root, root / ("kite-skills_" + "a" * 64))
    assert message is not None and "\n" not in message
    assert message.startswith(
        f"kite-skills: the cache folder {root} is owned by another user (uid {NOBODY}), who "
        "could put code there that kite-skills would run — set SHIV_ROOT to a folder of your "
        "own, e.g. SHIV_ROOT="
    ), message
    assert "chmod" not in message


@as_root
def test_a_cache_reached_through_another_users_link_is_refused(tmp_path: Path) -> None:
    """In a sticky shared folder (/tmp) another user's link to the person's own folder looks
    fine when checked, and its owner can point it at their own folder a moment later."""
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    link = shared / "shiv"
    link.symlink_to(mine)
    os.lchown(link, NOBODY, NOBODY)
    message = unsafe_problem(link, link / ("kite-skills_" + "a" * 64))
    assert message is not None and "\n" not in message
    assert message.startswith(
        f"kite-skills: the cache folder {link} goes through {link}, a symbolic link another "
        f"user (uid {NOBODY}) could point elsewhere — set SHIV_ROOT to a folder of your own"
    ), message
    os.lchown(link, 0, 0)
    assert unsafe_problem(link, link / "x") is None
    shared.chmod(0o755)


@pytest.mark.parametrize("owner", ["another user", "others can write"])
def test_an_extraction_another_user_could_have_written_is_refused(
    tmp_path: Path, owner: str
) -> None:
    if owner == "another user" and os.getuid() != 0:
        pytest.skip("handing a folder to another user (chown) needs root, as the CI runs")
    root = tmp_path / "shiv"
    extraction = root / ("kite-skills_" + "a" * 64)
    (extraction / "site-packages").mkdir(parents=True)
    root.chmod(0o700)
    if owner == "another user":
        os.chown(extraction, NOBODY, NOBODY)
        why = f"is owned by another user (uid {NOBODY})"
    else:
        extraction.chmod(0o777)
        why = "can be written by other users (mode 777)"
    message = unsafe_problem(root, extraction)
    assert message == (
        f"kite-skills: the unpacked copy {extraction} {why}, who could have put code there "
        f"that kite-skills would run — remove it (rm -rf '{extraction}') and start again: "
        "it is unpacked afresh"
    )


def test_the_unwritable_message_never_advises_the_shared_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", "/home/me")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    message = unwritable_problem(blocker / "shiv", blocker / "shiv" / "x" / "done")
    assert message is not None
    assert "SHIV_ROOT=/home/me/.cache/kite-skills-shiv " in message, message
    assert tempfile.gettempdir() not in message.split("SHIV_ROOT=")[-1]


def test_a_new_cache_folder_is_made_for_this_user_alone(tmp_path: Path) -> None:
    root = tmp_path / "new" / "shiv"
    old = os.umask(0o002)  # a common umask: folders group-writable
    try:
        assert unwritable_problem(root, root / "x" / "done") is None
    finally:
        os.umask(old)
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert unsafe_problem(root, root / "x") is None
