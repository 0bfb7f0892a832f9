"""A live skill whose description changes is announced to lists that show descriptions
(prompts), in process (``ChangeFeed``, no transport); a body-only change is not."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.server.subscriptions import PromptsListChanged, ResourceUpdated

from kite_skills.server.changes import ChangeFeed
from kite_skills.store import AgentView, Store, human

pytestmark = pytest.mark.anyio


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "skills.db")
    human.import_skills(opened, [("x-skill", "About x", "# x\n")], via="cli", who="p")
    yield opened
    opened.close()


def _edit(store: Store, **text: str) -> None:
    with Store.open(store.path) as other:  # another process's write
        rev = other.get("x-skill").revision
        human.edit(other, "x-skill", rev=rev, via="dashboard", who="p", **text)


async def test_a_description_change_announces_prompts_and_a_body_change_does_not(
    store: Store,
) -> None:
    feed = ChangeFeed(AgentView(store))
    feed.on_description_change(PromptsListChanged())
    events: list[Any] = []
    feed.bus.subscribe(events.append)
    await feed.check()  # the first reading

    _edit(store, body="# x, longer\n")
    await feed.check()
    assert events == [ResourceUpdated(uri="user-skill://x-skill")]

    _edit(store, description="About x, better")
    await feed.check()
    # the skill's own update first: the descriptions are read after it (a second at 100,000)
    assert events[1:] == [ResourceUpdated(uri="user-skill://x-skill"), PromptsListChanged()]


async def test_without_a_listener_descriptions_are_never_read(store: Store) -> None:
    feed = ChangeFeed(AgentView(store))
    calls: list[int] = []
    real = store.live_summaries

    def counted() -> Any:
        calls.append(1)
        return real()

    store.live_summaries = counted  # type: ignore[method-assign]
    await feed.check()
    _edit(store, description="About x, better")
    await feed.check()
    assert calls == []
