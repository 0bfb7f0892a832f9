"""Interop with a real client: the official MCP Inspector CLI (npm
`@modelcontextprotocol/inspector@2.12.0`) against the built zipapp, in both protocol eras.

build.sh installs it and passes its path in KITE_SKILLS_INSPECTOR. A missing Inspector
fails the run with a clear message; it never skips.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kite_skills import catalog

from .harness import ROOT, TOOLS

pytestmark = pytest.mark.zipapp

ERAS = ["legacy", "modern"]
INSTALL = (
    "cd {root} && npm install --prefix .build/inspector --no-audit --no-fund "
    "@modelcontextprotocol/inspector@2.12.0 (./build.sh test does this)"
)
CALLS: dict[str, list[str]] = {
    "verify": ["--method", "skills/list", "--verify"],
    "get": ["--method", "skills/get", "--uri", "skill://orders/SKILL.md", "--format", "json"],
    "read": ["--method", "resources/read", "--uri", "skill://orders/reconcile.md"],
    "tools": ["--method", "tools/list"],
    "dir": ["--method", "resources/directory/read", "--uri", "skill://daily-review"],
    "dir-file": ["--method", "resources/directory/read", "--uri", "skill://daily-review/SKILL.md"],
    "prompts": ["--method", "prompts/list"],
    "prompt": [
        "--method",
        "prompts/get",
        "--prompt-name",
        "orders-prepare",
        "--prompt-args",
        "request=Buy 10 INFY",
    ],
}


@dataclass(frozen=True)
class Run:
    command: list[str]
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    def explain(self) -> str:
        return f"{' '.join(self.command)}\nexit {self.code}\n{self.stdout[-3000:]}\n{self.stderr}"


def inspector() -> Path:
    default = ROOT / ".build" / "inspector" / "node_modules" / ".bin" / "inspector"
    path = Path(os.environ.get("KITE_SKILLS_INSPECTOR") or default)
    if not path.is_file():
        pytest.fail(
            f"MCP Inspector not found at {path} — install it: {INSTALL.format(root=ROOT)}",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="module")
def runs(pyz: Path, shiv_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """Every Inspector call, both eras, run side by side (each starts its own server)."""
    binary = inspector()
    python = sys.executable  # not a version manager's shim: pyenv's adds ~0.5 s to each start
    work = tmp_path_factory.mktemp("inspector")

    def run(key: str) -> tuple[str, Run]:
        era, call = key.split(":")
        command = [
            str(binary),
            "--cli",
            "--protocol-era",
            era,
            "--connect-timeout",
            "60000",
            python,
            str(pyz),
            "-e",
            f"SHIV_ROOT={shiv_root}",
            "-e",
            f"KITE_SKILLS_DB={work / (era + '-' + call + '.db')}",
            *CALLS[call],
        ]
        done = subprocess.run(command, capture_output=True, text=True, cwd=work, timeout=120)
        return key, Run(command, done.returncode, done.stdout, done.stderr)

    keys = [f"{era}:{call}" for era in ERAS for call in CALLS]
    # The first alone: its server unpacks the zipapp and writes the bytecode of what serving
    # imports, so that the starts side by side after it are all warm (none compiles again).
    first = run(keys[0])
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict([first, *pool.map(run, keys[1:])])


@pytest.mark.parametrize("era", ERAS)
def test_verify_every_skill(runs: dict[str, Run], era: str) -> None:
    run = runs[f"{era}:verify"]
    assert run.code == 0, run.explain()
    loaded = catalog.load()
    skills = len(loaded.skills)
    files = sum(len(s.resources) for s in loaded.skills)
    match = re.search(r"Verified (\d+) skills and (\d+) files: no conformance errors", run.stderr)
    if match is None:
        match = re.search(
            r"Verified (\d+) skills and (\d+) files: no conformance errors", run.stdout
        )
    assert match is not None, run.explain()
    print(f"\nInspector ({era}): {match.group(0)}")
    assert (int(match.group(1)), int(match.group(2))) == (skills, files)
    reports = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert sorted(r["uri"] for r in reports) == [s.uri for s in loaded.skills]
    assert all(r["ok"] and r["outcome"] == "verified" for r in reports), run.explain()


@pytest.mark.parametrize("era", ERAS)
def test_skills_get(runs: dict[str, Run], era: str) -> None:
    run = runs[f"{era}:get"]
    assert run.code == 0, run.explain()
    result = run.json()["result"]
    entry = catalog.load().skill("skill://orders/SKILL.md")
    assert entry is not None
    assert result["skill"] == json.loads(json.dumps(entry.to_dict()))
    assert (result["ttlMs"], result["cacheScope"]) == (300000, "public")


@pytest.mark.parametrize("era", ERAS)
def test_resources_read(runs: dict[str, Run], era: str) -> None:
    run = runs[f"{era}:read"]
    assert run.code == 0, run.explain()
    (content,) = run.json()["contents"]
    assert content["uri"] == "skill://orders/reconcile.md"
    assert content["mimeType"] == "text/markdown"
    raw = (ROOT / "skills_catalog" / "orders" / "reconcile.md").read_bytes()
    assert content["text"].encode("utf-8") == raw


@pytest.mark.parametrize("era", ERAS)
def test_tools_list(runs: dict[str, Run], era: str) -> None:
    run = runs[f"{era}:tools"]
    assert run.code == 0, run.explain()
    names = {t["name"] for t in run.json()["tools"]}
    # the Inspector always advertises the Skills extension, so it sees Skills, not help; calc
    # is listed for every client
    assert names == TOOLS - {"help"}
    print(f"\nInspector ({era}) tools/list: {sorted(names)}")


@pytest.mark.parametrize("era", ERAS)
def test_directory_read(runs: dict[str, Run], era: str) -> None:
    run = runs[f"{era}:dir"]
    assert run.code == 0, run.explain()
    result = run.json()
    expected = catalog.load().directory("skill://daily-review").to_dict()
    assert result["resources"] == expected["resources"]
    assert "nextCursor" not in result
    assert (result["ttlMs"], result["cacheScope"]) == (300000, "public")
    kinds = [r["mimeType"] for r in result["resources"]]
    assert "inode/directory" in kinds and "text/markdown" in kinds
    print(
        f"\nInspector ({era}) resources/directory/read skill://daily-review: {len(kinds)} children"
    )


@pytest.mark.parametrize("era", ERAS)
def test_directory_read_of_a_file_is_refused(runs: dict[str, Run], era: str) -> None:
    run = runs[f"{era}:dir-file"]
    assert run.code != 0, run.explain()
    assert "is a file, not a directory" in run.stdout + run.stderr, run.explain()


@pytest.mark.parametrize("era", ERAS)
def test_prompts_list(runs: dict[str, Run], era: str) -> None:
    run = runs[f"{era}:prompts"]
    assert run.code == 0, run.explain()
    prompts = {p["name"]: p for p in run.json()["prompts"]}
    assert sorted(prompts) == [p.name for p in catalog.recipe_prompts(catalog.load())]
    assert prompts["orders-prepare"]["title"] == "Prepare an order"
    assert prompts["orders-prepare"]["arguments"] == [
        {
            "name": "request",
            "description": "What you want done, in your own words (optional).",
            "required": False,
        }
    ]


@pytest.mark.parametrize("era", ERAS)
def test_prompts_get(runs: dict[str, Run], era: str) -> None:
    run = runs[f"{era}:prompt"]
    assert run.code == 0, run.explain()
    first, second = run.json()["messages"]
    resource = first["content"]["resource"]
    assert (first["role"], resource["uri"], resource["mimeType"]) == (
        "user",
        "skill://orders/prepare.md",
        "text/markdown",
    )
    raw = (ROOT / "skills_catalog" / "orders" / "prepare.md").read_bytes()
    assert resource["text"].encode("utf-8") == raw
    assert second == {"role": "user", "content": {"type": "text", "text": "Buy 10 INFY"}}


def test_a_missing_inspector_fails_clearly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KITE_SKILLS_INSPECTOR", str(tmp_path / "nowhere" / "inspector"))
    with pytest.raises(pytest.fail.Exception, match=r"MCP Inspector not found .* npm install"):
        inspector()
