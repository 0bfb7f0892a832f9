"""shiv's cache with the real zipapp: an unusable cache directory is one line, old
extractions of this program go away once nothing runs them (two builds at once) but never
while a start fills them, the same bytes under two names share one extraction, and a cache
another user could write is refused."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from pathlib import Path

import pytest

from kite_skills.launcher.start import UNPACKED

from .server.harness import RawPeer, server_env, zipapp

pytestmark = pytest.mark.zipapp


def version(pyz: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(pyz), "--version"], capture_output=True, text=True, env=env, timeout=60
    )


def assert_one_line_about(result: subprocess.CompletedProcess[str], root: Path) -> None:
    assert result.returncode == 1
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()  # not shiv's traceback
    assert line.startswith(f"kite-skills: cannot unpack into {root} ("), line
    assert "that directory must be writable: set SHIV_ROOT to a writable directory" in line


def test_unwritable_shiv_root_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    root = blocker / "shiv"
    assert_one_line_about(version(zipapp(), server_env(root, tmp_path / "s.db")), root)


def test_unwritable_home_without_shiv_root_is_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home-is-a-file"
    home.write_text("")
    env = server_env(tmp_path, tmp_path / "s.db")
    del env["SHIV_ROOT"]
    env["HOME"] = str(home)
    assert_one_line_about(version(zipapp(), env), home / ".shiv")


def another_build(source: Path, target: Path) -> str:
    """The same program with another build id: to shiv's cache, a different build. Only
    environment.json changes; every other member keeps its bytes as stored, compressed (packing
    the archive again took half a minute: some members are LZMA)."""
    with zipfile.ZipFile(source) as old:
        info = old.getinfo("environment.json")
        environment = json.loads(old.read(info))
    assert info.compress_type == zipfile.ZIP_DEFLATED and not info.flag_bits & 0x08, info
    environment["build_id"] = "0" * 63 + "1"
    body = json.dumps(environment).encode()
    deflate = zlib.compressobj(wbits=-15)  # raw deflate, as in a zip member
    packed = deflate.compress(body) + deflate.flush()
    fields = (zlib.crc32(body), len(packed), len(body))  # CRC-32, compressed and full size
    delta = len(packed) - info.compress_size
    data = bytearray(source.read_bytes())
    # The central directory (at the end): this member's fields, and the offsets of the members
    # after it (offsets count from the archive's start, after the preamble).
    end = data.rindex(b"PK\x05\x06")
    size, start = struct.unpack_from("<2L", data, end + 12)
    prefix = end - size - start
    record = end - size
    while record < end:
        names, extra, comment = struct.unpack_from("<3H", data, record + 28)
        (offset,) = struct.unpack_from("<L", data, record + 42)
        if data[record + 46 : record + 46 + names] == b"environment.json":
            struct.pack_into("<3L", data, record + 16, *fields)
        elif offset > info.header_offset - prefix:
            struct.pack_into("<L", data, record + 42, offset + delta)
        record += 46 + names + extra + comment
    struct.pack_into("<L", data, end + 16, start + delta)
    # The member itself: its local header's fields, then the new compressed bytes.
    struct.pack_into("<3L", data, info.header_offset + 14, *fields)
    names, extra = struct.unpack_from("<2H", data, info.header_offset + 26)
    begin = info.header_offset + 30 + names + extra
    data[begin : begin + info.compress_size] = packed
    target.parent.mkdir(parents=True)
    target.write_bytes(data)
    with zipfile.ZipFile(target) as new:
        assert json.loads(new.read("environment.json")) == environment
    return str(environment["build_id"])


def build_id(pyz: Path) -> str:
    with zipfile.ZipFile(pyz) as archive:
        return str(json.loads(archive.read("environment.json"))["build_id"])


def serving(pyz: Path, root: Path, db: Path) -> RawPeer:
    peer = RawPeer(pyz, root, db)
    assert peer.initialize({})["result"]["serverInfo"]["name"]
    return peer


def test_two_builds_running_keep_their_extractions_then_the_old_one_goes(
    tmp_path: Path,
) -> None:
    root = tmp_path / "shiv"
    new = tmp_path / "new" / "kite-skills.pyz"
    new.parent.mkdir()
    new.write_bytes(zipapp().read_bytes())
    old = tmp_path / "old" / "kite-skills.pyz"
    old_dir = root / f"kite-skills_{another_build(zipapp(), old)}"
    new_dir = root / f"kite-skills_{build_id(new)}"
    foreign = root / ("other.pyz_" + "9" * 64) / "site-packages"
    foreign.mkdir(parents=True)

    first = serving(old, root, tmp_path / "a.db")
    second = serving(new, root, tmp_path / "b.db")
    try:
        assert old_dir.is_dir() and new_dir.is_dir(), "the second start removed a running build"
    finally:
        for peer in (first, second):
            code, err = peer.close()
            assert code == 0, err
    assert old_dir.is_dir() and new_dir.is_dir()

    kept = server_env(root, tmp_path / "s.db", KITE_SKILLS_KEEP_CACHE="1")
    assert version(new, kept).returncode == 0
    assert old_dir.is_dir(), "KITE_SKILLS_KEEP_CACHE=1 removed an extraction"

    assert version(new, server_env(root, tmp_path / "s.db")).returncode == 0
    assert not old_dir.exists(), "the third start left the old build's extraction"
    assert new_dir.is_dir() and foreign.is_dir()
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == sorted(
        [new_dir.name, foreign.parent.name]
    )


# Another user on the same machine (issue 24). Tests run as root in CI: a folder handed to
# uid 65534 (nobody) is another user's.
NOBODY = 65534
TAG = f"cp{sys.version_info[0]}{sys.version_info[1]}"


def plant(site_packages: Path, ran: Path) -> None:
    """An unpacked copy whose kite_skills, if imported, leaves the file ``ran``."""
    (site_packages / "kite_skills").mkdir(parents=True)
    (site_packages / UNPACKED.format(tag=TAG)).write_text("")
    (site_packages / "kite_skills" / "__init__.py").write_text(f"open({str(ran)!r}, 'w').close()\n")


def test_an_unpacked_copy_planted_by_another_user_is_never_run(
    shared: Path, tmp_path: Path
) -> None:
    """Another user made SHIV_ROOT first (as anyone can in the shared temporary folder) and
    put an unpacked copy in it, under the name this file's extraction has, and under the
    name shiv's own bootstrap would give it."""
    if os.getuid() != 0:
        pytest.skip("handing a folder to another user (chown) needs root, as the CI runs")
    root = shared / "shiv"
    ran = tmp_path / "the-planted-code-ran"
    for name in (f"kite-skills_{build_id(zipapp())}", f"kite-skills.pyz_{build_id(zipapp())}"):
        plant(root / name / "site-packages", ran)
    for path in [root, *root.rglob("*")]:
        os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
    result = version(zipapp(), server_env(root, tmp_path / "s.db"))
    assert not ran.exists(), "the start imported another user's code"
    assert result.returncode == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(
        f"kite-skills: the cache folder {root} is owned by another user (uid {NOBODY}), "
    ), line
    assert "set SHIV_ROOT to a folder of your own, e.g. SHIV_ROOT=" in line
    assert f"SHIV_ROOT={tempfile.gettempdir()}" not in line


