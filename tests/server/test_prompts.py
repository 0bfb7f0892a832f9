"""MCP prompts: every recipe and every live user skill as a slash command, in both eras.

In-memory checks of the handlers, then the SDK client over the stdio wire in process
(capability, list, get, a CLI publish seen by a running session; once more from the built
zipapp) and the raw wire (cache fields, errors).
The Inspector CLI runs prompts/list and prompts/get in test_inspector.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, types
from mcp.shared.exceptions import MCPError

from kite_skills import catalog
from kite_skills.catalog import Catalog, prompt_name, recipe_prompts
from kite_skills.server.app import build_server
from kite_skills.server.prompts import NO_REQUEST
from kite_skills.server.user_skills import UserSkills
from kite_skills.store import AgentView, Store, agent, human

from .harness import TOOLS, RawPeer, Target, sdk_client
from .test_user_skills_e2e import NOTICE_SECONDS, Notes, next_event, person

pytestmark = pytest.mark.anyio

REQUEST = "Buy 10 INFY at 1500 for delivery"


@pytest.fixture(params=["legacy", "auto"])
async def client(
    request: pytest.FixtureRequest, loaded: Catalog, store: Store
) -> AsyncIterator[Client]:
    # Every tool excluded: prompts do not depend on EXCLUDED_TOOLS.
    server = build_server(loaded, UserSkills(AgentView(store)), TOOLS)
    async with Client(server, mode=request.param) as c:
        yield c


def embedded(message: types.PromptMessage) -> types.TextResourceContents:
    assert message.role == "user"
    assert isinstance(message.content, types.EmbeddedResource)
    assert isinstance(message.content.resource, types.TextResourceContents)
    return message.content.resource


def text(message: types.PromptMessage) -> str:
    assert message.role == "user" and isinstance(message.content, types.TextContent)
    return message.content.text


# ---- the pure part ------------------------------------------------------------------------


def test_prompt_names_from_paths() -> None:
    assert prompt_name("orders/prepare.md") == "orders-prepare"
    assert prompt_name("a/b/c.md") == "a-b-c"


def test_one_prompt_per_recipe(loaded: Catalog) -> None:
    prompts = recipe_prompts(loaded)
    skill_dirs = {s.uri.removesuffix("/SKILL.md") for s in loaded.skills}
    recipes = sorted(  # pages beside a SKILL.md; a supporting directory's pages are not recipes
        r.uri
        for r in loaded.resources()
        if not r.uri.endswith("/SKILL.md") and r.uri.rsplit("/", 1)[0] in skill_dirs
    )
    assert "skill://daily-review/templates/briefing-report.md" not in recipes
    assert sorted(p.uri for p in prompts) == recipes
    prepare = next(p for p in prompts if p.name == "orders-prepare")
    assert prepare.uri == "skill://orders/prepare.md"
    assert prepare.title == "Prepare an order"
    assert prepare.description and prepare.description.startswith("Prepare a new order")
    assert prepare.raw == loaded.read("skill://orders/prepare.md")


def test_a_supporting_directory_is_not_a_prompt(tmp_path: Path) -> None:
    root = tmp_path / "cat"
    (root / "orders" / "examples").mkdir(parents=True)
    (root / "index.md").write_text("# Root\n\n- [Orders](orders/SKILL.md)\n")
    (root / "orders" / "SKILL.md").write_text(
        "---\nname: orders\ndescription: Orders. Use for orders.\nlicense: MIT\n"
        'compatibility: Needs the Kite MCP server.\nmetadata:\n  version: "1"\n---\n# Orders\n\n'
        "- [Prepare](prepare.md)\n"
    )
    (root / "orders" / "prepare.md").write_bytes(b"# Prepare\r\n\r\nSteps.\r\n")
    (root / "orders" / "examples" / "one.md").write_text("# One example\n")
    prompts = recipe_prompts(catalog.load(root))
    assert [(p.name, p.title, p.description) for p in prompts] == [
        ("orders-prepare", "Prepare", "Prepare")
    ]
    assert prompts[0].raw == b"# Prepare\r\n\r\nSteps.\r\n"  # original bytes, CRLF kept


# ---- handlers, in memory, both eras -------------------------------------------------------


async def test_list_offers_every_recipe(client: Client, loaded: Catalog) -> None:
    listed = (await client.list_prompts()).prompts
    assert [p.name for p in listed] == [p.name for p in recipe_prompts(loaded)]
    by_name = {p.name: p for p in listed}
    prepare = by_name["orders-prepare"]
    assert prepare.title == "Prepare an order"
    assert prepare.description == loaded.help("/orders/prepare").description
    assert prepare.arguments is not None
    [argument] = prepare.arguments
    assert (argument.name, argument.required) == ("request", False)


async def test_get_embeds_the_recipe_then_the_request(client: Client, loaded: Catalog) -> None:
    for prompt in recipe_prompts(loaded):
        result = await client.get_prompt(prompt.name, {"request": REQUEST})
        assert len(result.messages) == 2
        resource = embedded(result.messages[0])
        assert str(resource.uri) == prompt.uri
        assert resource.mime_type == "text/markdown"
        assert resource.text.encode("utf-8") == loaded.read(prompt.uri)
        assert text(result.messages[1]) == REQUEST
        assert result.description == prompt.description


async def test_get_without_a_request(client: Client) -> None:
    result = await client.get_prompt("orders-reconcile")
    assert text(result.messages[1]) == NO_REQUEST


@pytest.mark.parametrize("name", ["orders", "orders-nope", "my-nope", "my-BAD NAME", ""])
async def test_unknown_prompt_is_invalid_params(client: Client, name: str) -> None:
    with pytest.raises(MCPError) as caught:
        await client.get_prompt(name)
    assert caught.value.code == -32602


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_only_live_user_skills_are_prompts(loaded: Catalog, store: Store, mode: str) -> None:
    human.import_skills(
        store, [("compare-funds", "How I compare funds", "# Compare\n")], via="cli", who="pat"
    )
    human.import_skills(store, [("old-way", "Retired", "# Old\n")], via="cli", who="pat")
    human.archive(store, "old-way", via="cli", who="pat")
    agent.save(store, "my-draft", "An agent's draft", "# Draft\n", who="agent")
    server = build_server(loaded, UserSkills(AgentView(store)))
    async with Client(server, mode=mode) as c:
        names = [p.name for p in (await c.list_prompts()).prompts]
        assert [n for n in names if n.startswith("my-")] == ["my-compare-funds"]
        mine = next(p for p in (await c.list_prompts()).prompts if p.name == "my-compare-funds")
        assert mine.description == "How I compare funds"
        result = await c.get_prompt("my-compare-funds", {"request": "ICICI vs HDFC"})
        resource = embedded(result.messages[0])
        assert str(resource.uri) == "user-skill://compare-funds"
        assert resource.text == store.read_live("compare-funds").document()
        assert text(result.messages[1]) == "ICICI vs HDFC"
        for hidden in ("my-old-way", "my-my-draft"):
            with pytest.raises(MCPError) as caught:
                await c.get_prompt(hidden)
            assert caught.value.code == -32602


async def test_a_repeated_list_follows_every_change_of_the_live_skills(
    loaded: Catalog, store: Store
) -> None:
    # Legacy: the 2026-07-28 SDK client keeps a listing for its ttlMs itself.
    server = build_server(loaded, UserSkills(AgentView(store)))
    async with Client(server, mode="legacy") as c:

        async def mine() -> list[tuple[str, str | None]]:
            listed = (await c.list_prompts()).prompts
            return [(p.name, p.description) for p in listed if p.name.startswith("my-")]

        assert await mine() == await mine() == []
        human.import_skills(store, [("alpha", "First", "# A\n")], via="cli", who="pat")
        assert await mine() == await mine() == [("my-alpha", "First")]
        human.edit(
            store,
            "alpha",
            rev=store.get("alpha").revision,
            description="Changed",
            via="cli",
            who="pat",
        )
        assert await mine() == [("my-alpha", "Changed")]
        with Store.open(store.path) as other:  # another connection, as the dashboard's
            human.archive(other, "alpha", via="dashboard", who="pat")
        assert await mine() == await mine() == []
        with pytest.raises(MCPError):
            await c.list_prompts(cursor="abc")
        assert len((await c.list_prompts()).prompts) == len(recipe_prompts(loaded))


async def test_a_listing_reads_the_live_skills_once_per_change(
    loaded: Catalog, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's LiveSkills judges freshness for the kept answer and the handler alike: no
    read while nothing was committed, one per commit (never a second for the handler), and a
    commit beside the live skills (a draft) keeps the answer."""
    human.import_skills(store, [("alpha", "First", "# A\n")], via="cli", who="pat")
    reads: list[int] = []
    real = store.live_summaries

    def counted() -> Any:
        reads.append(1)
        return real()

    monkeypatch.setattr(store, "live_summaries", counted)
    server = build_server(loaded, UserSkills(AgentView(store)))
    async with Client(server, mode="legacy") as c:
        first = await c.list_prompts()
        assert [p.name for p in first.prompts if p.name.startswith("my-")] == ["my-alpha"]
        assert len(reads) == 1
        assert await c.list_prompts() == first
        assert len(reads) == 1
        with Store.open(store.path) as other:  # another connection, as the dashboard's
            agent.save(other, "a-draft", "Not live", "# D\n", who="bot")
            assert await c.list_prompts() == first
            assert len(reads) == 2
            rev = other.get("alpha").revision
            human.edit(other, "alpha", rev=rev, description="Changed", via="dashboard", who="p")
        changed = await c.list_prompts()
        assert [p.description for p in changed.prompts if p.name == "my-alpha"] == ["Changed"]
        assert len(reads) == 3


