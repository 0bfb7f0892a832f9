"""The person's loop on the dashboard, round 3 (issue 39 §4), in Debian's Chromium driven by
Playwright against the real app served in process over a real store file: the history page
keeps its Old/New labels on a phone, Restore asks first and says what it will do, and a
revision shows short with the whole id on hover and in what is copied."""

from __future__ import annotations

from typing import Any

from kite_skills.store import agent, human

from . import test_papercuts_browser
from .test_papercuts_browser import DESKTOP, Served, click

# that module's fixtures: the app on a free port over a fresh store, its Chromium, a page
db = test_papercuts_browser.db
served = test_papercuts_browser.served
browser = test_papercuts_browser.browser
page = test_papercuts_browser.page

PHONE = {"width": 390, "height": 844}
NAME = "compare-funds"


def _live_then_revised(served: Served) -> None:
    """A live skill whose text an accepted revision replaced: two texts in its history."""
    agent.save(served.store, NAME, "Compare funds", "# Compare\n\n1. Expense ratio.\n", who="bot")
    human.publish(served.store, NAME, rev=served.store.get(NAME).revision, via="cli", who="pat")
    agent.save(served.store, NAME, "Compare funds", "# Compare\n\n1. Buy at MARKET.\n", who="bot")
    rev = served.store.get(NAME).proposed.revision  # type: ignore[union-attr]
    human.accept_revision(served.store, NAME, rev=rev, via="cli", who="pat")


def _labels(page: Any) -> list[list[str]]:
    """The pick labels a person sees in each row of the history table, in order."""
    rows = page.locator("#history tbody tr")
    return [
        [label.strip() for label in rows.nth(i).locator(".pick-label:visible").all_text_contents()]
        for i in range(rows.count())
    ]


def test_the_history_keeps_its_old_and_new_labels_on_a_phone(browser: Any, served: Served) -> None:
    _live_then_revised(served)
    texts = len(served.store.history(NAME))
    for viewport, heads, labels in (
        (PHONE, False, [["New"]] + [["Old", "New"]] * texts),
        (DESKTOP, True, [[]] * (texts + 1)),  # the column heads say it
    ):
        context = browser.new_context(viewport=viewport, base_url=f"http://127.0.0.1:{served.port}")
        try:
            phone = context.new_page()
            phone.goto(served.link())
            phone.goto(f"/skills/{NAME}/history")
            assert phone.locator("#history thead").is_visible() is heads
            assert _labels(phone) == labels, viewport
            # each label sits by its own radio button, and nothing runs off the page
            first = phone.locator("#history tbody tr").nth(1)
            old = first.locator("td.pick").nth(0)
            assert old.locator("input[name=a]").is_visible()
            width = phone.evaluate("document.documentElement.scrollWidth")
            assert width <= viewport["width"], (viewport, width)
        finally:
            context.close()


def test_restore_asks_first_and_says_what_it_will_do(page: Any, served: Served) -> None:
    _live_then_revised(served)
    first = served.store.history(NAME)[-1]
    page.goto(f"/skills/{NAME}/history")
    click(page, f"#show-{first.id}")
    click(page, "#restore-text")  # a question, not the change
    assert page.url.endswith(f"/skills/{NAME}/history/{first.id}/restore")
    what = page.text_content("#restore-what")
    assert what.startswith(f"The earlier text #{first.id} (draft, served as live), revision ")
    assert f"revision {first.revision}, becomes the text of {NAME} again" in what
    assert "agents read the restored text from the moment you confirm" in what  # it is live
    assert page.locator("#restore-diff tr.add").all_text_contents() == ["3+1. Expense ratio."]
    assert "MARKET" in served.store.get(NAME).body  # nothing changed yet
    click(page, "#keep-current")
    assert page.url.endswith(f"/skills/{NAME}/history")
    assert "MARKET" in served.store.get(NAME).body
    click(page, f"#show-{first.id}")
    click(page, "#restore-text")
    click(page, "#confirm-restore")
    flash = page.text_content(".flash")
    assert flash.startswith(f"restored an earlier text of '{NAME}' as its text (live)")
    assert flash.endswith("stays in its history.")  # a sentence, with its full stop
    assert served.store.get(NAME).body == "# Compare\n\n1. Expense ratio.\n"


def test_a_revision_shows_short_with_the_whole_id_on_hover_and_copy(
    browser: Any, served: Served
) -> None:
    _live_then_revised(served)
    revision = served.store.get(NAME).revision
    context = browser.new_context(
        viewport=DESKTOP,
        base_url=f"http://127.0.0.1:{served.port}",
        permissions=["clipboard-read", "clipboard-write"],
    )
    try:
        opened = context.new_page()
        opened.goto(served.link())
        opened.goto(f"/skills/{NAME}/history")
        shown = opened.locator("#text-current code.revision")
        assert shown.get_attribute("title") == revision  # on hover
        assert opened.locator("#text-current .revision-rest").bounding_box()["width"] == 0
        twelve = opened.evaluate(
            "() => { const c = document.createElement('code'); c.className = 'revision';"
            f" c.textContent = '{revision[:12]}'; document.body.append(c);"
            " return c.getBoundingClientRect().width; }"
        )
        assert shown.bounding_box()["width"] == twelve  # twelve digits show, no more
        shown.dblclick()  # a double click takes the whole id, as a copy does
        assert opened.evaluate("() => getSelection().toString()") == revision
        opened.keyboard.press("Control+C")
        assert opened.evaluate("() => navigator.clipboard.readText()") == revision
        # where a person confirms, the review page shows the whole id
        opened.goto(f"/skills/{NAME}")
        assert opened.text_content("#revision") == revision
    finally:
        context.close()


def test_restoring_an_archived_skill_asks_first(page: Any, served: Served) -> None:
    _live_then_revised(served)
    human.archive(served.store, NAME, via="cli", who="pat")
    page.goto(f"/skills/{NAME}")
    click(page, "#restore")
    assert page.url.endswith(f"/skills/{NAME}/restore")
    what = page.text_content("#restore-what")
    assert "It is archived. Puts it back in service: agents list and read it again." in what
    assert served.store.get(NAME).revision in what
    click(page, "#keep-archived")
    assert served.store.get(NAME).status == "archived"
    click(page, "#restore")
    click(page, "#confirm-restore")
    assert page.text_content(".flash") == f"restored '{NAME}' (archived -> live)."
    assert served.store.get(NAME).status == "live"
