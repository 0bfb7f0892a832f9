"""Time to first response: spawn → initialize reply → tools/list reply, over real stdio.

    python bench/startup.py [--runs 9] [--pyz dist/kite-skills.pyz]

Compares, in the same run and with the same interpreter, the zipapp (warm: its shiv cache
already extracted), `python -m kite_skills` from the installed package, and the baseline:
a minimal mcp lowlevel server with one tool (bench/minimal_server.py). Also times the CLI
`help /` warm and on a first run (fresh SHIV_ROOT). Prints medians and ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def first_response(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert process.stdin and process.stdout
    process.stdin.write((json.dumps(INIT) + "\n").encode())
    process.stdin.flush()
    assert json.loads(process.stdout.readline())["id"] == 1
    process.stdin.write(
        (json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n").encode()
        + (json.dumps(LIST) + "\n").encode()
    )
    process.stdin.flush()
    assert "tools" in json.loads(process.stdout.readline())["result"]
    elapsed = time.perf_counter() - start
    process.stdin.close()
    process.wait(timeout=10)
    return elapsed


def command_time(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--pyz", default=str(HERE.parent / "dist" / "kite-skills.pyz"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kite-bench-"))
    env = {**os.environ, "SHIV_ROOT": str(work / "shiv"), "KITE_SKILLS_DB": str(work / "s.db")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # it would make every zipapp start recompile
    py = sys.executable
    subjects = {
        "baseline: minimal mcp server": [py, str(HERE / "minimal_server.py")],
        "kite-skills (python -m)": [py, "-m", "kite_skills"],
        "kite-skills.pyz (warm)": [py, args.pyz],
    }
    for command in subjects.values():  # warm every cache once
        first_response(command, env)
    rows = {name: [] for name in subjects}
    for _ in range(args.runs):  # interleaved, so machine noise hits all alike
        for name, command in subjects.items():
            rows[name].append(first_response(command, env))

    help_warm = [command_time([py, args.pyz, "help", "/"], env) for _ in range(args.runs)]
    help_cold = []
    for n in range(min(args.runs, 3)):
        cold_env = {**env, "SHIV_ROOT": str(work / f"cold-{n}")}
        help_cold.append(command_time([py, args.pyz, "help", "/"], cold_env))

    base = median_ms(rows["baseline: minimal mcp server"])
    print(f"{'initialize + tools/list':34} {'median ms':>10} {'ratio':>7}")
    for name, samples in rows.items():
        print(f"{name:34} {median_ms(samples):10.0f} {median_ms(samples) / base:7.2f}")
    print()
    print(f"{'kite-skills.pyz help /':34} {'median ms':>10} {'ratio':>7}")
    print(f"{'warm':34} {median_ms(help_warm):10.0f} {median_ms(help_warm) / base:7.2f}")
    print(
        f"{'first run (fresh SHIV_ROOT)':34} {median_ms(help_cold):10.0f} "
        f"{median_ms(help_cold) / base:7.2f}"
    )
    print(f"\n{args.runs} runs each; ratios against the baseline server's median.")


if __name__ == "__main__":
    main()
