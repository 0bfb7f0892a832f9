"""Both eras answer over a real stdio subprocess (quick check that the harness works)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .harness import RawPeer, custom_request, sdk_client

pytestmark = [pytest.mark.anyio, pytest.mark.zipapp]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_sdk_client_lists_skills(pyz: Path, shiv_root: Path, db: Path, mode: str) -> None:
    async with sdk_client(pyz, shiv_root, db, mode=mode) as client:  # type: ignore[arg-type]
        result = await custom_request(client, "skills/list", {})
        assert {s["uri"] for s in result["skills"]} >= {"skill://orders/SKILL.md"}
        assert result["ttlMs"] == 300000


def test_raw_peer_legacy(raw: RawPeer) -> None:
    reply = raw.initialize({})
    assert reply["result"]["capabilities"]["extensions"] == {
        "io.modelcontextprotocol/skills": {"directoryRead": True}
    }
    code, err = raw.close()
    assert code == 0, err
