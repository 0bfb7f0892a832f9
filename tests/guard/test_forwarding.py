"""Reads pass straight through the guard: the same answer as the sandbox gives directly, the
legacy generation's `login` forwarded as it is, and nothing journalled."""

from __future__ import annotations

from pathlib import Path

import pytest

from .guard_harness import text_of
from .in_process import guarded

pytestmark = pytest.mark.anyio
READS = [
    ("login", {}),
    ("get_profile", {}),
    ("get_positions", {}),
    ("get_orders", {}),
    ("get_ltp", {"instruments": ["NSE:INFY"]}),
    ("alerts", {"mode": "get"}),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_reads_are_the_upstreams_answers_and_are_not_judged(tmp_path: Path) -> None:
    async with guarded(tmp_path, generation="legacy") as g:
        for tool, arguments in READS:
            through = await g.call(tool, **arguments)
            direct = g.sandbox.call(tool, arguments)
            assert direct is not None
            assert (text_of(through), bool(through.is_error)) == (direct.text, direct.is_error)
    assert not (tmp_path / "guard.jsonl").read_text()
