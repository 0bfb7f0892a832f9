"""A server's first start has its modules compiled on another core while it imports
(kite_skills/launcher/compile_ahead.py), from the list tools/server_modules.py writes, which
must be what the built file's server compiles."""

from __future__ import annotations

import errno
import fcntl
import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kite_skills.launcher import compile_ahead

from .server.harness import ROOT, server_env, zipapp
from .tool_modules import load_tool
from .zipapp_platforms import session_messages

LISTED: list[str] = json.loads((ROOT / compile_ahead.LISTING).read_text())


def _compiled(site: Path, source: str) -> Path:
    return Path(importlib.util.cache_from_source(str(site / source)))


def _until(check: Callable[[], bool], bound: float) -> None:
    deadline = time.monotonic() + bound
    while not check() and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.fixture
def answered_server(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """A first start of the server with PYTHONDONTWRITEBYTECODE=1 (it writes no bytecode
    itself, and the one it leaves for later is written only once it stops) and
    SOURCE_DATE_EPOCH set, after its answer to ``initialize``, still running."""
    env = server_env(tmp_path / "shiv", tmp_path / "skills.db", PYTHONDONTWRITEBYTECODE="1")
    env["SOURCE_DATE_EPOCH"] = "1"
    server = subprocess.Popen(
        [sys.executable, str(zipapp())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert server.stdin and server.stdout
    initialize = session_messages()[0]
    server.stdin.write(json.dumps(initialize).encode() + b"\n")
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["result"]["serverInfo"]
    (site,) = (tmp_path / "shiv").glob("kite-skills_*/site-packages")
    try:
        yield site, server
    finally:
        server.stdin.close()
        server.wait(timeout=60)


@pytest.mark.zipapp
def test_every_listed_module_is_compiled_while_the_first_server_runs(
    answered_server: tuple[Path, subprocess.Popen[bytes]],
) -> None:
    """Nothing but the compiler ahead writes bytecode before this server stops; what it
    writes is timestamp-checked, as the import system's, though SOURCE_DATE_EPOCH is set
    (py_compile's default then is hash-checked bytecode, whose source each start hashes)."""
    site, server = answered_server
    _until(lambda: all(_compiled(site, source).is_file() for source in LISTED), bound=120)
    assert server.poll() is None  # still serving: none of it is the compiler it leaves for later
    assert [s for s in LISTED if not _compiled(site, s).is_file()] == []
    flags = {source: _compiled(site, source).read_bytes()[4:8] for source in LISTED}
    assert {s: f for s, f in flags.items() if f != b"\0\0\0\0"} == {}


@pytest.mark.zipapp
def test_a_command_that_is_not_the_server_compiles_nothing_ahead(tmp_path: Path) -> None:
    shiv_root = tmp_path / "shiv"
    env = server_env(shiv_root, tmp_path / "skills.db", PYTHONDONTWRITEBYTECODE="1")
    version = [sys.executable, str(zipapp()), "--version"]
    done = subprocess.run(version, capture_output=True, env=env)
    assert done.returncode == 0, done.stderr
    (site,) = shiv_root.glob("kite-skills_*/site-packages")
    last = _compiled(site, LISTED[-1])  # the compiler ahead starts from the end
    time.sleep(2)  # a bound: a compiler started by mistake writes this within a fraction of it
    assert not last.exists()
    assert not list(site.rglob("*.pyc"))


@pytest.mark.zipapp
def test_the_list_is_what_the_built_files_server_compiles() -> None:
    """tools/server_modules.py run now on the built file gives the committed list: a change in
    what a server start imports fails here until the list is written again."""
    written = load_tool("server_modules").server_modules(zipapp())
    assert written == LISTED, (
        "kite_skills/launcher/server_modules.json is stale — run "
        "'python tools/server_modules.py dist/kite-skills.pyz' after ./build.sh"
    )
    assert len(set(LISTED)) == len(LISTED) and all(not s.startswith("/") for s in LISTED)


def test_a_listed_file_that_is_gone_stops_nothing(tmp_path: Path) -> None:
    """The compiler ahead on its own, over a site-packages where one listed source is missing
    and another does not compile: it compiles the rest and exits 0."""
    site = tmp_path / "site-packages"
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "good.py").write_text("VALUE = 1\n")
    (site / "pkg" / "broken.py").write_text("def (:\n")
    listing = site / compile_ahead.LISTING
    listing.parent.mkdir(parents=True)
    listing.write_text(json.dumps(["pkg/gone.py", "pkg/broken.py", "pkg/good.py"]))
    command = [sys.executable, "-I", "-S", "-c", compile_ahead._COMPILE, str(site), str(listing)]
    done = subprocess.run(command, capture_output=True, text=True, env={"SOURCE_DATE_EPOCH": "1"})
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert _compiled(site, "pkg/good.py").read_bytes()[4:8] == b"\0\0\0\0"
    assert not _compiled(site, "pkg/broken.py").exists()
    assert os.listdir(site / "pkg" / "__pycache__") == [_compiled(site, "pkg/good.py").name]


def test_the_compiler_holds_the_starts_lock_on_the_extraction_until_it_ends(
    tmp_path: Path,
) -> None:
    """Should the server end first, no other start prunes the extraction while the compiler
    ahead still writes there: it shares the start's lock (preamble.hold). Here its one source
    is a named pipe, so it waits, holding the lock, until the test writes that source."""
    site = tmp_path / "site-packages"
    (site / "pkg").mkdir(parents=True)
    source = site / "pkg" / "slow.py"
    os.mkfifo(source)
    listing = site / compile_ahead.LISTING
    listing.parent.mkdir(parents=True)
    listing.write_text(json.dumps(["pkg/slow.py"]))
    in_use = tmp_path / ".extraction.kite-skills-in-use"
    held = os.open(in_use, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(held, fcntl.LOCK_SH)  # as preamble.hold takes it
    compile_ahead.start(site, held)
    os.close(held)  # the start ends; the compiler goes on

    def free() -> bool:
        fd = os.open(in_use, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a prune asks for it
            return True
        except BlockingIOError:
            return False
        finally:
            os.close(fd)

    pipe = None
    deadline = time.monotonic() + 60
    while pipe is None and time.monotonic() < deadline:
        try:  # the compiler has opened the source once a writer can open it
            pipe = os.open(source, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            assert exc.errno == errno.ENXIO, exc
            time.sleep(0.05)
    assert pipe is not None, "the compiler never read its source"
    assert not free(), "a prune could remove the extraction the compiler writes in"
    os.write(pipe, b"VALUE = 1\n")
    os.close(pipe)
    _until(free, bound=60)
    assert free() and _compiled(site, "pkg/slow.py").is_file()
