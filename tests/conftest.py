"""Suite-wide fixtures."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


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
