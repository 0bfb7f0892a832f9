from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kite_skills.store import Store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "skills.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    with Store.open(db_path) as s:
        yield s
