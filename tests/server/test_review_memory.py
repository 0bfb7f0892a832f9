"""Issue 22 §4-5 over a real stdio subprocess (the zipapp) with the SDK client: a save after a
rejection is told the person's reason, a description change reaches a client's slash
commands (prompts/list_changed), and reads leave receipts — off the request path, never
failing a read when the store is busy, and none when the person turned them off."""

from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path

import anyio
import pytest
from mcp import types

from kite_skills.store import Store, human

from .harness import MODERN, RawPeer, sdk_client
from .test_user_skills_e2e import Notes, subscribe, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.zipapp]

NAME = "compare-funds"
BODY = "# Compare funds\n\n1. Expense ratio first.\n"
CLIENT = types.Implementation(name="memory-agent", version="2.0")
BOUND = 10.0  # seconds: a bound for "eventually", never a measured speed


def _live(db: Path, name: str = NAME, description: str = "How I compare funds") -> None:
    with Store.open(db) as store:
        human.import_skills(store, [(name, description, BODY)], via="cli", who="pat")


async def test_the_next_save_after_a_rejection_is_told_the_reason_escaped(
    pyz: Path, shiv_root: Path, db: Path
) -> None:
    _live(db)
    async with sdk_client(pyz, shiv_root, db, mode="legacy", client_info=CLIENT) as client:
        first = await client.call_tool(
            "skillSave", {"name": NAME, "description": "Better", "body": BODY + "2. More\n"}
        )
        assert not first.is_error and "rejected" not in text_of(first)
        with Store.open(db) as store:  # the person, on another connection
            human.reject_revision(
                store, NAME, via="dashboard", who="pat", reason="Keep step 1 \u202e as it was"
            )
        again = await client.call_tool(
            "skillSave", {"name": NAME, "description": "Better", "body": BODY + "2. Less\n"}
        )
        text = text_of(again)
        assert not again.is_error, text
        assert "a person rejected your previous proposed revision of 'compare-funds'" in text
        assert "'Keep step 1 \\u202e as it was'" in text  # quoted data, the bidi escaped
        assert "\u202e" not in text
        assert again.structured_content is not None
        assert again.structured_content["previous_rejected"]["reason"] == (
            "Keep step 1 \\u202e as it was"
        )
        third = await client.call_tool(
            "skillSave", {"name": NAME, "description": "Better", "body": BODY + "2. Other\n"}
        )
        assert "rejected" not in text_of(third)  # told once
        # the proposals are still invisible: the live text serves
        read = await client.call_tool("skillRead", {"name": NAME})
        assert read.structured_content is not None
        assert read.structured_content["body"] == BODY


async def test_an_accepted_description_change_announces_the_prompts_list(
    pyz: Path, shiv_root: Path, db: Path
) -> None:
    _live(db)
    notes = Notes()
    uri = f"user-skill://{NAME}"
    async with sdk_client(
        pyz, shiv_root, db, mode="legacy", message_handler=notes, client_info=CLIENT
    ) as client:
        await subscribe(client, uri)
        # the body alone changes: the resource is updated, the prompts list is not
        await client.call_tool(
            "skillSave", {"name": NAME, "description": "How I compare funds", "body": BODY + "x\n"}
        )
        with Store.open(db) as store:
            rev = store.get(NAME).proposed.revision  # type: ignore[union-attr]
            human.accept_revision(store, NAME, rev=rev, via="cli", who="pat")
        await notes.wait_for("notifications/resources/updated", uri)
        # both come from the same check, the prompts list first: none was sent
        assert notes.count("notifications/prompts/list_changed") == 0

        updates = notes.count("notifications/resources/updated", uri)
        await client.call_tool(
            "skillSave", {"name": NAME, "description": "How I compare two funds", "body": BODY}
        )
        with Store.open(db) as store:
            rev = store.get(NAME).proposed.revision  # type: ignore[union-attr]
            human.accept_revision(store, NAME, rev=rev, via="cli", who="pat")
        await notes.wait_for("notifications/prompts/list_changed")
        await notes.wait_for("notifications/resources/updated", uri, after=updates)
        listed = await client.list_prompts()
        (prompt,) = [p for p in listed.prompts if p.name.endswith(NAME)]
        assert prompt.description == "How I compare two funds"


async def _reads_of(db: Path, expected: int) -> list[tuple[str, str, str, str]]:
    deadline = time.monotonic() + BOUND
    while True:
        with closing(sqlite3.connect(db)) as conn:
            rows = conn.execute(
                "SELECT kind, item, client, via FROM read_receipts ORDER BY kind, via"
            ).fetchall()
        if len(rows) >= expected or time.monotonic() > deadline:
            return [tuple(r) for r in rows]
        await anyio.sleep(0.05)


