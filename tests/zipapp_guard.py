"""Keeps ``pytest -m "not zipapp"`` honest: a test that reaches for the built zipapp without
``@pytest.mark.zipapp`` fails (never skips), so the build-free inner loop stays build-free.

tests/conftest.py tells this module which test is running; :func:`require_mark` is called by
everything that finds the build (tests/server/harness.py's ``zipapp()``, test_bytecode.py)."""

from __future__ import annotations

import pytest

_running: list[pytest.Item] = []


def entering(item: pytest.Item) -> None:
    _running.append(item)


def leaving(item: pytest.Item) -> None:
    if _running and _running[-1] is item:
        _running.pop()


def require_mark(what: str) -> None:
    """Fail the running test unless it carries ``@pytest.mark.zipapp``."""
    if _running and _running[-1].get_closest_marker("zipapp") is None:
        pytest.fail(
            f"{_running[-1].nodeid} uses {what} but lacks @pytest.mark.zipapp — mark it, or "
            "test the behaviour in process (tests/server/harness.py: IN_PROCESS); "
            "pytest -m 'not zipapp' must run without a build",
            pytrace=False,
        )


def marked() -> bool:
    """Whether the running test carries ``@pytest.mark.zipapp`` (may use the build)."""
    return bool(_running) and _running[-1].get_closest_marker("zipapp") is not None
