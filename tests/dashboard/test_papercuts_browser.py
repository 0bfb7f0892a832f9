"""The dashboard papercuts that live in the browser (issue 22 §4), in Debian's Chromium driven
by Playwright, against the real app served in process by uvicorn over a real store file: the
line breaks a text box sends, table cells that wrap between words at desktop width, blank
diff lines that show, and the stale refusal a click meets."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from kite_skills.dashboard.app import build_app
from kite_skills.dashboard.security import Door
from kite_skills.store import Store, agent, human

from .chromium import launch_options

DESKTOP = {"width": 1280, "height": 900}


class Served:
    """The dashboard app on a free 127.0.0.1 port, in a thread, over ``db``."""

    def __init__(self, db: Path) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.door = Door(self.port)
        self.store = Store.open(db)
        app = build_app(self.store, self.door)
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)

    def link(self) -> str:
        return self.door.link(self.door.issue())

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()
        self.store.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "skills.db"


@pytest.fixture
def served(db: Path) -> Iterator[Served]:
    Store.open(db).close()
    running = Served(db)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The module's Chromium, on Playwright's sync API (these tests are not async); each test
    opens its own context on it (``page``)."""
    from playwright.sync_api import sync_playwright

    options = launch_options(tmp_path_factory.mktemp("browser-home"))
    with sync_playwright() as pw:
        launched = pw.chromium.launch(**options)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any, served: Served, tmp_path: Path) -> Iterator[Any]:
    """A signed-in page at desktop width; a failure leaves failure.png and .html behind."""
    context = browser.new_context(viewport=DESKTOP, base_url=f"http://127.0.0.1:{served.port}")
    context.set_default_timeout(10_000)
    opened = context.new_page()
    response = opened.goto(served.link())
    assert response is not None and response.status == 200 and opened.url.endswith("/skills")
    try:
        yield opened
    except BaseException:
        opened.screenshot(path=str(tmp_path / "failure.png"), full_page=True)
        (tmp_path / "failure.html").write_text(opened.content())
        raise
    finally:
        context.close()


def click(page: Any, selector: str) -> None:
    with page.expect_navigation():
        page.click(selector)


def test_typed_line_breaks_raise_no_hidden_character_warning(page: Any, served: Served) -> None:
    click(page, "text=New skill")
    page.fill("#name", "Not A Name")  # refused, so the form comes back with what was typed
    page.fill("#description", "How I check funds")
    page.click("#body")
    page.keyboard.type("# Funds")
    for line in ("", "1. Read the margins.", "2. Compare with the order."):
        page.keyboard.press("Enter")
        page.keyboard.type(line)
    click(page, "#save")
    assert page.locator("#error-name").count() == 1
    assert page.locator("#hidden").count() == 0  # the browser's CR LF is no hidden character
    page.fill("#name", "check-funds")
    click(page, "#save")
    assert "saved 'check-funds' as a new draft" in page.text_content(".flash")
    assert served.store.get("check-funds").body == (
        "# Funds\n\n1. Read the margins.\n2. Compare with the order."
    )


# In every cell, each word's text sits on one line box: a word broken mid-word gives two.
WORDS_SPLIT = """() => {
  const split = [];
  for (const cell of document.querySelectorAll("td")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest(".long")) continue;  // long tokens may wrap anywhere
      for (const match of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        if (tops.size > 1) split.push(match[0]);
      }
    }
  }
  return split;
}"""


def test_table_cells_never_break_a_word_at_desktop_width(page: Any, served: Served) -> None:
    description = (
        "When the user compares two mutual funds by their expense ratios, exit loads, "
        "holdings overlap, rolling returns and the tracking error against their benchmarks"
    )
    for n in range(3):
        agent.save(
            served.store,
            f"compare-mutual-funds-thoroughly-{n}",
            description,
            "# Compare\n",
            who="claude-code 2.1.0 (with a rather long client name)",
        )
    rev = served.store.get("compare-mutual-funds-thoroughly-0").revision
    human.publish(served.store, "compare-mutual-funds-thoroughly-0", rev=rev, via="cli", who="pat")
    for where in ("/skills", "/skills/log", "/skills/compare-mutual-funds-thoroughly-0"):
        page.goto(where)
        assert page.evaluate(WORDS_SPLIT) == [], where
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= DESKTOP["width"], (where, width)  # and nothing runs off the page


def test_a_long_token_wraps_inside_its_cell(page: Any, served: Served) -> None:
    token = "x" * 64  # a 64-character name with no hyphen: the longest a name may be
    agent.save(served.store, token, "y" * 300, "# Long\n", who="bot")
    page.goto("/skills")
    assert page.locator("td .long").count() >= 2
    assert page.evaluate("document.documentElement.scrollWidth") <= DESKTOP["width"]


def test_blank_lines_in_a_diff_are_visible(page: Any, served: Served) -> None:
    agent.save(served.store, "funds", "Funds", "# Funds\n1. Read the funds.\n", who="bot")
    rev = served.store.get("funds").revision
    human.publish(served.store, "funds", rev=rev, via="cli", who="pat")
    agent.save(served.store, "funds", "Funds", "# Funds\n\n1. Read the margins.\n", who="bot")
    page.goto("/skills/funds")
    blank = page.locator("#diff tr.add", has=page.locator(".blank"))
    assert blank.count() == 1
    assert blank.locator(".blank").is_visible()
    assert blank.bounding_box()["height"] >= 10  # a row you can see, not a hairline
    assert blank.locator("td.new").text_content() == "2"  # numbered as the stored text
    assert page.locator("#diff ins.word").all_text_contents() == ["margins."]
    assert page.locator("#diff del.word").all_text_contents() == ["funds."]
    background = page.evaluate(
        "getComputedStyle(document.querySelector('#diff ins.word')).backgroundColor"
    )
    assert background not in ("rgba(0, 0, 0, 0)", "transparent")  # highlighted


def test_a_stale_publish_shows_what_changed_since_the_page_was_read(
    page: Any, served: Served
) -> None:
    agent.save(served.store, "funds", "Funds", "# Funds\n\n1. Read the margins.\n", who="bot")
    page.goto("/skills/funds")
    agent.save(
        served.store, "funds", "Funds", "# Funds\n\n1. Place a MARKET BUY.\n", who="sneaky bot"
    )
    click(page, "#publish")
    error = page.text_content("#error")
    assert "Nothing was published: the text changed while you were reading it." in error
    assert "sneaky bot" in error
    assert page.locator("#stale-diff tr.del").all_text_contents() == ["3−1. Read the margins."]
    assert page.locator("#stale-diff tr.add").all_text_contents() == ["3+1. Place a MARKET BUY."]
    assert served.store.get("funds").status == "draft"


def test_after_publish_the_next_waiting_item_is_one_click_away(page: Any, served: Served) -> None:
    agent.save(served.store, "first", "First", "# 1\n", who="bot")
    agent.save(served.store, "second", "Second", "# 2\n", who="bot")
    page.goto("/skills/first")
    click(page, "#publish")
    click(page, "#next-waiting")
    assert page.url.endswith("/skills/second")
    click(page, "#publish")
    assert page.text_content("#next-waiting") == "Nothing else is waiting for you."
