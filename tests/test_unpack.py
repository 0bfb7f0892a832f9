"""The zipapp unpacks itself on a first start (kite_skills/launcher/preamble.py): only what this
CPython runs, in shiv's layout so that shiv's bootstrap finds the work done; safely when
starts overlap or one was interrupted; completed in place when another CPython shares the
cache. Real files, real subprocesses."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kite_skills.launcher.preamble import PLATFORMS, interpreter_of
from kite_skills.launcher.start import UNPACKED

from .server.harness import server_env, sigint_at_default, zipapp
from .zipapp_platforms import PYTHONS, platform_file, run, runnable

pytestmark = pytest.mark.zipapp

TAG = f"cp{sys.version_info[0]}{sys.version_info[1]}"
BINARY = re.compile(r".*\.(so|pyd|dll)")


def extraction_of(pyz: Path, root: Path) -> Path:
    """Where shiv's bootstrap looks for this file's unpacked site-packages."""
    with zipfile.ZipFile(pyz) as archive:
        build_id = json.loads(archive.read("environment.json"))["build_id"]
    return root / f"kite-skills_{build_id}"


def help_orders(python: str, root: Path, tmp_path: Path, **extra: str) -> None:
    result = run(
        python, zipapp(), ["help", "/orders"], server_env(root, tmp_path / "s.db", **extra)
    )
    assert result.returncode == 0, result.stderr
    assert "/orders/reconcile" in result.stdout


def binaries(site_packages: Path) -> set[str]:
    return {
        p.relative_to(site_packages).as_posix()
        for p in site_packages.rglob("*")
        if BINARY.fullmatch(p.name)
    }


def test_a_first_start_unpacks_only_what_this_cpython_runs(tmp_path: Path) -> None:
    root = tmp_path / "shiv"
    help_orders(sys.executable, root, tmp_path)
    extraction = extraction_of(zipapp(), root)
    site_packages = extraction / "site-packages"
    assert (site_packages / UNPACKED.format(tag=TAG)).is_file()
    assert not extraction.with_name(extraction.name + ".tmp").exists()
    found = binaries(site_packages)
    assert f"pydantic_core/_pydantic_core.cpython-3{sys.version_info[1]}-" in " ".join(found)
    assert {interpreter_of(f"site-packages/{b}") for b in found} <= {None, TAG}
    with zipfile.ZipFile(zipapp()) as archive:
        members = [i for i in archive.infolist() if i.filename.startswith("site-packages/")]
        for info in members:
            unpacked = extraction / info.filename
            if interpreter_of(info.filename) in (None, TAG):
                assert unpacked.read_bytes() == archive.read(info), info.filename
            else:
                assert not unpacked.exists(), f"{info.filename} is for another CPython"


def test_every_cpython_here_runs_from_one_shared_extraction(tmp_path: Path) -> None:
    root = tmp_path / "shiv"
    pythons = runnable()
    for python in pythons:
        help_orders(python.path, root, tmp_path)
    for python in pythons:  # and each again, once the others added their binaries
        help_orders(python.path, root, tmp_path)
    site_packages = extraction_of(zipapp(), root) / "site-packages"
    tags = {f"cp{p.version.replace('.', '')}" for p in pythons}
    assert {interpreter_of(f"site-packages/{b}") for b in binaries(site_packages)} == {None} | tags
    for tag in tags:
        assert (site_packages / UNPACKED.format(tag=tag)).is_file()
    assert not list(site_packages.rglob("*.partial"))


def test_a_file_missing_from_this_cpythons_set_is_put_back(tmp_path: Path) -> None:
    """What a start that was adding this CPython's binaries leaves when it is killed: some
    files, no marker. The next start adds the rest."""
    root = tmp_path / "shiv"
    help_orders(sys.executable, root, tmp_path)
    site_packages = extraction_of(zipapp(), root) / "site-packages"
    (binary,) = site_packages.glob(f"pydantic_core/_pydantic_core.cpython-3{sys.version_info[1]}-*")
    binary.unlink()
    (site_packages / UNPACKED.format(tag=TAG)).unlink()
    help_orders(sys.executable, root, tmp_path)
    assert binary.is_file() and (site_packages / UNPACKED.format(tag=TAG)).is_file()
    assert not list(site_packages.rglob("*.partial"))


def test_an_interrupted_first_start_leaves_nothing_a_later_start_uses(tmp_path: Path) -> None:
    root = tmp_path / "shiv"
    extraction = extraction_of(zipapp(), root)
    staging = extraction.with_name(extraction.name + ".tmp") / "site-packages"
    (staging / "kite_skills").mkdir(parents=True)
    (staging / "kite_skills" / "__init__.py").write_text(
        "raise SystemExit('a half tree was used')\n"
    )
    (staging / "left-behind.txt").write_text("")
    help_orders(sys.executable, root, tmp_path)
    assert not staging.parent.exists()
    assert not (extraction / "site-packages" / "left-behind.txt").exists()


def test_starts_that_overlap_unpack_once(tmp_path: Path) -> None:
    root = tmp_path / "shiv"
    env = server_env(root, tmp_path / "s.db")
    starts = [
        subprocess.Popen(
            [sys.executable, str(zipapp()), "help", "/orders"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(4)
    ]
    for start in starts:
        out, err = start.communicate(timeout=300)
        assert start.returncode == 0, err
        assert "/orders/reconcile" in out
    assert [p.name for p in root.iterdir() if not p.name.startswith(".")] == [
        extraction_of(zipapp(), root).name
    ]


def test_shiv_force_extract_is_left_to_shiv(tmp_path: Path) -> None:
    """SHIV_FORCE_EXTRACT=1 asks shiv to unpack again: shiv does, everything, as before."""
    root = tmp_path / "shiv"
    help_orders(sys.executable, root, tmp_path, SHIV_FORCE_EXTRACT="1")
    site_packages = extraction_of(zipapp(), root) / "site-packages"
    tags = {interpreter_of(f"site-packages/{b}") for b in binaries(site_packages)}
    assert tags == {None} | {f"cp{v.replace('.', '')}" for v in PYTHONS}


@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_each_cpython_unpacks_a_binary_of_its_own_for_every_compiled_module(name: str) -> None:
    """Statically, for every platform's file: what CPython 3.X unpacks holds no other
    version's binary, and each extension module the file holds is there for it."""
    with zipfile.ZipFile(platform_file(name)) as archive:
        members = [n for n in archive.namelist() if n.startswith("site-packages/")]
    tagged = [n for n in members if BINARY.fullmatch(n) and interpreter_of(n)]
    for version in PYTHONS:
        tag = f"cp{version.replace('.', '')}"
        own = [n for n in members if interpreter_of(n) in (None, tag)]
        for member in own:
            assert not re.search(rf"(cpython-|cp|/cp)3(?!{tag[3:]})\d+[-/]", member), member
        modules = {
            re.sub(r"\.(cpython-|cp)3\d+-[^/]*$", "", n)
            for n in tagged
            if "/_per_version/" not in n
        }
        for module in modules:
            assert any(n.startswith(module + ".") for n in own if interpreter_of(n) == tag), (
                f"{name}: CPython {version} unpacks no binary of {module}"
            )


