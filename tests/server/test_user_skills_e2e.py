"""The user's own skills end to end: the server over its stdio wire (in process), the SDK
client in both eras, and the person's side as a real other process (``kite-skills skills …``)
on the same file.

The rule under test: an agent must not be able to write itself an instruction and then
follow it in the same session.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, types
from mcp.shared.exceptions import MCPError

from kite_skills import invocation
from kite_skills.store import Store, human
from kite_skills.store.lifecycle import Action, puts_text_in_service

from ..terminal import at_terminal
from .harness import Target, person_command, sdk_client

pytestmark = pytest.mark.anyio

MODES = ["legacy", "auto"]
NAME = "compare-funds"
DESCRIPTION = "How I compare two mutual funds before switching"
BODY = "# Compare funds\n\n1. Expense ratio first.\n2. Then five-year rolling returns.\n"
CLIENT = types.Implementation(name="e2e-agent", version="4.2")
NOTICE_SECONDS = 5.0  # the watcher polls every 0.5 s; "about a second" with slack for CI


# ---- helpers ------------------------------------------------------------------------------


def person(shiv_root: Path, db: Path, *args: str) -> str:
    """Run ``kite-skills skills ARGS --db DB`` as a separate process (the human side), at a
    terminal where the person types the skill's name when asked (tests/terminal.py).
    ``publish`` and ``accept`` name the revision the person reviewed: the current one."""
    if args[0] in ("publish", "accept") and "--rev" not in args:
        with Store.open(db) as store:
            skill = store.get(args[1])
        reviewed = skill.proposed if args[0] == "accept" else skill
        args = (*args, "--rev", reviewed.revision if reviewed is not None else "none")
    typed = []  # what puts text into service is confirmed at the terminal: type the name
    with Store.open(db) as store:
        verb = Action.MOVE_TO_DRAFT if args[0] == "draft" else Action(args[0])
        if puts_text_in_service(verb, store.get(args[1]).status):
            typed = [args[1]]
    command, needs = person_command()
    done = at_terminal(
        [*command, "skills", *args, "--db", str(db)],
        {
            **needs,
            "SHIV_ROOT": str(shiv_root),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "USER": "pat",
        },
        typed,
    )
    assert done.returncode == 0, (args, done)
    return done.stdout


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def row(db: Path, name: str) -> dict[str, Any] | None:
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        found = conn.execute("SELECT * FROM skills WHERE name = ?", (name,)).fetchone()
    return dict(found) if found is not None else None


async def tool(client: Client, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    return await client.call_tool(name, arguments)


async def resource_uris(client: Client) -> set[str]:
    listed = await client.list_resources(cache_mode="bypass")
    return {str(r.uri) for r in listed.resources}


async def listed_names(client: Client, q: str | None = None) -> list[str]:
    result = await tool(client, "skills", {} if q is None else {"q": q})
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return [s["name"] for s in result.structured_content["skills"]]


class Notes:
    """Notifications the client received, with a deadline-bounded wait."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []

    async def __call__(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if method is not None:
            params = getattr(message, "params", None)
            uri = getattr(params, "uri", None)
            self.seen.append((method, str(uri) if uri is not None else None))

    def count(self, method: str, uri: str | None = None) -> int:
        return sum(1 for m, u in self.seen if m == method and (uri is None or u == uri))

    async def wait_for(self, method: str, uri: str | None = None, *, after: int = 0) -> float:
        """Seconds until more than ``after`` such notifications arrived; fails at the deadline."""
        start = time.monotonic()
        while self.count(method, uri) <= after:
            if time.monotonic() - start > NOTICE_SECONDS:
                pytest.fail(f"no {method} {uri or ''} within {NOTICE_SECONDS}s; saw {self.seen}")
            await anyio.sleep(0.05)
        return time.monotonic() - start


async def subscribe(client: Client, uri: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated in 2026-07-28, still the legacy way
        await client.subscribe_resource(uri)


async def next_event(subscription: Any, seconds: float = NOTICE_SECONDS) -> Any:
    with anyio.fail_after(seconds):
        return await subscription.__anext__()


async def until(check: Callable[[], Awaitable[bool]], seconds: float = NOTICE_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while not await check():
        if time.monotonic() > deadline:
            pytest.fail("condition not met in time")
        await anyio.sleep(0.1)


# ---- 1. the draft boundary, both eras -----------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_a_saved_draft_is_invisible_and_unpublishable_in_the_same_session(
    target: Target, shiv_root: Path, db: Path, mode: str
) -> None:
    async with sdk_client(target, shiv_root, db, mode=mode) as client:  # type: ignore[arg-type]
        saved = await tool(
            client, "skillSave", {"name": NAME, "description": DESCRIPTION, "body": BODY}
        )
        assert not saved.is_error, text_of(saved)
        said = text_of(saved)
        assert "person" in said
        # What to ask the person, with the command that starts this very file.
        assert "ask the person to open their kite-skills dashboard" in said
        kite = (  # how the server was started: the zipapp, or this process (in process)
            shlex.join([sys.executable, str(target)])
            if isinstance(target, Path)
            else invocation.current().command
        )
        assert f"they can start it with: {kite} dashboard" in said
        assert saved.structured_content == {
            "name": NAME,
            "outcome": "created",
            "status": "draft",
            "replaced_pending": False,
        }

        assert NAME not in await listed_names(client)
        for q in ("compare", "funds", "expense ratio", NAME):
            assert NAME not in await listed_names(client, q), q

        read = await tool(client, "skillRead", {"name": NAME})
        assert read.is_error
        assert "draft" in text_of(read)
        assert "a person must publish it first" in text_of(read)
        assert "Expense ratio" not in text_of(read)  # the body never leaks

        assert f"user-skill://{NAME}" not in await resource_uris(client)
        with pytest.raises(MCPError) as raised:
            await client.read_resource(f"user-skill://{NAME}", cache_mode="bypass")
        assert raised.value.code == types.INVALID_PARAMS

        published = await tool(client, "skillPublish", {"name": NAME})
        assert published.is_error, text_of(published)
        refusal = text_of(published)
        assert "dashboard" in refusal or "kite-skills skills publish" in refusal

        # Saving again (the agent retrying) still leaves a draft that nobody can see.
        again = await tool(
            client,
            "skillSave",
            {"name": NAME, "description": DESCRIPTION, "body": BODY + "3. Exit load.\n"},
        )
        assert not again.is_error and again.structured_content["status"] == "draft"  # type: ignore[index]
        assert (await tool(client, "skillRead", {"name": NAME})).is_error

    with Store.open(db) as store:
        skill = store.get(NAME)
        assert skill.status == "draft"
        assert skill.published_at is None
        assert store.list_live() == []
        actions = [(e.action, e.via, e.to_status) for e in reversed(store.audit())]
    assert actions[0][1:] == ("mcp", "draft")
    assert all(via == "mcp" and to == "draft" for _, via, to in actions)
    stored = row(db, NAME)
    assert stored is not None and stored["status"] == "draft" and stored["published_at"] is None


# ---- 2. a person publishes from another process --------------------------------------------


async def test_cli_publish_reaches_a_running_legacy_session(
    target: Target, shiv_root: Path, db: Path
) -> None:
    notes = Notes()
    uri = f"user-skill://{NAME}"
    async with sdk_client(target, shiv_root, db, mode="legacy", message_handler=notes) as client:
        saved = await tool(
            client, "skillSave", {"name": NAME, "description": DESCRIPTION, "body": BODY}
        )
        assert not saved.is_error
        await subscribe(client, uri)
        # The watcher takes its first reading before the first request is served.
        assert notes.count("notifications/resources/list_changed") == 0

        out = await anyio.to_thread.run_sync(lambda: person(shiv_root, db, "publish", NAME))
        assert NAME in out
        # How soon is measured by bench/run.py (write → list_changed), never timed here.
        await notes.wait_for("notifications/resources/list_changed")

        assert await listed_names(client) == [NAME]
        assert await listed_names(client, "expense") == [NAME]
        read = await tool(client, "skillRead", {"name": NAME})
        assert not read.is_error, text_of(read)
        assert read.structured_content == {"name": NAME, "description": DESCRIPTION, "body": BODY}
        assert BODY in text_of(read)

        assert uri in await resource_uris(client)
        listed = await client.list_resources(cache_mode="bypass")
        entry = next(r for r in listed.resources if str(r.uri) == uri)
        assert entry.mime_type == "text/markdown"
        contents = (await client.read_resource(uri, cache_mode="bypass")).contents
        assert len(contents) == 1
        document = contents[0]
        assert isinstance(document, types.TextResourceContents)
        assert document.mime_type == "text/markdown"
        assert document.text.startswith("---\n")
        front, body = document.text.removeprefix("---\n").split("\n---\n", 1)
        assert f'name: "{NAME}"' in front.splitlines()
        assert f'description: "{DESCRIPTION}"' in front.splitlines()
        assert body == BODY
        assert entry.size == len(document.text.encode())

    with Store.open(db) as store:
        skill = store.get(NAME)
        assert skill.status == "live" and skill.published_at is not None
        publish = store.audit(name=NAME)[0]
        assert (publish.action, publish.via, publish.who) == ("publish", "cli", "pat")


async def test_cli_publish_reaches_a_modern_listener(
    target: Target, shiv_root: Path, db: Path
) -> None:
    uri = f"user-skill://{NAME}"
    async with sdk_client(target, shiv_root, db, mode="auto") as client:
        assert client.session.protocol_version == "2026-07-28"
        saved = await tool(
            client, "skillSave", {"name": NAME, "description": DESCRIPTION, "body": BODY}
        )
        assert not saved.is_error
        async with client.listen(resources_list_changed=True, resource_subscriptions=[uri]) as sub:
            assert sub.honored.resources_list_changed  # listening from here on
            await anyio.to_thread.run_sync(lambda: person(shiv_root, db, "publish", NAME))
            events = [await next_event(sub)]
            # The same change may also surface as an update of the (newly live) URI.
            with anyio.move_on_after(1.0):
                events.append(await sub.__anext__())
            kinds = {type(e).__name__ for e in events}
            assert "ResourcesListChanged" in kinds, events
            assert await listed_names(client) == [NAME]
            assert not (await tool(client, "skillRead", {"name": NAME})).is_error
            assert uri in await resource_uris(client)

            # A proposed revision changes nothing served; the person's accept is an update.
            revised = {"name": NAME, "description": DESCRIPTION, "body": BODY + "3. Exit load.\n"}
            proposed = await tool(client, "skillSave", revised)
            assert proposed.structured_content["outcome"] == "proposed"  # type: ignore[index]
            read = await tool(client, "skillRead", {"name": NAME})
            assert read.structured_content["body"] == BODY  # type: ignore[index]
            await anyio.to_thread.run_sync(lambda: person(shiv_root, db, "accept", NAME))
            updates = []
            with anyio.fail_after(NOTICE_SECONDS):
                while not any(getattr(e, "uri", None) == uri for e in updates):
                    updates.append(await sub.__anext__())
            read = await tool(client, "skillRead", {"name": NAME})
            assert read.structured_content["body"].endswith("Exit load.\n")  # type: ignore[index]

            # Taking it out of service from the CLI is a list change too.
            await anyio.to_thread.run_sync(lambda: person(shiv_root, db, "archive", NAME))
            seen = []
            with anyio.fail_after(NOTICE_SECONDS):
                while "ResourcesListChanged" not in seen:
                    seen.append(type(await sub.__anext__()).__name__)
            assert await listed_names(client) == []


# ---- 3. unpublish / publish round trip, revisions, updates ---------------------------------


async def _live_skill(client: Client, shiv_root: Path, db: Path, name: str = NAME) -> None:
    saved = await tool(
        client, "skillSave", {"name": name, "description": DESCRIPTION, "body": BODY}
    )
    assert not saved.is_error, text_of(saved)
    await anyio.to_thread.run_sync(lambda: person(shiv_root, db, "publish", name))


@pytest.mark.parametrize("mode", MODES)
async def test_unpublish_and_publish_round_trip_over_mcp(
    target: Target, shiv_root: Path, db: Path, mode: str
) -> None:
    uri = f"user-skill://{NAME}"
    async with sdk_client(
        target,
        shiv_root,
        db,
        mode=mode,
        client_info=CLIENT,  # type: ignore[arg-type]
    ) as client:
        await _live_skill(client, shiv_root, db)
        await until(lambda: _has(client, uri))

        out = await tool(client, "skillUnpublish", {"name": NAME})
        assert not out.is_error, text_of(out)
        assert out.structured_content == {"name": NAME, "status": "archived"}
        assert await listed_names(client) == []
        assert uri not in await resource_uris(client)
        read = await tool(client, "skillRead", {"name": NAME})
        assert read.is_error and "archived" in text_of(read)

        again = await tool(client, "skillUnpublish", {"name": NAME})
        assert not again.is_error and "already" in text_of(again).lower(), text_of(again)

        back = await tool(client, "skillPublish", {"name": NAME})
        assert not back.is_error, text_of(back)
        assert back.structured_content == {"name": NAME, "status": "live"}
        assert await listed_names(client) == [NAME]
        assert uri in await resource_uris(client)
        assert not (await tool(client, "skillRead", {"name": NAME})).is_error

        twice = await tool(client, "skillPublish", {"name": NAME})
        assert not twice.is_error, text_of(twice)

    with Store.open(db) as store:
        entries = list(reversed(store.audit(name=NAME)))
        skill = store.get(NAME)
    moves = [(e.action, e.from_status, e.to_status, e.via) for e in entries]
    assert moves[0][1:] == (None, "draft", "mcp")
    assert moves[1][1:] == ("draft", "live", "cli")
    assert moves[2][1:] == ("live", "archived", "mcp")
    assert moves[3][1:] == ("archived", "live", "mcp")
    assert len(moves) == 4, moves  # the no-ops wrote nothing
    for e in (entries[0], entries[2], entries[3]):
        assert e.who == "e2e-agent 4.2", e
    publish_time = entries[1].at
    assert skill.published_at == publish_time  # republishing over MCP never touched it


async def _has(client: Client, uri: str) -> bool:
    return uri in await resource_uris(client)


async def test_revision_keeps_live_text_until_accepted_and_updates_are_notified(
    target: Target, shiv_root: Path, db: Path
) -> None:
    notes = Notes()
    uri = f"user-skill://{NAME}"
    revised = BODY + "3. Check the exit load.\n"
    async with sdk_client(
        target, shiv_root, db, mode="legacy", message_handler=notes, client_info=CLIENT
    ) as client:
        await _live_skill(client, shiv_root, db)
        await notes.wait_for("notifications/resources/list_changed")
        await subscribe(client, uri)

        proposal = await tool(
            client, "skillSave", {"name": NAME, "description": DESCRIPTION, "body": revised}
        )
        assert not proposal.is_error, text_of(proposal)
        assert proposal.structured_content == {
            "name": NAME,
            "outcome": "proposed",
            "status": "live",
            "replaced_pending": False,
        }
        assert "person" in text_of(proposal)

        read = await tool(client, "skillRead", {"name": NAME})
        assert read.structured_content["body"] == BODY  # type: ignore[index]
        document = (await client.read_resource(uri, cache_mode="bypass")).contents[0]
        assert "exit load" not in document.text  # type: ignore[union-attr]
        assert NAME not in await listed_names(client, "exit load")
        # A proposal is no change. A person's later write (another skill going live) is
        # announced only after the watcher has read the file again: by then an update for
        # the proposal would have come.
        lists = notes.count("notifications/resources/list_changed")
        await _live_skill(client, shiv_root, db, "marker")
        await notes.wait_for("notifications/resources/list_changed", after=lists)
        assert notes.count("notifications/resources/updated", uri) == 0

        updates = notes.count("notifications/resources/updated", uri)
        await anyio.to_thread.run_sync(lambda: person(shiv_root, db, "accept", NAME))
        await notes.wait_for("notifications/resources/updated", uri, after=updates)
        read = await tool(client, "skillRead", {"name": NAME})
        assert read.structured_content["body"] == revised  # type: ignore[index]
        document = (await client.read_resource(uri, cache_mode="bypass")).contents[0]
        assert document.text.endswith(revised)  # type: ignore[union-attr]

        updates = notes.count("notifications/resources/updated", uri)
        lists = notes.count("notifications/resources/list_changed")
        await anyio.to_thread.run_sync(lambda: person(shiv_root, db, "archive", NAME))
        await notes.wait_for("notifications/resources/list_changed", after=lists)
        await notes.wait_for("notifications/resources/updated", uri, after=updates)
        assert uri not in await resource_uris(client)

    with Store.open(db) as store:
        entries = list(reversed(store.audit(name=NAME)))
    propose = next(e for e in entries if e.action == "propose")
    assert (propose.via, propose.who, propose.from_status, propose.to_status) == (
        "mcp",
        "e2e-agent 4.2",
        "live",
        "live",
    )
    accept = next(e for e in entries if e.action == "accept")
    assert accept.via == "cli"


# ---- 4. moved back to draft vs archived ----------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_skill_moved_back_to_draft_is_refused_but_archived_is_restored(
    target: Target, shiv_root: Path, db: Path, mode: str
) -> None:
    async with sdk_client(target, shiv_root, db, mode=mode) as client:  # type: ignore[arg-type]
        await _live_skill(client, shiv_root, db, "taken-back")
        await _live_skill(client, shiv_root, db, "put-away")
        await anyio.to_thread.run_sync(lambda: person(shiv_root, db, "draft", "taken-back"))
        await anyio.to_thread.run_sync(lambda: person(shiv_root, db, "archive", "put-away"))

        refused = await tool(client, "skillPublish", {"name": "taken-back"})
        assert refused.is_error, text_of(refused)
        assert "dashboard" in text_of(refused) or "kite-skills skills" in text_of(refused)
        read = await tool(client, "skillRead", {"name": "taken-back"})
        assert read.is_error and "a person must publish it first" in text_of(read)

        restored = await tool(client, "skillPublish", {"name": "put-away"})
        assert not restored.is_error, text_of(restored)
        assert await listed_names(client) == ["put-away"]

        unknown = await tool(client, "skillPublish", {"name": "never-saved"})
        assert unknown.is_error and "never-saved" in text_of(unknown)
        unknown = await tool(client, "skillRead", {"name": "never-saved"})
        assert unknown.is_error and "no live skill" in text_of(unknown)

    with Store.open(db) as store:
        back = store.get("taken-back")
        assert back.status == "draft"
        assert back.published_at is not None  # the person published it once; still refused
        assert store.get("put-away").status == "live"
        assert store.audit(name="taken-back")[0].via == "cli"  # the refusal wrote nothing


# ---- 7. a read-only deployment -------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_excluded_tools_make_a_read_only_deployment(
    target: Target, shiv_root: Path, db: Path, mode: str
) -> None:
    env = {"EXCLUDED_TOOLS": "skillSave,skillUnpublish,skillPublish"}
    async with sdk_client(target, shiv_root, db, mode=mode, env=env) as client:  # type: ignore[arg-type]
        tools = (await client.list_tools(cache_mode="bypass")).tools
        assert {t.name for t in tools} == {"help", "calc", "skills", "skillRead"}
        for t in tools:
            if t.name in ("skills", "skillRead"):
                assert t.annotations is not None and t.annotations.read_only_hint is True
        for name in ("skillSave", "skillUnpublish", "skillPublish"):
            with pytest.raises(MCPError) as raised:
                await client.call_tool(name, {"name": NAME, "description": "d", "body": "b"})
            assert raised.value.code == types.INVALID_PARAMS, name
        assert await listed_names(client) == []
    with Store.open(db) as store:
        assert store.list_all() == [] and store.audit() == []


