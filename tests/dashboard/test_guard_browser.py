"""The Guard page in Debian's Chromium (Playwright) against the real app on a real port: the
person finds it from the menu, changes a limit and sees it saved, and turns the kill switch on
and off; the file the guard reads is what the page says."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kite_skills.dashboard.guard_page import GuardFiles
from kite_skills.guard import limits
from kite_skills.store import Store

from . import test_papercuts_browser
from .test_papercuts_browser import DESKTOP, Served, click

browser = test_papercuts_browser.browser  # that module's Chromium


class GuardServed(Served):
    """The dashboard, its Guard page over ``files`` (Served builds its app from the module's
    ``build_app``, given the files here)."""

    def __init__(self, db: Path, files: GuardFiles) -> None:
        built = test_papercuts_browser.build_app
        test_papercuts_browser.build_app = lambda store, door: built(store, door, files)  # type: ignore[assignment]
        try:
            super().__init__(db)
        finally:
            test_papercuts_browser.build_app = built


@pytest.fixture
def files(tmp_path: Path) -> GuardFiles:
    return GuardFiles(tmp_path / "limits.json", tmp_path / "guard.jsonl")


@pytest.fixture
def page(browser: Any, tmp_path: Path, files: GuardFiles) -> Iterator[Any]:
    db = tmp_path / "skills.db"
    Store.open(db).close()
    served = GuardServed(db, files)
    context = browser.new_context(viewport=DESKTOP, base_url=f"http://127.0.0.1:{served.port}")
    context.set_default_timeout(10_000)
    opened = context.new_page()
    opened.goto(served.link())
    try:
        yield opened
    finally:
        context.close()
        served.stop()


def test_a_limit_and_the_kill_switch_from_the_page(page: Any, files: GuardFiles) -> None:
    click(page, "nav >> text=Guard")
    assert page.url.endswith("/skills/guard")
    assert page.text_content("#today p").startswith("0 writes, 0 refused or declined.")
    page.fill("#max_order_value", "200000")
    click(page, "#save-limits")
    assert "Limits saved" in page.text_content(".flash")
    assert limits.load(files.limits).max_order_value == 200_000
    assert page.input_value("#max_order_value") == "200000"
    page.fill("#reason", "stepping out")
    click(page, "#kill")
    assert "stepping out. Every write is refused." in page.text_content("#switch-on")
    switch = limits.load(files.limits).kill_switch
    assert switch is not None and switch.reason == "stepping out"
    click(page, "#resume")
    assert limits.load(files.limits).kill_switch is None
