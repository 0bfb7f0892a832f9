from __future__ import annotations

from pathlib import Path

import pytest

from ..server.harness import zipapp


@pytest.fixture(scope="module")
def pyz() -> Path:
    return zipapp()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