async def test_all_five_tools_and_their_annotations(
    target: Target, shiv_root: Path, db: Path
) -> None:
    async with sdk_client(target, shiv_root, db, mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools(cache_mode="bypass")).tools}
    assert {"skills", "skillRead", "skillSave", "skillUnpublish", "skillPublish"} <= set(tools)
    for reader in ("skills", "skillRead"):
        a = tools[reader].annotations
        assert a is not None and a.read_only_hint is True and a.idempotent_hint is True
    for writer in ("skillSave", "skillUnpublish", "skillPublish"):
        a = tools[writer].annotations
        assert a is not None and a.read_only_hint is False
    assert tools["skillUnpublish"].annotations.destructive_hint is True  # type: ignore[union-attr]
    assert tools["skillSave"].input_schema["required"] == ["name", "description", "body"]
    assert tools["skills"].input_schema["properties"]["limit"]["maximum"] == 100


# ---- 8. catalog and user skills never collide ----------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_catalog_and_user_skills_never_collide(
    target: Target, shiv_root: Path, db: Path, mode: str
) -> None:
    async with sdk_client(target, shiv_root, db, mode=mode) as client:  # type: ignore[arg-type]
        for q in ("orders", "order", "reconcile", "holdings"):
            assert await listed_names(client, q) == [], q
        assert await listed_names(client) == []

        await tool(
            client,
            "skillSave",
            {"name": "orders", "description": "My own way with orders", "body": "# Mine\n"},
        )
        await anyio.to_thread.run_sync(lambda: person(shiv_root, db, "publish", "orders"))
        await until(lambda: _has(client, "user-skill://orders"))

        uris = await resource_uris(client)
        catalog = {u for u in uris if u.startswith("skill://")}
        user = {u for u in uris if u.startswith("user-skill://")}
        assert user == {"user-skill://orders"}
        assert "skill://orders/SKILL.md" in catalog
        assert catalog | user == uris

        mine = (await client.read_resource("user-skill://orders", cache_mode="bypass")).contents
        theirs = (
            await client.read_resource("skill://orders/SKILL.md", cache_mode="bypass")
        ).contents
        assert "# Mine" in mine[0].text  # type: ignore[union-attr]
        assert "# Mine" not in theirs[0].text  # type: ignore[union-attr]
        assert await listed_names(client, "orders") == ["orders"]  # only the user's own


