"""Build the MCP Bundles: one ``dist/kite-skills-<platform>.mcpb`` per platform zipapp, so that
Claude Desktop installs kite-skills by a double-click (build.sh runs this after the zipapps,
with the pinned ``@anthropic-ai/mcpb`` CLI it installs).

A bundle is a zip holding ``manifest.json`` and ``server/kite-skills-<platform>.pyz``, the
zipapp byte for byte. Claude Desktop starts it as the manifest's ``server.mcp_config`` says:
the person's Python (a setting) runs the zipapp, with ``KITE_SKILLS_DB`` naming ``skills.db``
in the store folder (a setting, by default the folder the server uses without one). The
manifest lists the tools this machine's zipapp serves (Claude Desktop shows them before
installing). It is checked with ``mcpb validate`` and packed with ``mcpb pack``; the pack's
zip times (the time of packing) are then set to 1980-01-01, so the same commit gives the
same bytes.

    python tools/mcpb.py MCPB_CLI DIST [PLATFORM...]
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))
from zipapps import PYTHONS, host_platform, write_sha256  # noqa: E402

from kite_skills import __version__  # noqa: E402
from kite_skills.launcher.preamble import PLATFORMS  # noqa: E402
from kite_skills.store import default_db_path  # noqa: E402

# The newest manifest version mcpb 2.1.2 validates (build.sh pins the CLI).
MANIFEST_VERSION = "0.4"
STORE_SETTING = "store_folder"
PYTHON_SETTING = "python"
# The Python a bundle starts by default, per OS. Claude Desktop on macOS starts servers with
# the system PATH, where python3 is Apple's 3.9 (or a stub offering the developer tools):
# python.org's installer (either CPU) and Homebrew on Intel put their python3 in /usr/local/bin.
# Windows' installers and the Store name the command python.exe.
PYTHON_COMMAND = {"linux": "python3", "darwin": "/usr/local/bin/python3", "win32": "python"}
# 1980-01-01 00:00:00 as a zip entry's (time, date): the earliest zip time, as shiv stamps.
ZIP_EPOCH = (0).to_bytes(2, "little") + ((1 << 5) | 1).to_bytes(2, "little")


def zipapp_name(target: str) -> str:
    return f"kite-skills-{target}.pyz"


def bundle_name(target: str) -> str:
    return f"kite-skills-{target}.mcpb"


def store_default(os_name: str) -> PurePosixPath:
    """The store file the server uses on ``os_name`` when nothing names one, written from
    ``~`` (the server expands a leading ``~/`` in ``KITE_SKILLS_DB``; Claude Desktop does not
    expand ``${HOME}`` in a setting's default)."""
    found = default_db_path({"HOME": "~", "USERPROFILE": "~"}, os_name)
    return PurePosixPath(found.as_posix())


def python_range() -> str:
    """The CPython versions every zipapp accepts, as a PEP 440 specifier."""
    major, last = PYTHONS[-1].split(".")
    return f">={PYTHONS[0]},<{major}.{int(last) + 1}"


def served_tools(pyz: Path) -> list[dict[str, str]]:
    """The tools ``pyz`` lists to a client (name and description), asked over stdio as a
    client without the Skills extension asks: what Claude Desktop shows before installing."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "tools/mcpb.py", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    with tempfile.TemporaryDirectory() as scratch:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "SHIV_ROOT": scratch,
            "KITE_SKILLS_DB": os.path.join(scratch, "skills.db"),
        }
        done = subprocess.run(
            [sys.executable, str(pyz)],
            input="".join(json.dumps(m) + "\n" for m in messages),
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    listed = next((r for r in replies if r.get("id") == 2 and "result" in r), None)
    if listed is None:
        sys.exit(f"mcpb.py: {pyz} listed no tools (exit {done.returncode}):\n{done.stderr}")
    return [{"name": t["name"], "description": t["description"]} for t in listed["result"]["tools"]]


def manifest(target: str, tools: list[dict[str, str]]) -> dict[str, Any]:
    """The bundle's manifest.json for ``target`` (a name in PLATFORMS), listing ``tools``."""
    os_name = PLATFORMS[target][0]
    store = store_default(os_name)
    entry = f"server/{zipapp_name(target)}"
    return {
        "manifest_version": MANIFEST_VERSION,
        "name": "kite-skills",
        "display_name": "kite-skills",
        "version": __version__,
        "description": "Trusted procedures for AI agents on a Zerodha Kite account: a "
        "built-in catalog of recipes and your own skills, which only you publish.",
        "long_description": "Works alongside the Kite MCP server (it does not replace it). "
        "Agents read the built-in recipes (orders, holdings, derivatives, market data, "
        "alerts, daily review) and your own skills, and may draft new skills; only you "
        "publish them, on the dashboard or with `kite-skills skills publish`. No recipe "
        "is approval for a transaction.\n\nNeeds CPython "
        f"{PYTHONS[0]}–{PYTHONS[-1]} on this computer; set **Python** to its full path "
        "when Claude Desktop does not find it.",
        "author": {"name": "the kite-skills authors"},
        "license": "MIT",
        "keywords": ["kite", "zerodha", "trading", "skills", "procedures"],
        "server": {
            "type": "python",
            "entry_point": entry,
            "mcp_config": {
                "command": f"${{user_config.{PYTHON_SETTING}}}",
                "args": [f"${{__dirname}}/{entry}"],
                "env": {"KITE_SKILLS_DB": f"${{user_config.{STORE_SETTING}}}/{store.name}"},
            },
        },
        "tools": tools,
        "prompts_generated": True,
        "compatibility": {
            "platforms": [os_name],
            "runtimes": {"python": python_range()},
        },
        "user_config": {
            STORE_SETTING: {
                "type": "directory",
                "title": "Skill store folder",
                "description": f"The folder holding {store.name}, the file with your own "
                "skills and their history. Leave it to share the store with the "
                "kite-skills command line and dashboard; choose another folder to keep it "
                "elsewhere (it is created on first use).",
                "default": str(store.parent),
                "required": False,
            },
            PYTHON_SETTING: {
                "type": "string",
                "title": "Python",
                "description": f"The CPython {PYTHONS[0]}–{PYTHONS[-1]} that runs kite-skills: "
                f"a command on Claude Desktop's PATH or a full path (for example "
                f"{_example_python(os_name)}).",
                "default": PYTHON_COMMAND[os_name],
                "required": False,
            },
        },
    }


def _example_python(os_name: str) -> str:
    if os_name == "darwin":
        return "/opt/homebrew/bin/python3 for Homebrew on Apple silicon"
    if os_name == "win32":
        return "C:\\Users\\you\\AppData\\Local\\Programs\\Python\\Python313\\python.exe"
    return "/usr/bin/python3.13"


def fix_times(bundle: Path) -> None:
    """Stamp every entry of ``bundle`` (local and central headers) with ZIP_EPOCH in place:
    ``mcpb pack`` writes the time of packing, and no other byte depends on it."""
    data = bytearray(bundle.read_bytes())
    end = data.rindex(b"PK\x05\x06")
    count = int.from_bytes(data[end + 10 : end + 12], "little")
    central = int.from_bytes(data[end + 16 : end + 20], "little")
    for _ in range(count):
        if data[central : central + 4] != b"PK\x01\x02":
            sys.exit(f"mcpb.py: {bundle}: unexpected central directory at byte {central}")
        data[central + 12 : central + 16] = ZIP_EPOCH
        local = int.from_bytes(data[central + 42 : central + 46], "little")
        if data[local : local + 4] != b"PK\x03\x04":
            sys.exit(f"mcpb.py: {bundle}: no local header at byte {local}")
        data[local + 10 : local + 14] = ZIP_EPOCH
        lengths = [
            int.from_bytes(data[central + i : central + i + 2], "little") for i in (28, 30, 32)
        ]
        central += 46 + sum(lengths)
    bundle.write_bytes(bytes(data))


def check(bundle: Path, pyz: Path, target: str, written: dict[str, Any]) -> None:
    """The packed bundle holds exactly the manifest and the zipapp, unchanged."""
    with zipfile.ZipFile(bundle) as archive:
        names = sorted(archive.namelist())
        wanted = sorted(["manifest.json", f"server/{zipapp_name(target)}"])
        if names != wanted:
            sys.exit(f"mcpb.py: {bundle} holds {names}, not {wanted}")
        if archive.read(wanted[1]) != pyz.read_bytes():
            sys.exit(f"mcpb.py: {bundle}: the packed zipapp differs from {pyz}")
        if json.loads(archive.read("manifest.json")) != written:
            sys.exit(f"mcpb.py: {bundle}: the packed manifest differs from the one written")


def run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"mcpb.py: {what} failed (exit {done.returncode}):\n{done.stdout}{done.stderr}")


