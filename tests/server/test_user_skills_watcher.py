"""The change watcher in process (no transport): two change checks that overlap — the poller
noticing another process's write while a tool call checks after its own write — must leave
the watcher's idea of the live set equal to the file, or later list changes go unreported."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.subscriptions import ResourcesListChanged

from kite_skills.server.user_skills import UserSkills
from kite_skills.store import Store, agent, human

pytestmark = pytest.mark.anyio


async def test_overlapping_change_checks_do_not_lose_a_list_change(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "skills.db")
    human.import_skills(store, [("x-skill", "X", "# X\n")], via="cli", who="pat")
    watcher = UserSkills(store)
    events: list[Any] = []

    async def record(event: Any) -> None:
        events.append(event)

    watcher.bus.publish = record  # type: ignore[method-assign]
    await watcher.check_for_changes()  # the first reading
    assert set(watcher._live) == {"x-skill"}

    real = store.live_skills
    hold = threading.Event()
    first = [True]

    def slow_live_skills() -> list[Any]:
        found = real()
        if first[0]:  # the poller's reading: taken before the unpublish, delivered after
            first[0] = False
            hold.wait(5)
        return found

    store.live_skills = slow_live_skills  # type: ignore[method-assign]
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(watcher.check_for_changes)  # the poller
            await anyio.sleep(0.2)
            agent.unpublish(store, "x-skill", who="t")
            tasks.start_soon(watcher.check_for_changes)  # the tool call after its write
            await anyio.sleep(0.2)
            hold.set()
    assert set(watcher._live) == set(), "the watcher kept a stale live set"

    events.clear()
    agent.republish(store, "x-skill", who="t")
    await watcher.check_for_changes()
    assert any(isinstance(e, ResourcesListChanged) for e in events), events
    store.close()