# ---- two MCP servers and a person on one file ----------------------------------------------


async def test_a_change_by_one_server_reaches_a_session_on_another(
    target: Target, shiv_root: Path, db: Path
) -> None:
    watching = Notes()
    uri = f"user-skill://{NAME}"
    async with (
        sdk_client(target, shiv_root, db, mode="legacy", message_handler=watching) as first,
        sdk_client(target, shiv_root, db, mode="auto", client_info=CLIENT) as second,
    ):
        await _live_skill(second, shiv_root, db)
        await watching.wait_for("notifications/resources/list_changed")
        assert await listed_names(first) == [NAME]
        await subscribe(first, uri)

        lists = watching.count("notifications/resources/list_changed")
        out = await tool(second, "skillUnpublish", {"name": NAME})
        assert not out.is_error, text_of(out)
        await watching.wait_for("notifications/resources/list_changed", after=lists)
        await watching.wait_for("notifications/resources/updated", uri)
        assert await listed_names(first) == []
        assert (await tool(first, "skillRead", {"name": NAME})).is_error

        lists = watching.count("notifications/resources/list_changed")
        out = await tool(second, "skillPublish", {"name": NAME})
        assert not out.is_error, text_of(out)
        await watching.wait_for("notifications/resources/list_changed", after=lists)
        assert await listed_names(first) == [NAME]