async def test_reads_leave_receipts_naming_the_client(pyz: Path, shiv_root: Path, db: Path) -> None:
    _live(db)
    async with sdk_client(pyz, shiv_root, db, mode="legacy", client_info=CLIENT) as client:
        assert not (await client.call_tool("skillRead", {"name": NAME})).is_error
        await client.read_resource(f"user-skill://{NAME}")
        listed = await client.list_prompts()
        mine = next(p.name for p in listed.prompts if p.name.endswith(NAME))
        await client.get_prompt(mine)
        recipe = next(p for p in listed.prompts if not p.name.endswith(NAME))
        await client.get_prompt(recipe.name)
        help_page = await client.call_tool("help", {"key": "/orders/prepare"})
        assert not help_page.is_error, text_of(help_page)
        await client.read_resource("skill://orders/prepare.md")
    reads = await _reads_of(db, 4)
    # one row per (item, client): the newest read of each item wins
    by_item = {(kind, item): via for kind, item, _, via in reads}
    assert by_item[("skill", NAME)] in ("skillRead", "resources/read", "prompts/get")
    assert ("recipe", "/orders/prepare") in by_item
    assert by_item[("recipe", "skill://orders/prepare.md")] == "resources/read"
    assert {client for _, _, client, _ in reads} == {"memory-agent 2.0"}
    with Store.open(db) as store:
        (receipt,) = store.reads("skill", NAME)
    assert receipt.via == "prompts/get"  # the last of the three reads


async def test_receipts_turned_off_record_nothing(pyz: Path, shiv_root: Path, db: Path) -> None:
    _live(db)
    with Store.open(db) as store:
        human.set_read_receipts(store, False)
    async with sdk_client(pyz, shiv_root, db, mode="legacy", client_info=CLIENT) as client:
        assert not (await client.call_tool("skillRead", {"name": NAME})).is_error
    # the server writes what is queued before it exits: nothing was
    with Store.open(db) as store:
        assert store.reads() == []


def test_a_busy_store_never_fails_a_read_and_is_logged(
    pyz: Path, shiv_root: Path, db: Path
) -> None:
    _live(db)
    peer = RawPeer(pyz, shiv_root, db)
    logged: list[str] = []
    assert peer.process.stderr is not None
    reader = threading.Thread(
        target=lambda: logged.extend(iter(peer.process.stderr.readline, b"")),  # type: ignore[union-attr]
        daemon=True,
    )
    reader.start()
    try:
        peer.initialize({})
        with closing(sqlite3.connect(db, isolation_level=None)) as holder:
            holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
            reply = peer.request("tools/call", {"name": "skillRead", "arguments": {"name": NAME}})
            assert reply["result"].get("isError") is not True, reply
            assert reply["result"]["structuredContent"]["body"] == BODY
            deadline = time.monotonic() + BOUND  # until the receipt writer gives up
            while not any(b"read receipts not recorded" in line for line in logged):
                assert time.monotonic() < deadline, logged
                time.sleep(0.05)
            holder.execute("ROLLBACK")
        again = peer.request("tools/call", {"name": "skillRead", "arguments": {"name": NAME}})
        assert again["result"].get("isError") is not True, again
        assert peer.process.stdin is not None
        peer.process.stdin.close()
        code = peer.process.wait(timeout=BOUND)
        reader.join(BOUND)
    finally:
        if peer.process.poll() is None:
            peer.process.kill()
            peer.process.wait()
    stderr = b"".join(logged).decode(errors="replace")
    assert code == 0, stderr
    assert stderr.count("read receipts not recorded") == 1, stderr  # one line, not a flood
    assert "Traceback" not in stderr, stderr
    with Store.open(db) as store:  # the store answered again: the next read was recorded
        assert [r.via for r in store.reads("skill", NAME)] == ["skillRead"]


async def test_a_description_change_reaches_a_modern_prompts_listener(
    pyz: Path, shiv_root: Path, db: Path
) -> None:
    _live(db)
    async with sdk_client(pyz, shiv_root, db, mode="auto", client_info=CLIENT) as client:
        assert client.session.protocol_version == MODERN
        async with client.listen(prompts_list_changed=True) as sub:
            assert sub.honored.prompts_list_changed
            await client.call_tool(
                "skillSave", {"name": NAME, "description": "How I compare two funds", "body": BODY}
            )
            with Store.open(db) as store:
                rev = store.get(NAME).proposed.revision  # type: ignore[union-attr]
                human.accept_revision(store, NAME, rev=rev, via="cli", who="pat")
            with anyio.fail_after(BOUND):
                event = await sub.__anext__()
            assert type(event).__name__ == "PromptsListChanged"
        listed = await client.list_prompts()
        (prompt,) = [p for p in listed.prompts if p.name.endswith(NAME)]
        assert prompt.description == "How I compare two funds"