def test_a_cache_folder_others_can_write_is_refused_with_what_to_do(tmp_path: Path) -> None:
    root = tmp_path / "shiv"
    root.mkdir()
    root.chmod(0o777)
    result = version(zipapp(), server_env(root, tmp_path / "s.db"))
    assert result.returncode == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(
        f"kite-skills: the cache folder {root} can be written by other users (mode 777), who "
        f"could put code there that kite-skills would run — make it yours alone ('chmod go-w "
        f"{root}') or set SHIV_ROOT to a folder of your own, e.g. SHIV_ROOT="
    ), line
    assert list(root.iterdir()) == []  # nothing unpacked there
    root.chmod(0o700)
    assert version(zipapp(), server_env(root, tmp_path / "s.db")).returncode == 0


def test_a_new_cache_is_this_users_alone_whatever_the_umask(tmp_path: Path) -> None:
    root = tmp_path / "shiv"
    env = server_env(root, tmp_path / "s.db")
    result = subprocess.run(
        [sys.executable, str(zipapp()), "--version"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        preexec_fn=lambda: os.umask(0o002),  # a common umask
    )
    assert result.returncode == 0, result.stderr
    (extraction,) = root.glob("kite-skills_*")
    for folder in (root, extraction):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert version(zipapp(), env).returncode == 0  # and the next start accepts it


def test_the_same_bytes_under_two_names_share_one_extraction(tmp_path: Path) -> None:
    """kite-skills.pyz and kite-skills-linux-x86_64.pyz are the same bytes: started in turn,
    neither removes the other's extraction (it is one, named for the content)."""
    root = tmp_path / "shiv"
    env = server_env(root, tmp_path / "s.db")
    names = [tmp_path / "kite-skills.pyz", tmp_path / "kite-skills-linux-x86_64.pyz"]
    for name in names:
        name.write_bytes(zipapp().read_bytes())
    assert version(names[0], env).returncode == 0
    (extraction,) = [p for p in root.iterdir() if not p.name.startswith(".")]
    (extraction / "site-packages" / "still-here").write_text("")
    for name in [names[1], names[0], names[1]]:
        result = version(name, env)
        assert result.returncode == 0, result.stderr
    assert [p for p in root.iterdir() if not p.name.startswith(".")] == [extraction]
    assert (extraction / "site-packages" / "still-here").is_file(), "it was unpacked again"


def held_by_another(marker: Path) -> bool:
    fd = os.open(marker, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def test_a_prune_never_removes_an_extraction_a_start_is_still_filling(tmp_path: Path) -> None:
    """A start of build A is filling A's extraction (here: adding this CPython's files,
    which another CPython's start left out; it waits on shiv's lock, which the test holds)
    while a start of build B prunes the cache: A's extraction stays, and A's start ends well."""
    root = tmp_path / "shiv"
    env = server_env(root, tmp_path / "s.db")
    a_file = tmp_path / "a" / "kite-skills.pyz"
    a_file.parent.mkdir()
    a_file.write_bytes(zipapp().read_bytes())
    b_file = tmp_path / "b" / "kite-skills.pyz"
    another_build(zipapp(), b_file)
    assert version(a_file, env).returncode == 0
    a_dir = root / f"kite-skills_{build_id(a_file)}"
    site_packages = a_dir / "site-packages"
    (binary,) = site_packages.glob(f"pydantic_core/_pydantic_core.cpython-3{sys.version_info[1]}-*")
    binary.unlink()  # as another CPython's start leaves it: this one's files not there
    (site_packages / UNPACKED.format(tag=TAG)).unlink()

    shiv_lock = os.open(root / f".{a_dir.name}_lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(shiv_lock, fcntl.LOCK_EX)
    filling = subprocess.Popen(
        [sys.executable, str(a_file), "help", "/orders"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        in_use = root / f".{a_dir.name}.kite-skills-in-use"
        for _ in range(600):  # until A's start holds its extraction (a bound, not a timing)
            if held_by_another(in_use) or filling.poll() is not None:
                break
            time.sleep(0.1)
        assert held_by_another(in_use), "the filling start does not hold its extraction"
        assert version(b_file, env).returncode == 0  # B's start prunes what is idle
        assert site_packages.is_dir(), "B's start removed the extraction A is filling"
    finally:
        os.close(shiv_lock)  # A goes on
        out, err = filling.communicate(timeout=300)
    assert filling.returncode == 0, err
    assert "/orders/reconcile" in out
    assert binary.is_file() and (site_packages / UNPACKED.format(tag=TAG)).is_file()


def waiting_for_a_lock_on(inode: int) -> bool:
    """Whether some process waits for a lock on the file ``inode`` (Linux: /proc/locks lists
    each waiter as ``N: -> FLOCK ... MAJOR:MINOR:INODE ...``)."""
    for line in Path("/proc/locks").read_text().splitlines():
        if "->" in line.split():
            for field in line.split():
                parts = field.split(":")
                if len(parts) == 3 and parts[2].isdigit() and int(parts[2]) == inode:
                    return True
    return False


@pytest.mark.skipif(not Path("/proc/locks").is_file(), reason="/proc/locks is Linux's")
def test_a_warm_start_waits_for_a_prune_of_its_extraction_then_unpacks_again(
    tmp_path: Path,
) -> None:
    """Another build's start is removing this build's idle extraction (it holds the exclusive
    lock) just as this build starts warm: the start waits, sees the extraction gone, and
    unpacks it again, instead of importing from a folder being removed."""
    root = tmp_path / "shiv"
    env = server_env(root, tmp_path / "s.db")
    assert version(zipapp(), env).returncode == 0
    extraction = root / f"kite-skills_{build_id(zipapp())}"
    in_use = root / f".{extraction.name}.kite-skills-in-use"
    pruner = os.open(in_use, os.O_RDWR)
    fcntl.flock(pruner, fcntl.LOCK_EX)
    start = subprocess.Popen(
        [sys.executable, str(zipapp()), "help", "/orders"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        inode = os.fstat(pruner).st_ino
        for _ in range(600):  # until the start waits for the lock (a bound, not a timing)
            if waiting_for_a_lock_on(inode) or start.poll() is not None:
                break
            time.sleep(0.1)
        assert waiting_for_a_lock_on(inode), "the warm start did not wait for the prune"
        shutil.rmtree(extraction)  # what the prune does (kite_skills/launcher/preamble.py)
        in_use.unlink()
    finally:
        os.close(pruner)
    out, err = start.communicate(timeout=300)
    assert start.returncode == 0, err
    assert "/orders/reconcile" in out
    assert (extraction / "site-packages" / UNPACKED.format(tag=TAG)).is_file()
