from __future__ import annotations

from pathlib import Path

import pytest

from ..server.harness import Target, target_for, zipapp


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
