"""Suite-wide settings: hypothesis profiles, and a folder an unprivileged user can reach.

Hypothesis profiles (docs/development.md, "Random tests"):
- ``ci`` — selected when ``CI=true``: derandomized, so every CI run tries the same examples
  (the seed is derived from each test's name; no example database is read or written);
- ``long`` — ``KITE_SKILLS_HYPOTHESIS=long``: random, 20x the examples, for a long run;
- ``default`` — hypothesis's own defaults (random, 100 examples).
``KITE_SKILLS_HYPOTHESIS`` names a profile explicitly and wins over ``CI``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from . import rebuild, zipapp_guard

settings.register_profile("ci", derandomize=True, database=None, print_blob=True, deadline=None)
settings.register_profile(
    "long",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("default", deadline=None)

_CHOSEN = os.environ.get("KITE_SKILLS_HYPOTHESIS") or (
    "ci" if os.environ.get("CI", "").lower() in ("true", "1") else "default"
)
settings.load_profile(_CHOSEN)


def pytest_report_header() -> str:
    return f"hypothesis profile: {_CHOSEN} (derandomize={settings.default.derandomize})"


# Programs build-free tests run that ``./build.sh test`` installs with apt (its test_programs
# job) and a bare ``pip install`` does not, with the tests that need them.
APT_PROGRAMS = {"shellcheck": "the two actionlint tests in tests/test_release.py"}


def missing_programs() -> list[str]:
    """One line for each program of APT_PROGRAMS that is not on PATH."""
    return [
        f"{name} is missing: {tests} will fail — apt-get install {name} "
        "(./build.sh test installs it)"
        for name, tests in APT_PROGRAMS.items()
        if shutil.which(name) is None
    ]


def pytest_sessionstart(session: pytest.Session) -> None:
    """Say at the start of a run, once (not in each xdist worker), which programs it lacks:
    the header pytest_report_header writes is hidden under ``-q``."""
    if hasattr(session.config, "workerinput"):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        for line in missing_programs():
            reporter.write_line(line)


BUILT_FIXTURES = frozenset({"pyz"})  # runs dist/kite-skills.pyz


@pytest.fixture(scope="session")
def shiv_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One private shiv cache for each worker's whole run: the first start unpacks (and
    writes the bytecode of what it imports), every later one in any module is warm. A test
    about unpacking itself makes its own (tests/test_unpack.py, tests/test_build.py)."""
    return tmp_path_factory.mktemp("shiv")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[object]:
    """Tell zipapp_guard which test runs (a test not marked zipapp that finds the build fails)."""
    zipapp_guard.entering(item)
    try:
        return (yield)
    finally:
        zipapp_guard.leaving(item)


# The suite's longest modules (a minute or more of one worker each: the tiny bench, the
# rebuild, qemu, building and unpacking zipapps, every Inspector call), run first, longest
# first. ./build.sh test's three workers take whole modules (pytest-xdist --dist loadscope, so
# that a module-scoped fixture runs once) in this order (--no-loadscope-reorder) and share out
# the short ones after them, instead of one worker ending the run alone on a long one. The
# order of the other modules is left as collected.
FIRST = (
    "tests/test_bench.py",
    "tests/test_offline_build.py",  # the rebuild (tests/rebuild.py), read by test_release too
    "tests/test_zipapps.py",
    "tests/test_unpack.py",
    "tests/dashboard/test_browser.py",
    "tests/test_aarch64.py",
    "tests/server/test_inspector.py",
    "tests/sandbox/test_inspector.py",
    "tests/test_bytecode.py",
    "tests/test_mcpb.py",
    "tests/guard/test_guard_e2e.py",  # about fifty seconds: a guard and a sandbox per test
    "tests/test_cache.py",
    "tests/test_packaging.py",  # ten seconds each: collected last, they ended the run alone
    "tests/test_release.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that asks for the built zipapp must carry ``@pytest.mark.zipapp``, so that
    ``pytest -m "not zipapp"`` (the build-free inner loop) never needs a build. The modules
    in FIRST go first."""
    rank = {name: n for n, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(FIRST)))
    unmarked = [
        item.nodeid
        for item in items
        if BUILT_FIXTURES & set(getattr(item, "fixturenames", ()))
        and item.get_closest_marker("zipapp") is None
    ]
    if unmarked:
        raise pytest.UsageError(
            "these tests use the built zipapp (fixture pyz) but lack "
            "@pytest.mark.zipapp — mark them: " + ", ".join(unmarked)
        )


@pytest.fixture
def shared() -> Iterator[Path]:
    """A temporary folder the unprivileged user of ``tests/store/helpers.unprivileged`` can
    reach (pytest's own tmp_path lives under a root-only folder when tests run as root)."""
    folder = Path(tempfile.mkdtemp(prefix="kite-skills-faults-"))
    folder.chmod(0o755)
    yield folder
    for path in folder.rglob("*"):
        if path.is_dir():
            path.chmod(0o755)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def apps(tmp_path: Path) -> Iterator[Path]:
    """A folder outside the temporary folders, where a person keeps a downloaded file
    (``setup`` and ``install-command`` warn about a file in Downloads or a temp folder)."""
    from kite_skills.os_dirs import downloads_and_temp

    temporary = downloads_and_temp(os.environ, sys.platform)
    # The checkout may itself sit in a temporary folder (CI clones into one): then the real
    # home's cache, which a person's machine never keeps in /tmp.
    candidates = (
        Path(__file__).resolve().parents[1] / ".build" / "test-apps",
        Path.home().resolve() / ".cache" / "kite-skills-test-apps",
    )
    base = next(
        (c for c in candidates if not any(c.is_relative_to(f.resolve()) for f in temporary)), None
    )
    if base is None:
        pytest.fail(f"no folder outside {[str(f) for f in temporary]} for the test's file")
    folder = base / f"{os.getpid()}-{tmp_path.name}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``./build.sh --wheelhouse`` into a new folder (every platform's wheels, copied from the
    build's cache .build/wheels), made once for every xdist worker (tests/rebuild.py)."""
    shared = rebuild.shared_folder(tmp_path_factory)
    wheels, outcome = rebuild.once(shared, "wheels", rebuild.download_wheelhouse)
    assert outcome.returncode == 0, outcome.stderr
    return wheels


@pytest.fixture(scope="session")
def offline_rebuild(wheelhouse: Path, tmp_path_factory: pytest.TempPathFactory) -> rebuild.Rebuild:
    """This tree built once more, offline from :func:`wheelhouse`, in another folder, once
    for every xdist worker (tests/rebuild.py)."""
    shared = rebuild.shared_folder(tmp_path_factory)
    folder, outcome = rebuild.once(
        shared, "second-build", lambda f: rebuild.offline_build(wheelhouse, f / "checkout")
    )
    assert outcome.returncode == 0, outcome.stderr
    return rebuild.Rebuild(folder / "checkout", outcome)
