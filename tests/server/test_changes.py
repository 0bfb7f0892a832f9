"""Change detection and delivery in process (``kite_skills.server.changes``, no transport):
overlapping checks, a failing store (one log line, backoff, recovery), one notification per
change per legacy session whatever the number of subscribes, ``resources/unsubscribe``,
writes by another connection (another process's view of the file), and the one-line
registration that announces a further list (prompts) on both eras."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.subscriptions import PromptsListChanged, ResourcesListChanged, ResourceUpdated

from kite_skills import catalog
from kite_skills.mcpkit import HandshakeState
from kite_skills.server import changes as changes_module
from kite_skills.server.app import build_server
from kite_skills.server.changes import ChangeFeed
from kite_skills.server.user_skills import UserSkills
from kite_skills.store import AgentView, Store, agent, human

pytestmark = [
    pytest.mark.anyio,
    # resources/subscribe is the handshake era's way, deprecated only for 2026-07-28
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

BOUND = 10.0  # seconds: a bound for "eventually", never a measured speed


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "skills.db")
    yield opened
    opened.close()


@pytest.fixture
def other(store: Store) -> Iterator[Store]:
    """A second connection on the same file: its commits look like another process's."""
    opened = Store.open(store.path)
    yield opened
    opened.close()


def _import(store: Store, *names: str) -> None:
    human.import_skills(store, [(n, f"About {n}", f"# {n}\n") for n in names], via="cli", who="p")


class Recorder:
    def __init__(self, feed: ChangeFeed) -> None:
        self.events: list[Any] = []
        feed.bus.subscribe(self.events.append)

    async def wait_for(self, event: Any) -> None:
        with anyio.fail_after(BOUND):
            while event not in self.events:
                await anyio.sleep(0.01)


async def test_overlapping_change_checks_do_not_lose_a_list_change(store: Store) -> None:
    _import(store, "x-skill")
    feed = ChangeFeed(AgentView(store))
    seen = Recorder(feed)
    await feed.check()  # the first reading
    real = store.live_versions
    hold = threading.Event()
    taken = threading.Event()
    first = [True]

    def slow_live_versions() -> dict[str, str]:
        found = real()
        if first[0]:  # the poller's reading: taken before the unpublish, delivered after
            first[0] = False
            taken.set()
            hold.wait(BOUND)
        return found

    store.live_versions = slow_live_versions  # type: ignore[method-assign]
    with anyio.fail_after(BOUND):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(feed.check)  # the poller
            await anyio.to_thread.run_sync(taken.wait)
            agent.unpublish(store, "x-skill", who="t")
            tasks.start_soon(feed.check)  # the tool call after its write
            hold.set()
    seen.events.clear()
    agent.republish(store, "x-skill", who="t")
    await feed.check()
    assert ResourcesListChanged() in seen.events, "the feed kept a stale live set"


async def test_a_failing_store_logs_one_line_backs_off_and_recovers(
    store: Store, other: Store, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(changes_module, "POLL_SECONDS", 0.01)
    monkeypatch.setattr(changes_module, "MAX_BACKOFF_SECONDS", 0.04)
    _import(store, "steady")
    feed = ChangeFeed(AgentView(store))
    seen = Recorder(feed)
    real = store.data_version
    calls = {"failed": 0}
    broken = threading.Event()

    def flaky() -> int:
        if broken.is_set():
            calls["failed"] += 1
            raise sqlite3.DatabaseError("database disk image is malformed")
        return real()

    monkeypatch.setattr(store, "data_version", flaky)
    with caplog.at_level(logging.INFO, logger="kite_skills.server"):
        async with feed.serving(HandshakeState()):  # the first reading is taken before this returns
            broken.set()
            with anyio.fail_after(BOUND):
                while calls["failed"] < 6:  # several retries, all failing
                    await anyio.sleep(0.01)
            warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
            assert len(warnings) == 1, [r.getMessage() for r in warnings]
            assert "malformed" in warnings[0].getMessage()
            assert "\n" not in warnings[0].getMessage() and warnings[0].exc_info is None
            broken.clear()  # the store answers again
            _import(other, "arrived")
            await seen.wait_for(ResourcesListChanged())
            await seen.wait_for(ResourceUpdated(uri="user-skill://arrived"))
    assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) == 1


async def _legacy_client(feed_owner: UserSkills, notes: list[Any]) -> Client:
    async def on_message(message: Any) -> None:
        if hasattr(message, "method"):
            params = getattr(message, "params", None)
            notes.append((message.method, str(getattr(params, "uri", "")) or None))

    server = build_server(catalog.load(), feed_owner)
    return Client(server, mode="legacy", message_handler=on_message)


