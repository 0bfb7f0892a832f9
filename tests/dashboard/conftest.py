"""Dashboard fixtures: a real store file, the real app, Starlette's TestClient; and the
browser tests' Chromium (tests/dashboard/chromium.py)."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from starlette.testclient import TestClient

from kite_skills.dashboard.app import build_app
from kite_skills.dashboard.security import Door
from kite_skills.store import Store, agent

from .chromium import launch_options

if TYPE_CHECKING:
    from ..server.harness import Target

PORT = 8123
BASE = f"http://127.0.0.1:{PORT}"
ORIGIN = BASE


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "skills.db"
    with Store.open(path) as store:
        agent.save(
            store,
            "compare-funds",
            "When comparing two funds",
            "# Compare\n\n1. A\n",
            who="claude-code 2.1",
        )
    return path


@pytest.fixture
def door() -> Door:
    return Door(PORT)


@pytest.fixture
def store(db: Path) -> Iterator[Store]:
    with Store.open(db) as s:
        yield s


@pytest.fixture
def anonymous(store: Store, door: Door) -> Iterator[TestClient]:
    with TestClient(build_app(store, door), base_url=BASE, follow_redirects=False) as client:
        yield client


@pytest.fixture
def client(anonymous: TestClient, door: Door) -> TestClient:
    """Signed in the way a person is: the printed link, then the redirect; its forms are
    sent with the dashboard's Origin, as a browser sends them."""
    arrived = anonymous.get(f"/skills?token={door.issue()}")
    assert arrived.status_code == 303, arrived.text
    anonymous.headers["origin"] = ORIGIN
    return anonymous


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert match, "no CSRF field on the page"
    return match.group(1)


def rev_of(html: str, field: str = "publish") -> str:
    match = re.search(
        rf'/{field}">\s*<input type="hidden" name="csrf" value="[0-9a-f]+">\s*'
        r'<input type="hidden" name="rev" value="([0-9a-f]+)"',
        html,
    )
    assert match, f"no revision on the {field} form"
    return match.group(1)


def rows(db: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """Every skill row and audit row in the file, read with plain sqlite3."""
    with sqlite3.connect(db) as conn:
        skills = conn.execute("SELECT * FROM skills ORDER BY id").fetchall()
        audit = conn.execute("SELECT * FROM audit_log ORDER BY id").fetchall()
    return skills, audit


@pytest.fixture(scope="session")
def pyz() -> Path:
    from ..server.harness import zipapp

    return zipapp()


@pytest.fixture
def target(request: pytest.FixtureRequest) -> Target:
    """Where the MCP server of a browser flow runs: in process, or the built zipapp for a
    test marked ``zipapp``."""
    from ..server.harness import target_for

    return target_for(request.node)


@pytest.fixture(scope="module")
async def chromium(
    anyio_backend: object, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Any]:
    """One headless Chromium (Playwright's async API) for a module's async browser tests; each
    test opens its own context on it. Module-scoped like the anyio plugin's ``anyio_backend``:
    while it is set up, the module's tests run in the one event loop it was launched from."""
    from playwright.async_api import async_playwright

    options = launch_options(tmp_path_factory.mktemp("browser-home"))
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(**options)
        try:
            yield browser
        finally:
            await browser.close()
