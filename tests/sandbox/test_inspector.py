"""Interop with a real client: the official MCP Inspector CLI (npm
`@modelcontextprotocol/inspector@2.12.0`, as tests/server/test_inspector.py uses it) against
`kite-skills.pyz sandbox`, in both protocol eras: the calls a newcomer makes first.

build.sh installs the Inspector and passes its path in KITE_SKILLS_INSPECTOR. A missing
Inspector fails the run with a clear message; it never skips.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from ..server.harness import ROOT, zipapp

pytestmark = pytest.mark.zipapp

ERAS = ["legacy", "modern"]
PLACE = [
    "mode=place", "exchange=NSE", "tradingsymbol=INFY", "transaction_type=BUY", "quantity=1",
    "product=CNC", "order_type=LIMIT", "price=1500.03",
]  # fmt: skip
CALLS: dict[str, list[str]] = {
    "tools": ["--method", "tools/list"],
    "holdings": ["--method", "tools/call", "--tool-name", "portfolio",
                 "--tool-arg", "mode=holdings"],
    "place": ["--method", "tools/call", "--tool-name", "orders"]
    + [part for arg in PLACE for part in ("--tool-arg", arg)],
    "search": ["--method", "tools/call", "--tool-name", "market", "--tool-arg", "mode=search",
               "--tool-arg", "query=INFY"],
    "bad-mode": ["--method", "tools/call", "--tool-name", "portfolio", "--tool-arg", "mode=cash"],
}  # fmt: skip


def inspector() -> Path:
    default = ROOT / ".build" / "inspector" / "node_modules" / ".bin" / "inspector"
    path = Path(os.environ.get("KITE_SKILLS_INSPECTOR") or default)
    if not path.is_file():
        pytest.fail(
            f"MCP Inspector not found at {path} — install it: cd {ROOT} && npm install --prefix "
            ".build/inspector @modelcontextprotocol/inspector@2.12.0 (./build.sh test does this)",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, Any, str]]:
    """(exit code, the Inspector's JSON, stderr) per era:call; one sandbox each."""
    pyz = zipapp()
    binary = inspector()
    python = sys.executable  # not a version manager's shim: pyenv's adds ~0.5 s to each start
    work = tmp_path_factory.mktemp("inspector-sandbox")
    shiv = work / "shiv"

    def run(key: str) -> tuple[str, tuple[int, Any, str]]:
        era, call = key.split(":")
        command = [
            str(binary), "--cli", "--protocol-era", era, "--connect-timeout", "60000",
            python, str(pyz), "sandbox", "--journal", str(work / f"{era}-{call}.jsonl"),
            "-e", f"SHIV_ROOT={shiv}", "-e", f"HOME={work}", *CALLS[call],
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, cwd=work, timeout=120)
        try:
            value = json.loads(done.stdout)
        except ValueError:
            value = None
        return key, (done.returncode, value, f"{' '.join(command)}\n{done.stdout}{done.stderr}")

    keys = [f"{era}:{call}" for era in ERAS for call in CALLS]
    # The first alone: its sandbox unpacks the zipapp and writes the bytecode of what it
    # imports, so that the starts side by side after it are all warm (none compiles again).
    first = run(keys[0])
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict([first, *pool.map(run, keys[1:])])


def text(result: Any) -> str:
    (content,) = result["content"]
    assert content["type"] == "text"
    return str(content["text"])


@pytest.mark.parametrize("era", ERAS)
def test_the_seven_grouped_tools(runs: dict[str, tuple[int, Any, str]], era: str) -> None:
    code, result, explain = runs[f"{era}:tools"]
    assert code == 0, explain
    assert sorted(t["name"] for t in result["tools"]) == [
        "alerts", "gtt", "market", "mutual_funds", "orders", "portfolio", "session",
    ]  # fmt: skip


@pytest.mark.parametrize("era", ERAS)
def test_holdings_of_the_default_account(runs: dict[str, tuple[int, Any, str]], era: str) -> None:
    code, result, explain = runs[f"{era}:holdings"]
    assert code == 0 and result["isError"] is False, explain
    rows = json.loads(text(result))
    infy = next(r for r in rows if r["tradingsymbol"] == "INFY")
    assert (infy["quantity"], infy["t1_quantity"], infy["realised_quantity"]) == (120, 20, 100)
    assert "SIMULATION" in explain  # the sandbox's one stderr line reaches the person


@pytest.mark.parametrize("era", ERAS)
def test_an_off_tick_price_is_accepted_then_rejected_by_the_exchange(
    runs: dict[str, tuple[int, Any, str]], era: str
) -> None:
    """As on the real server: the place call answers an order id; the exchange's rejection
    is in the order book, and in the journal."""
    code, result, explain = runs[f"{era}:place"]
    assert code == 0 and result["isError"] is False, explain
    assert set(json.loads(text(result))) == {"order_id"}


@pytest.mark.parametrize("era", ERAS)
def test_search_answers_compact_rows(runs: dict[str, tuple[int, Any, str]], era: str) -> None:
    code, result, explain = runs[f"{era}:search"]
    assert code == 0 and result["isError"] is False, explain
    found = json.loads(text(result))
    assert set(found) == {"data", "meta"}
    row = next(r for r in found["data"] if r["id"] == "NSE:INFY")
    assert not {"expiry_date", "strike", "tick_size"} & set(row)


@pytest.mark.parametrize("era", ERAS)
def test_an_unknown_mode_gets_the_real_servers_text(
    runs: dict[str, tuple[int, Any, str]], era: str
) -> None:
    _, result, explain = runs[f"{era}:bad-mode"]
    assert result is not None and result["isError"] is True, explain
    assert text(result).startswith("Invalid mode. Must be one of: "), text(result)
    assert "Traceback" not in explain