async def test_one_notification_per_change_whatever_the_subscribe_count(store: Store) -> None:
    _import(store, "watched")
    uri = "user-skill://watched"
    notes: list[Any] = []
    async with await _legacy_client(UserSkills(AgentView(store)), notes) as client:
        for _ in range(4):
            await client.subscribe_resource(uri)
        result = await client.call_tool("skillUnpublish", {"name": "watched"})
        assert not result.is_error
        assert notes.count(("notifications/resources/list_changed", None)) == 1, notes
        assert notes.count(("notifications/resources/updated", uri)) == 1, notes


@pytest.mark.parametrize(
    ("tool", "before", "listed_after"),
    [("skillUnpublish", "live", False), ("skillPublish", "archived", True)],
)
async def test_the_writing_tools_announce_their_own_change_to_their_own_session(
    store: Store, tool: str, before: str, listed_after: bool
) -> None:
    """The poller never sees this process's own writes (one connection: its data_version
    does not move), so each writing tool checks for changes itself before it answers."""
    _import(store, "watched")
    if before == "archived":
        agent.unpublish(store, "watched", who="t")
    uri = "user-skill://watched"
    notes: list[Any] = []
    async with await _legacy_client(UserSkills(AgentView(store)), notes) as client:
        await client.subscribe_resource(uri)
        result = await client.call_tool(tool, {"name": "watched"})
        assert not result.is_error, result
        assert notes == [
            ("notifications/resources/list_changed", None),
            ("notifications/prompts/list_changed", None),
            ("notifications/resources/updated", uri),
        ], notes
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        assert (uri in listed) is listed_after


async def test_unsubscribe_stops_updates_but_not_list_changes(store: Store) -> None:
    _import(store, "watched")
    uri = "user-skill://watched"
    notes: list[Any] = []
    async with await _legacy_client(UserSkills(AgentView(store)), notes) as client:
        await client.subscribe_resource(uri)
        await client.unsubscribe_resource(uri)
        await client.unsubscribe_resource(uri)  # twice: still fine
        await client.unsubscribe_resource("user-skill://never-subscribed")
        await client.call_tool("skillUnpublish", {"name": "watched"})
        assert notes == [  # the set of live skills changed: resources and prompts, no update
            ("notifications/resources/list_changed", None),
            ("notifications/prompts/list_changed", None),
        ], notes


async def test_another_connections_write_is_announced(store: Store, other: Store) -> None:
    """What a person's CLI or dashboard does in another process, seen by the poller."""
    notes: list[Any] = []
    async with await _legacy_client(UserSkills(AgentView(store)), notes) as client:
        await client.subscribe_resource("user-skill://from-outside")
        _import(other, "from-outside")
        with anyio.fail_after(BOUND):
            while ("notifications/resources/list_changed", None) not in notes:
                await anyio.sleep(0.02)
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        assert "user-skill://from-outside" in listed
        human.archive(other, "from-outside", via="cli", who="p")
        with anyio.fail_after(BOUND):
            while ("notifications/resources/updated", "user-skill://from-outside") not in notes:
                await anyio.sleep(0.02)


async def test_a_further_list_is_announced_by_one_registration(store: Store, other: Store) -> None:
    """How prompts (a prompt per live skill) hook in: one line, both eras."""
    user_skills = UserSkills(AgentView(store))
    user_skills.changes.on_live_set_change(PromptsListChanged())
    seen = Recorder(user_skills.changes)  # what 2026-07-28 listen streams are given
    notes: list[Any] = []
    async with await _legacy_client(user_skills, notes) as client:
        assert await client.list_tools()
        _import(other, "new-one")
        with anyio.fail_after(BOUND):
            while ("notifications/prompts/list_changed", None) not in notes:
                await anyio.sleep(0.02)
        assert ("notifications/resources/list_changed", None) in notes
    assert PromptsListChanged() in seen.events and ResourcesListChanged() in seen.events
    # an update of a live skill's text is no change to the list
    feed = ChangeFeed(AgentView(store))
    feed.on_live_set_change(PromptsListChanged())
    feed.on_live_set_change(PromptsListChanged())  # registering twice announces once
    counted = Recorder(feed)
    await feed.check()
    agent.save(store, "new-one", "About new-one", "# changed\n", who="t")
    human.accept_revision(
        store, "new-one", rev=store.get("new-one").proposed.revision, via="cli", who="p"
    )
    await feed.check()
    assert counted.events == [ResourceUpdated(uri="user-skill://new-one")], counted.events