# ---- over the stdio wire: SDK client, both eras (the first also from the built zipapp) -----


@pytest.mark.zipapp
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_zipapp_offers_prompts(pyz: Path, shiv_root: Path, db: Path, mode: str) -> None:
    async with sdk_client(pyz, shiv_root, db, mode=mode) as client:
        capabilities = client.server_capabilities
        assert capabilities.prompts is not None and capabilities.prompts.list_changed is True
        listed = (await client.list_prompts()).prompts
        assert "orders-prepare" in {p.name for p in listed}
        result = await client.get_prompt("orders-prepare", {"request": REQUEST})
        resource = embedded(result.messages[0])
        assert str(resource.uri) == "skill://orders/prepare.md"
        assert resource.text.encode() == catalog.load().read("skill://orders/prepare.md")
        assert text(result.messages[1]) == REQUEST


async def test_cli_publish_reaches_a_legacy_prompt_list(
    target: Target, shiv_root: Path, db: Path
) -> None:
    notes = Notes()
    async with sdk_client(target, shiv_root, db, mode="legacy", message_handler=notes) as client:
        saved = await client.call_tool(
            "skillSave", {"name": "compare-funds", "description": "Compare", "body": "# C\n"}
        )
        assert not saved.is_error
        await anyio.sleep(0.7)  # let the watcher take its first reading
        names = {p.name for p in (await client.list_prompts()).prompts}
        assert "my-compare-funds" not in names  # a draft is never a prompt
        await anyio.to_thread.run_sync(lambda: person(shiv_root, db, "publish", "compare-funds"))
        await notes.wait_for("notifications/prompts/list_changed")
        names = {p.name for p in (await client.list_prompts()).prompts}
        assert "my-compare-funds" in names
        await anyio.to_thread.run_sync(lambda: person(shiv_root, db, "archive", "compare-funds"))
        await notes.wait_for("notifications/prompts/list_changed", after=1)
        names = {p.name for p in (await client.list_prompts()).prompts}
        assert "my-compare-funds" not in names


