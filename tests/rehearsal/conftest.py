from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from ..server.harness import Target, target_for, zipapp
from . import agent
from .guarded import Through


@pytest.fixture(scope="module")
def pyz() -> Path:
    return zipapp()


@pytest.fixture
def target(request: pytest.FixtureRequest) -> Target:
    """The server the agent reads its recipes from: in process, or the built zipapp for a
    test marked ``zipapp``."""
    return target_for(request.node)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# The harness's own tests and the defective agents' (whose bad writes the guard would stop
# before the rehearsal sees them) run directly only.
DIRECT_ONLY = {"test_harness", "test_defects", "test_coverage"}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.module.__name__.rsplit(".", 1)[-1] not in DIRECT_ONLY:
        metafunc.parametrize("route", ["direct", "guard"], indirect=True)


@pytest.fixture(autouse=True)
def route(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Every rehearsal twice: straight to the sandbox, and through `kite-skills guard` with
    its default limits, where every write must be allowed or asked and approved (never
    refused, never failed closed)."""
    if getattr(request, "param", "direct") == "direct":
        yield "direct"
        return
    home = tmp_path / "guard"
    home.mkdir()
    with ExitStack() as stack:
        agent.through = Through(home, stack)
        try:
            yield "guard"
        finally:
            agent.through = agent.direct
    journal = home / "guard.jsonl"
    entries = [json.loads(x) for x in journal.read_text().splitlines()] if journal.exists() else []
    stopped = [e for e in entries if e["decision"] not in ("allow", "asked-accepted")]
    assert stopped == [], f"the guard stopped a rehearsal's write: {stopped}"
