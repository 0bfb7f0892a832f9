"""`./build.sh bench --tiny` runs the whole benchmark suite at small sizes. This checks that it
keeps working and the shape of what it writes — never how fast anything is."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.zipapp  # ./build.sh bench runs the built zipapp

ROOT = Path(__file__).resolve().parents[1]
SECTIONS = {
    "1. time to first response",
    "2. request cost",
    "3. catalog scale",
    "4. store scale",
    "5. memory",
    "6. artefacts",
    "7. sandbox",
    "8. guard",
}


def test_tiny_bench_writes_the_table_the_json_and_the_plot(tmp_path: Path) -> None:
    pyz = os.environ.get("KITE_SKILLS_PYZ", str(ROOT / "dist" / "kite-skills.pyz"))
    assert Path(pyz).is_file(), "run ./build.sh first"
    run = subprocess.run(
        [str(ROOT / "build.sh"), "bench", "--tiny", "--out", str(tmp_path), "--pyz", pyz],
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert lines[0].startswith("kite-skills benchmark, ") and "(tiny mode)" in lines[0]
    table = [line for line in lines if line.startswith("| ")]
    assert table[0] == "| section | measure | result | target | status |"
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table[1:]]
    assert {row[0] for row in rows} == SECTIONS
    assert all(row[4].strip("*") in {"PASS", "MISS", "INFO"} for row in rows)
    assert all(row[4] == "INFO" or row[3].startswith(("≤", "p50 ≤", "p99 ≤")) for row in rows)

    data = json.loads((tmp_path / "latest.json").read_text(encoding="utf-8"))
    assert data["machine"]["tiny"] is True
    assert data["machine"]["interpreters"]
    assert len(data["rows"]) == len(rows)
    measures = [r["measure"] for r in data["rows"]]
    assert measures == [row[1] for row in rows]  # the JSON's rows are the table's, in its order
    for expected in (
        "warm, vs the baseline server",
        "first run (fresh SHIV_ROOT), vs the baseline's first run",
        "evidence: our first run vs our warm",
        "warm with PYTHONDONTWRITEBYTECODE=1, vs our warm",
        "server/discover + tools/list",
        "help root vs the baseline's no-op tool call",
        "skills/list vs",
        "skillSave (new draft) vs",
        "calc greeks (4 legs) vs",
        "calc payoff (4 legs, 200-point grid) vs",
        "load + validate",
        "a word in nearly every skill",
        "CLI write → list_changed",
        "dashboard write → list_changed",
        "prompts/list vs",
        "peak RSS",
        "kite-skills.pyz size",
        "sandbox warm, initialize + tools/list, vs the baseline server",
        "sandbox tool call (portfolio profile) vs the baseline's no-op tool call",
        "guard forwarded read (portfolio profile) vs the same call direct to the sandbox",
        "guard judged write (orders place) vs the same call direct to the sandbox",
    ):
        assert any(expected in m for m in measures), expected
    for row in data["rows"]:
        if row["status"] in ("PASS", "MISS"):
            assert isinstance(row["value"], float | int) and row["value"] >= 0
    assert {"catalog", "search_p99_ms"} <= set(data["curves"])
    assert (tmp_path / "latest.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    written = (tmp_path / "latest.md").read_text(encoding="utf-8")
    assert written.startswith("# Benchmark results\n")
    assert lines[0] in written  # the same run's heading …
    assert all(line in written for line in table)  # … and every row of its table
