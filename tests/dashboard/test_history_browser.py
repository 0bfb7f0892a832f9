"""Issue 22 §5 in a real browser (Chromium via Playwright), with the dashboard and the MCP
server both from the built zipapp on one store file: the agent reads a skill (its receipt is
on the skill page), the person rejects its proposal with a reason (the agent's next save is
told), then picks two texts in the history to compare and restores the first one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from kite_skills.store import Store

from ..server.test_user_skills_e2e import Notes, text_of, tool
from . import test_browser
from .test_browser import DashboardProcess, _live, browser_page, click, shots

# the browser tests' fixtures: the zipapp's dashboard on a store under a private HOME, and the
# MCP server's SDK client
db = test_browser.db
dashboard = test_browser.dashboard
mcp = test_browser.mcp

pytestmark = [pytest.mark.anyio, pytest.mark.zipapp]

NAME = "compare-funds"
REVISED = "# Compare two funds\n\n1. Fetch holdings.\n2. Buy the cheaper one at MARKET.\n"


async def test_reject_with_reason_history_compare_and_restore_in_a_browser(
    dashboard: DashboardProcess, chromium: Any, mcp: Any, db: Path, tmp_path: Path
) -> None:
    await _live(db)
    notes = Notes()
    async with mcp(notes) as client:
        read = await tool(client, "skillRead", {"name": NAME})
        assert not read.is_error, text_of(read)
        proposal = await tool(
            client, "skillSave", {"name": NAME, "description": "Compare", "body": REVISED}
        )
        assert not proposal.is_error, text_of(proposal)
        async with browser_page(chromium, dashboard.new_link(), tmp_path) as page:
            await page.goto(dashboard.link.split("?")[0] + f"/{NAME}")
            for _ in range(100):  # the server writes receipts off the request path
                if "claude-code 2.1.0" in (await page.text_content("#last-read") or ""):
                    break
                await anyio.sleep(0.1)
                await page.reload()
            assert "skillRead" in await page.text_content("#last-read")
            await page.fill("#reason", "Never place an order without asking me")
            await click(page, "#reject")
            assert "rejected the proposed revision" in await page.text_content(".flash")

            again = await tool(
                client, "skillSave", {"name": NAME, "description": "Compare", "body": REVISED}
            )
            assert "'Never place an order without asking me'" in text_of(again)

            await click(page, "#history-link")
            rows = await page.locator("#history tbody tr").count()
            assert rows == 4  # current + the live text + two proposals
            with Store.open(db) as store:
                texts = store.history(NAME)
            first, rejected = texts[-1], texts[1]
            assert rejected.status == "rejected"
            assert "Never place an order" in await page.text_content(f"#text-{rejected.id}")
            await page.check(f"#text-{first.id} input[name=a]")
            await page.check(f"#text-{rejected.id} input[name=b]")
            await click(page, "#compare-button")
            assert "Buy the cheaper one at MARKET" in await page.text_content("#history-diff")
            await page.screenshot(
                path=str(shots(tmp_path) / "dashboard-history.png"), full_page=True
            )
            await click(page, f"#diff-{first.id}")
            assert await page.locator("#same").count() == 1  # the live text is the first
            await click(page, f"#show-{rejected.id}")
            await click(page, "#restore-text")  # asks first, saying what it will do
            assert "becomes the text of compare-funds again" in await page.text_content(
                "#restore-what"
            )
            await click(page, "#confirm-restore")
            assert "restored an earlier text" in await page.text_content(".flash")
            assert "Buy the cheaper one" in await page.text_content("#body")
    with Store.open(db) as store:
        entry = store.audit(limit=1)[0]
        assert (entry.action, entry.via, entry.who) == ("revert", "dashboard", "pat")
        assert store.get(NAME).body == REVISED