def build(mcpb: Path, dist: Path, target: str, tools: list[dict[str, str]]) -> Path:
    pyz = dist / zipapp_name(target)
    if not pyz.is_file():
        sys.exit(f"mcpb.py: {pyz} is missing — build it first (./build.sh --all)")
    stage = ROOT / ".build" / "bundles" / target
    shutil.rmtree(stage, ignore_errors=True)
    (stage / "server").mkdir(parents=True)
    # mcpb pack keeps each file's permission bits: set them, whatever the umask.
    shutil.copyfile(pyz, stage / "server" / pyz.name)
    (stage / "server" / pyz.name).chmod(0o755)
    written = manifest(target, tools)
    text = json.dumps(written, indent=2, ensure_ascii=False) + "\n"
    (stage / "manifest.json").write_text(text, encoding="utf-8")
    (stage / "manifest.json").chmod(0o644)
    run([str(mcpb), "validate", str(stage / "manifest.json")], f"mcpb validate ({target})")
    packed = stage.parent / bundle_name(target)
    packed.unlink(missing_ok=True)
    run([str(mcpb), "pack", str(stage), str(packed)], f"mcpb pack ({target})")
    fix_times(packed)
    check(packed, pyz, target, written)
    # Into dist/ last, so that a download never sees half a file.
    out = dist / packed.name
    os.replace(packed, out)
    write_sha256(out)
    shutil.rmtree(stage)
    return out


def main(argv: list[str]) -> None:
    if len(argv) < 2:
        sys.exit(__doc__)
    mcpb, dist = Path(argv[0]), Path(argv[1])
    if not mcpb.is_file():
        sys.exit(f"mcpb.py: no mcpb CLI at {mcpb} — build.sh installs it (npm)")
    targets = argv[2:] or [name for name in PLATFORMS if (dist / zipapp_name(name)).is_file()]
    unknown = [t for t in targets if t not in PLATFORMS]
    if unknown:
        sys.exit(f"mcpb.py: unknown platform {unknown[0]} (known: {', '.join(PLATFORMS)})")
    # Every platform's file serves the same tools: this machine's says which.
    tools = served_tools(dist / zipapp_name(host_platform()))
    # The bundles side by side (each in its own stage folder): mcpb's node start and its
    # deflating of the zipapp, a few seconds each, overlap.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(len(targets), 1)) as pool:
        outs = list(pool.map(lambda target: build(mcpb, dist, target, tools), targets))
    for out in outs:
        print(f"{out} ({out.stat().st_size} bytes)")  # noqa: T201


if __name__ == "__main__":
    main(sys.argv[1:])
