from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kite_skills import catalog
from kite_skills.catalog import Catalog
from kite_skills.store import Store

from .harness import RawPeer, Target, target_for, zipapp


@pytest.fixture(scope="session")
def pyz() -> Path:
    return zipapp()


@pytest.fixture
def target(request: pytest.FixtureRequest) -> Target:
    """Where the server under test runs: in this process (no build), or the built zipapp for
    a test marked ``zipapp`` (the end-to-end layer)."""
    return target_for(request.node)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "skills.db"


@pytest.fixture
def raw(target: Target, shiv_root: Path, db: Path) -> Iterator[RawPeer]:
    peer = RawPeer(target, shiv_root, db)
    yield peer
    if peer.process.poll() is None:
        peer.process.kill()
        peer.process.wait()


@pytest.fixture(scope="module")
def loaded() -> Catalog:
    """The embedded catalog, loaded once per module (in-memory server tests)."""
    return catalog.load()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A fresh store file for an in-memory server."""
    store = Store.open(tmp_path / "s.db")
    yield store
    store.close()