async def test_cli_publish_reaches_a_modern_prompt_listener(
    target: Target, shiv_root: Path, db: Path
) -> None:
    async with sdk_client(target, shiv_root, db, mode="auto") as client:
        assert client.session.protocol_version == "2026-07-28"
        saved = await client.call_tool(
            "skillSave", {"name": "compare-funds", "description": "Compare", "body": "# C\n"}
        )
        assert not saved.is_error
        async with client.listen(prompts_list_changed=True) as sub:
            assert sub.honored.prompts_list_changed
            await anyio.sleep(0.7)
            await anyio.to_thread.run_sync(
                lambda: person(shiv_root, db, "publish", "compare-funds")
            )
            seen: list[str] = []
            with anyio.fail_after(NOTICE_SECONDS):
                while "PromptsListChanged" not in seen:
                    seen.append(type(await next_event(sub)).__name__)
        names = {p.name for p in (await client.list_prompts()).prompts}
        assert "my-compare-funds" in names


# ---- the raw wire: cache fields and errors, both eras -------------------------------------


def test_raw_prompts_list_carries_cache_fields(raw: RawPeer) -> None:
    init = raw.initialize({})["result"]
    assert init["capabilities"]["prompts"] == {"listChanged": True}
    legacy = raw.request("prompts/list", {})["result"]
    assert (legacy["ttlMs"], legacy["cacheScope"]) == (60000, "private")
    assert legacy["prompts"] and "nextCursor" not in legacy
    error = raw.request("prompts/get", {"name": "nope"})["error"]
    assert error["code"] == -32602
    bad_cursor = raw.request("prompts/list", {"cursor": "abc"})["error"]
    assert bad_cursor["code"] == -32602


def test_raw_modern_prompts_list_carries_cache_fields(raw: RawPeer) -> None:
    result: dict[str, Any] = raw.modern("prompts/list")["result"]
    assert (result["ttlMs"], result["cacheScope"], result["resultType"]) == (
        60000,
        "private",
        "complete",
    )
    got = raw.modern("prompts/get", {"name": "orders-prepare", "arguments": {"request": REQUEST}})
    messages = got["result"]["messages"]
    assert messages[0]["content"]["resource"]["uri"] == "skill://orders/prepare.md"
    assert messages[0]["content"]["resource"]["mimeType"] == "text/markdown"
    assert messages[1]["content"] == {"type": "text", "text": REQUEST}
    assert raw.modern("prompts/get", {"name": "nope"})["error"]["code"] == -32602