def test_a_python_without_lzma_gets_one_line(tmp_path: Path) -> None:
    """The compiled binaries are stored with LZMA: a CPython built without the lzma module
    is told so before anything is unpacked."""
    shadow = tmp_path / "no-lzma"
    shadow.mkdir()
    (shadow / "lzma.py").write_text("raise ImportError(\"No module named '_lzma'\")\n")
    root = tmp_path / "shiv"
    env = server_env(root, tmp_path / "s.db", PYTHONPATH=str(shadow))
    result = run(sys.executable, zipapp(), ["--version"], env)
    assert result.returncode == 1
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("kite-skills: this Python (") and "has no lzma module" in line, line
    assert "liblzma-dev" in line and "MCP client's config" in line
    assert not extraction_of(zipapp(), root).exists()


def limit_file_size() -> None:
    """In the child: no file it writes may grow past 1 MB. Python ignores SIGXFSZ, so a write
    past the limit fails with EFBIG ("File too large"), as a full disk fails one with
    ENOSPC: the same path through the unpack (errno.ENOSPC, EDQUOT and EFBIG alike)."""
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))


def test_a_disk_that_fills_during_the_first_unpack_is_one_line_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    root = tmp_path / "shiv"
    env = server_env(root, tmp_path / "s.db")
    result = subprocess.run(
        [sys.executable, str(zipapp()), "--version"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        preexec_fn=limit_file_size,
    )
    assert result.returncode == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()  # no traceback
    assert line.startswith(
        f"kite-skills: cannot unpack into {root} (File too large) — it needs "
    ), line
    assert "MB there: free some space, or set SHIV_ROOT to a folder of your own" in line
    extraction = extraction_of(zipapp(), root)
    assert not extraction.with_name(extraction.name + ".tmp").exists(), "the partial copy stayed"
    assert not extraction.exists()
    help_orders(sys.executable, root, tmp_path)  # with room, the next start unpacks


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 8 MB file system (tmpfs), mounted for the test: needs root with the right to
    mount (the CI's containers have it); skipped where there is none."""
    mount = shutil.which("mount")
    where = tmp_path / "small-disk"
    where.mkdir()
    if mount is None or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root and mount(8)")
    made = subprocess.run(
        [mount, "-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_disk_during_the_first_unpack_is_one_line_and_frees_the_space(
    small_disk: Path, tmp_path: Path
) -> None:
    """A real full disk (ENOSPC): the unpack needs some 30 MB, the disk holds 8."""
    root = small_disk / "shiv"
    free_before = os.statvfs(small_disk).f_bfree
    result = run(sys.executable, zipapp(), ["--version"], server_env(root, tmp_path / "s.db"))
    assert result.returncode == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()  # no traceback
    expected = f"kite-skills: cannot unpack into {root} (No space left on device) — it needs about "
    assert line.startswith(expected), line
    extraction = extraction_of(zipapp(), root)
    assert not extraction.with_name(extraction.name + ".tmp").exists()
    assert not extraction.exists()
    assert os.statvfs(small_disk).f_bfree >= free_before - 4, "the partial copy holds the space"


def test_a_disk_that_fills_while_adding_this_cpythons_files_leaves_no_partial_file(
    tmp_path: Path,
) -> None:
    root = tmp_path / "shiv"
    help_orders(sys.executable, root, tmp_path)
    site_packages = extraction_of(zipapp(), root) / "site-packages"
    (binary,) = site_packages.glob(f"pydantic_core/_pydantic_core.cpython-3{sys.version_info[1]}-*")
    assert binary.stat().st_size > 1 << 20
    binary.unlink()
    (site_packages / UNPACKED.format(tag=TAG)).unlink()
    result = subprocess.run(
        [sys.executable, str(zipapp()), "--version"],
        capture_output=True,
        text=True,
        env=server_env(root, tmp_path / "s.db"),
        timeout=300,
        preexec_fn=limit_file_size,
    )
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"kite-skills: cannot unpack into {root} (File too large) — "), line
    assert not list(site_packages.rglob("*.partial"))
    help_orders(sys.executable, root, tmp_path)
    assert binary.is_file()


def test_a_folder_where_the_cache_lock_goes_is_one_line(tmp_path: Path) -> None:
    root = tmp_path / "shiv"
    extraction = extraction_of(zipapp(), root)
    lock = root / f".{extraction.name}_lock"
    lock.mkdir(parents=True, mode=0o700)
    root.chmod(0o700)
    result = run(sys.executable, zipapp(), ["--version"], server_env(root, tmp_path / "s.db"))
    assert result.returncode == 1 and result.stdout == ""
    (line,) = result.stderr.splitlines()  # no traceback
    assert line.startswith(
        f"kite-skills: cannot unpack into {root} (a folder is where its lock file goes) — "
        f"remove the folder {lock}, or set SHIV_ROOT"
    ), line
    lock.rmdir()
    help_orders(sys.executable, root, tmp_path)  # once it is gone, the next start unpacks


@pytest.mark.parametrize("what", ["a file", "a folder with files", "a dangling link", "a link"])
def test_something_in_the_way_of_the_extraction_is_replaced(tmp_path: Path, what: str) -> None:
    root = tmp_path / "shiv"
    root.mkdir(mode=0o700)
    extraction = extraction_of(zipapp(), root)
    elsewhere = tmp_path / "elsewhere"
    if what == "a file":
        extraction.write_text("not a folder")
    elif what == "a folder with files":
        (extraction / "junk").mkdir(parents=True)
        (extraction / "junk" / "file").write_text("")
    elif what == "a dangling link":
        extraction.symlink_to(tmp_path / "nowhere")
    else:  # a link to a folder holding an unpacked copy: never followed
        ran = tmp_path / "the-linked-code-ran"
        (elsewhere / "site-packages" / "kite_skills").mkdir(parents=True)
        (elsewhere / "site-packages" / UNPACKED.format(tag=TAG)).write_text("")
        (elsewhere / "site-packages" / "kite_skills" / "__init__.py").write_text(
            f"open({str(ran)!r}, 'w').close()\n"
        )
        extraction.symlink_to(elsewhere)
    for _ in range(2):  # the first start replaces it, the second uses what the first made
        help_orders(sys.executable, root, tmp_path)
    assert not extraction.is_symlink() and extraction.is_dir()
    assert (extraction / "site-packages" / UNPACKED.format(tag=TAG)).is_file()
    assert not (extraction / "junk").exists()
    if what == "a link":
        assert not (tmp_path / "the-linked-code-ran").exists()
        assert (elsewhere / "site-packages" / "kite_skills" / "__init__.py").is_file()


# Ctrl-C during the file's own start (issue 24): the signal at several points of a first start
# (unpacking) and of a warm one (imports), before the program's own handling takes over.
DELAYS = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6)


def interrupted(root: Path, tmp_path: Path, delay: float) -> tuple[int, str, bytes]:
    process = subprocess.Popen(
        [sys.executable, str(zipapp())],  # as an MCP client starts it; stdin kept open
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(root, tmp_path / "s.db"),
        preexec_fn=sigint_at_default,  # as a terminal starts it, even from a background job
    )
    time.sleep(delay)  # where the signal lands, not a measured time
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, err.decode(errors="replace"), out


def before_the_files_code(code: int, stderr: str) -> bool:
    """Whether the signal came before the archive's first line ran: while the interpreter
    started (killed by the signal, nothing said), read the archive's index (a traceback with
    no frame from inside the archive) or entered its ``__main__.py`` (raised at line 0, the
    code's entry, where CPython checks for signals before any line runs). Nothing in the file
    can act there."""
    if code == -signal.SIGINT and stderr == "":
        return True
    inside = f"{zipapp().name}{os.sep}"
    entry = f'{inside}__main__.py", line 0, in <module>'
    frames = [line for line in stderr.splitlines() if inside in line]
    return "Traceback" in stderr and all(entry in line for line in frames)


def test_ctrl_c_during_the_files_own_start_exits_130_without_a_traceback(tmp_path: Path) -> None:
    warm = tmp_path / "warm"
    help_orders(sys.executable, warm, tmp_path)
    handled = []
    for n, delay in enumerate(DELAYS):
        for root in (tmp_path / f"fresh-{n}", warm):
            code, stderr, out = interrupted(root, tmp_path, delay)
            if code == 130:
                assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
                assert out == b""
                handled.append((delay, root.name))
            else:
                assert before_the_files_code(code, stderr), (delay, root.name, code, stderr)
    # Most signals land in the file's start (a first start takes a second or more here).
    assert len(handled) >= len(DELAYS), handled
    for n in range(len(DELAYS)):  # and what an interrupted first start left is no obstacle
        help_orders(sys.executable, tmp_path / f"fresh-{n}", tmp_path)
