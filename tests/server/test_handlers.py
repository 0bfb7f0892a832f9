"""server/handlers.py over the SDK's in-memory client: a catalog resource has one wire shape
(``CatalogResource.to_dict``), the same in ``resources/list``, in ``resources/directory/read``
and, for its MIME type, in ``resources/read``."""

from __future__ import annotations

import posixpath
from collections.abc import AsyncIterator

import pytest
from mcp import Client, types

from kite_skills.catalog import Catalog
from kite_skills.mcpkit.wire import wire
from kite_skills.server.app import build_server
from kite_skills.server.user_skills import UserSkills
from kite_skills.store import AgentView, Store

from .harness import custom_request

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["legacy", "auto"])
async def client(
    request: pytest.FixtureRequest, loaded: Catalog, store: Store
) -> AsyncIterator[Client]:
    async with Client(build_server(loaded, UserSkills(AgentView(store))), mode=request.param) as c:
        yield c


def test_the_sdk_resource_model_keeps_every_field_of_the_catalog_dict(loaded: Catalog) -> None:
    """Nothing the catalog writes is renamed or dropped by the SDK's ``Resource``."""
    for resource in loaded.resources():
        data = resource.to_dict()
        assert wire(types.Resource.model_validate(data)) == data, resource.uri


async def test_catalog_resources_are_listed_as_the_catalog_writes_them(
    client: Client, loaded: Catalog
) -> None:
    listed = (await client.list_resources()).resources
    ours = [wire(r) for r in listed if r.uri.startswith("skill://")]
    assert ours == [r.to_dict() for r in loaded.resources()]


async def test_directory_children_are_the_same_dicts_as_the_listing(
    client: Client, loaded: Catalog
) -> None:
    by_uri = {r.uri: r.to_dict() for r in loaded.resources()}
    for entry in loaded.skills:
        page = await custom_request(
            client, "resources/directory/read", {"uri": posixpath.dirname(entry.uri)}
        )
        files = [c for c in page["resources"] if c["mimeType"] != "inode/directory"]
        assert files and files == [by_uri[c["uri"]] for c in files]


async def test_a_read_has_the_mime_type_of_the_listing(client: Client, loaded: Catalog) -> None:
    for resource in loaded.resources():
        (contents,) = (await client.read_resource(resource.uri)).contents
        assert contents.mime_type == resource.mime_type
        assert isinstance(contents, types.TextResourceContents)
        raw = loaded.read(resource.uri)
        assert raw is not None and contents.text == raw.decode("utf-8")
