from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .harness import RawPeer, zipapp


@pytest.fixture(scope="session")
def pyz() -> Path:
    return zipapp()


@pytest.fixture(scope="session")
def shiv_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One private shiv cache for the whole run (the first start extracts; later are warm)."""
    return tmp_path_factory.mktemp("shiv")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "skills.db"


@pytest.fixture
def raw(pyz: Path, shiv_root: Path, db: Path) -> Iterator[RawPeer]:
    peer = RawPeer(pyz, shiv_root, db)
    yield peer
    if peer.process.poll() is None:
        peer.process.kill()
        peer.process.wait()
