"""Both eras answer over the stdio wire, in process and from the built zipapp (quick check
that the harness works both ways)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import RawPeer, Target, custom_request, sdk_client

pytestmark = pytest.mark.anyio
WHERE = ["in-process", pytest.param("zipapp", marks=pytest.mark.zipapp)]


@pytest.fixture(params=WHERE)
def where(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_sdk_client_lists_skills(
    target: Target, where: str, shiv_root: Path, db: Path, mode: str
) -> None:
    async with sdk_client(target, shiv_root, db, mode=mode) as client:  # type: ignore[arg-type]
        result = await custom_request(client, "skills/list", {})
        assert {s["uri"] for s in result["skills"]} >= {"skill://orders/SKILL.md"}
        assert result["ttlMs"] == 300000


def test_raw_peer_legacy(raw: RawPeer, where: str) -> None:
    reply = raw.initialize({})
    assert reply["result"]["capabilities"]["extensions"] == {
        "io.modelcontextprotocol/skills": {"directoryRead": True}
    }
    code, err = raw.close()
    assert code == 0, err