async def test_skills_lists_live_skills_by_name_with_the_default_and_maximum_limit(
    target: Target, shiv_root: Path, db: Path
) -> None:
    names = [f"skill-{i:03d}" for i in range(120)]
    with Store.open(db) as store:
        human.import_skills(
            store,
            [(n, f"Procedure {n}", f"# {n}\nShared word zebra.\n") for n in names],
            via="cli",
            who="pat",
        )
    async with sdk_client(target, shiv_root, db, mode="auto") as client:
        assert await listed_names(client) == names[:20]
        for blank in ("", "   ", "\t"):  # a blank q lists, as no q does
            assert await listed_names(client, blank) == names[:20]
        blank_text = text_of(await tool(client, "skills", {"q": " "}))
        assert blank_text.startswith("20 live skill(s)\n"), blank_text
        wide = await tool(client, "skills", {"limit": 100})
        assert [s["name"] for s in wide.structured_content["skills"]] == names[:100]  # type: ignore[index]
        found = await tool(client, "skills", {"q": "zebra", "limit": 7})
        zebras = [s["name"] for s in found.structured_content["skills"]]  # type: ignore[index]
        assert zebras == names[:7]  # a 120-way tie (every skill scores alike): first by name
        assert "Shared word" not in text_of(found)  # names and descriptions, never bodies
        assert len((await client.list_resources(cache_mode="bypass")).resources) >= 120
