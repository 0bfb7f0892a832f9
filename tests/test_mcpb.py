"""The MCP Bundles (``dist/kite-skills-<platform>.mcpb``) as Claude Desktop meets them: one per
platform zipapp, accepted by the official ``mcpb validate``, holding the manifest and the
zipapp byte for byte; and this machine's bundle, unpacked, started exactly as its manifest
says (placeholders substituted the way Claude Desktop substitutes them) and driven by the
SDK's client in both protocol eras, with its store where the setting puts it.

``./build.sh --all`` (and ``./build.sh test``) makes the bundles with the pinned mcpb CLI and
passes its path in KITE_SKILLS_MCPB. A missing CLI or bundle fails; nothing skips."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters, types
from packaging.specifiers import SpecifierSet

from kite_skills import __version__
from kite_skills.launcher.preamble import PLATFORMS, platform_for
from kite_skills.store import DRAFT, LIVE, Store, agent, default_db_path, human

from .server.harness import LEGACY, MODERN, ROOT, zipapp
from .zipapp_platforms import PYTHONS, platform_file

pytestmark = pytest.mark.zipapp

HOST = platform_for(sys.platform, platform.machine())
INSTALL = (
    "npm install --prefix {root}/.build/mcpb @anthropic-ai/mcpb@VERSION "
    "(./build.sh --all does it), or set KITE_SKILLS_MCPB"
)
NAME = "compare-funds"


def mcpb() -> Path:
    default = ROOT / ".build" / "mcpb" / "node_modules" / ".bin" / "mcpb"
    path = Path(os.environ.get("KITE_SKILLS_MCPB") or default)
    if not path.is_file():
        pytest.fail(f"mcpb CLI not found at {path} — install it: {INSTALL.format(root=ROOT)}")
    return path


def pinned_mcpb_version() -> str:
    found = re.search(r"(?m)^MCPB_VERSION=(\S+)$", (ROOT / "build.sh").read_text())
    assert found, "build.sh pins no MCPB_VERSION"
    return found.group(1)


def bundle_file(name: str) -> Path:
    path = zipapp().parent / f"kite-skills-{name}.mcpb"
    if not path.is_file():
        pytest.fail(f"{path} is missing — run ./build.sh --all (./build.sh test does)")
    return path


def unpack(bundle: Path, into: Path) -> dict[str, Any]:
    """Unzip ``bundle`` as Claude Desktop installs it; its manifest."""
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(into)
    return json.loads((into / "manifest.json").read_text(encoding="utf-8"))


# ---- Claude Desktop's substitution ---------------------------------------------------------
# As @anthropic-ai/mcpb's getMcpConfigForManifest (src/shared/config.ts) does it: the platform
# override, then ${__dirname}, ${/}, the system folders and ${user_config.KEY} (the person's
# value, else the manifest's default, as given: a default's ${HOME} is not expanded) in
# command, args and env; an args item that is exactly ${user_config.KEY} expands a list.


def substitute(value: Any, variables: dict[str, str | list[str]]) -> Any:
    if isinstance(value, str):
        for key, replacement in variables.items():
            if isinstance(replacement, str):
                value = value.replace("${" + key + "}", replacement)
        return value
    if isinstance(value, list):
        out: list[Any] = []
        for item in value:
            whole = (
                re.fullmatch(r"\$\{(user_config\.[^}]+)\}", item) if isinstance(item, str) else None
            )
            if whole and variables.get(whole.group(1)):
                found = variables[whole.group(1)]
                out += found if isinstance(found, list) else [found]
            elif whole:
                out.append(item)
            else:
                out.append(substitute(item, variables))
        return out
    if isinstance(value, dict):
        return {key: substitute(item, variables) for key, item in value.items()}
    return value


def mcp_config(
    manifest: dict[str, Any], installed: Path, home: Path, settings: dict[str, Any]
) -> dict[str, Any]:
    config = dict(manifest["server"]["mcp_config"])
    override = config.pop("platform_overrides", {}).get(sys.platform, {})
    for key in ("command", "args", "env"):
        if override.get(key):
            config[key] = override[key]
    variables: dict[str, str | list[str]] = {
        "__dirname": str(installed),
        "pathSeparator": os.sep,
        "/": os.sep,
        "HOME": str(home),
        "DESKTOP": str(home / "Desktop"),
        "DOCUMENTS": str(home / "Documents"),
        "DOWNLOADS": str(home / "Downloads"),
    }
    merged = {
        key: option["default"]
        for key, option in manifest.get("user_config", {}).items()
        if "default" in option
    }
    merged.update(settings)
    for key, value in merged.items():
        if isinstance(value, list):
            variables[f"user_config.{key}"] = [str(v) for v in value]
        elif isinstance(value, bool):
            variables[f"user_config.{key}"] = "true" if value else "false"
        else:
            variables[f"user_config.{key}"] = str(value)
    result: dict[str, Any] = substitute(config, variables)
    assert "${" not in json.dumps(result), f"a placeholder is left unsubstituted: {result}"
    return result


def app_path() -> str:
    """PATH as an app started from the desktop has it: no shell start-up files ran, so no
    version manager's shims (pyenv's need the real HOME, which these tests replace)."""
    return os.pathsep.join(
        d for d in os.environ.get("PATH", "").split(os.pathsep) if d and "shims" not in d
    )


def started(config: dict[str, Any], home: Path, shiv_root: Path) -> StdioServerParameters:
    """The process Claude Desktop starts: the command, args and env of ``config`` over the
    SDK's inherited environment, with an app's PATH, this test's home and a private shiv
    cache."""
    env = {
        "PATH": app_path(),
        "HOME": str(home),
        "USERPROFILE": str(home),
        "SHIV_ROOT": str(shiv_root),
    }
    env.update(config.get("env", {}))
    return StdioServerParameters(command=config["command"], args=config.get("args", []), env=env)


# ---- every platform ------------------------------------------------------------------------


def test_every_built_platform_has_a_bundle_and_its_checksum() -> None:
    for name in PLATFORMS:
        platform_file(name)  # ./build.sh --all builds every platform's zipapp
        bundle = bundle_file(name)
        recorded = (bundle.parent / f"{bundle.name}.sha256").read_text()
        assert recorded == f"{hashlib.sha256(bundle.read_bytes()).hexdigest()}  {bundle.name}\n"


@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_the_bundle_holds_the_manifest_and_the_very_zipapp(name: str, tmp_path: Path) -> None:
    manifest = unpack(bundle_file(name), tmp_path)
    pyz = platform_file(name)
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert files == ["manifest.json", f"server/{pyz.name}"]
    assert (tmp_path / "server" / pyz.name).read_bytes() == pyz.read_bytes()
    assert manifest["name"] == "kite-skills" and manifest["version"] == __version__
    server = manifest["server"]
    assert server["type"] == "python" and server["entry_point"] == f"server/{pyz.name}"
    assert server["mcp_config"]["args"] == [f"${{__dirname}}/server/{pyz.name}"]
    assert {"help", "skills", "skillSave"} <= {t["name"] for t in manifest["tools"]}
    assert manifest["compatibility"]["platforms"] == [PLATFORMS[name][0]]
    accepted = SpecifierSet(manifest["compatibility"]["runtimes"]["python"])
    assert [v for v in ["3.9", "3.10", *PYTHONS, "3.15"] if v in accepted] == PYTHONS


@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_mcpb_validate_accepts_the_packed_manifest(name: str, tmp_path: Path) -> None:
    unpack(bundle_file(name), tmp_path)
    done = subprocess.run(
        [str(mcpb()), "validate", str(tmp_path / "manifest.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Manifest schema validation passes!" in done.stdout


def test_the_mcpb_cli_is_the_pinned_one() -> None:
    done = subprocess.run([str(mcpb()), "--version"], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == pinned_mcpb_version()


@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_an_untouched_store_setting_is_the_servers_own_default(name: str, tmp_path: Path) -> None:
    """A person who changes no setting shares the store with the CLI and the dashboard."""
    manifest = unpack(bundle_file(name), tmp_path)
    os_name = PLATFORMS[name][0]
    home = "/home/pat" if os_name != "win32" else "C:\\Users\\pat"
    config = mcp_config(manifest, tmp_path, Path(home), {})
    given = {"HOME": home, "USERPROFILE": home}
    # The server reads KITE_SKILLS_DB exactly as kite_skills.store.default_db_path does.
    served = default_db_path({**given, **config["env"]}, os_name)
    assert served == default_db_path(given, os_name)


def test_packing_again_gives_the_same_bytes(tmp_path: Path) -> None:
    """The bundle of a commit is the same file on every build, whatever the clock, the time
    zone and the umask (tools/mcpb.py sets the zip times mcpb pack writes from the clock, and
    the modes it copies from the files)."""
    assert HOST is not None
    shutil.copy2(platform_file(HOST), tmp_path / platform_file(HOST).name)
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "mcpb.py"), str(mcpb()), str(tmp_path), HOST],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "TZ": "Asia/Kolkata"},
        umask=0o002,
    )
    assert done.returncode == 0, done.stderr
    again = tmp_path / f"kite-skills-{HOST}.mcpb"
    assert again.read_bytes() == bundle_file(HOST).read_bytes(), (
        f"packing {HOST} again gave other bytes than dist's bundle: the pack is not "
        "reproducible, or dist/ is older than tools/mcpb.py (run ./build.sh --all)"
    )


# ---- this machine's bundle, started as Claude Desktop starts it ----------------------------


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """This machine's bundle, unpacked into a folder with a space in its name."""
    assert HOST is not None, f"no bundle is built for {sys.platform} {platform.machine()}"
    folder = tmp_path_factory.mktemp("Claude Extensions") / "kite skills"
    return folder, unpack(bundle_file(HOST), folder)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def session(
    params: StdioServerParameters, mode: str, version: str, manifest: dict[str, Any]
) -> None:
    """List the tools (those the manifest shows before installing), read the catalog, find
    the published skill, save a draft."""
    async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
        assert client.protocol_version == version
        tools = [
            {"name": t.name, "description": t.description}
            for t in (await client.list_tools()).tools
        ]
        assert tools == manifest["tools"]
        names = {t["name"] for t in tools}
        assert {"help", "skills", "skillRead", "skillSave", "skillPublish"} <= names
        page = await client.call_tool("help", {"key": "/orders"})
        assert not page.is_error and page.structured_content is not None, text_of(page)
        assert page.structured_content["key"] == "/orders"
        listed = await client.call_tool("skills", {})
        assert not listed.is_error and listed.structured_content is not None, text_of(listed)
        assert [s["name"] for s in listed.structured_content["skills"]] == [NAME]
        saved = await client.call_tool(
            "skillSave",
            {"name": "bundle-note", "description": "A note", "body": "# Note\n\nSaved.\n"},
        )
        assert not saved.is_error, text_of(saved)


def publish_one(db: Path) -> None:
    """The person's side: a published skill in the store at ``db``."""
    with Store.open(db) as store:
        agent.save(store, NAME, "How I compare two funds", "# Compare\n\n1. Costs.\n", who="bot")
        human.publish(store, NAME, rev=store.get(NAME).revision, via="cli", who="pat")


@pytest.mark.anyio
@pytest.mark.parametrize(("mode", "version"), [("legacy", LEGACY), ("auto", MODERN)])
async def test_the_bundle_serves_both_eras_with_the_store_the_setting_names(
    installed: tuple[Path, dict[str, Any]], shiv_root: Path, tmp_path: Path, mode: str, version: str
) -> None:
    folder, manifest = installed
    store_folder = tmp_path / "My Skills"
    store_folder.mkdir()
    settings = {"store_folder": str(store_folder), "python": sys.executable}
    config = mcp_config(manifest, folder, tmp_path / "home", settings)
    assert config["command"] == sys.executable
    assert config["args"] == [str(folder / "server" / f"kite-skills-{HOST}.pyz")]
    db = store_folder / "skills.db"
    publish_one(db)
    await session(started(config, tmp_path / "home", shiv_root), mode, version, manifest)
    with Store.open(db) as store:
        assert store.get("bundle-note").status == DRAFT
        assert store.get(NAME).status == LIVE
    assert not (tmp_path / "home").exists()  # nothing written to the default store


@pytest.mark.anyio
async def test_with_every_setting_left_alone_it_starts_on_python_and_the_default_store(
    installed: tuple[Path, dict[str, Any]], shiv_root: Path, tmp_path: Path
) -> None:
    """The manifest's defaults as they are: the Python on PATH by its usual name, and the
    store the server uses without a setting, under the home folder."""
    folder, manifest = installed
    home = tmp_path / "home"
    config = mcp_config(manifest, folder, home, {})
    found = shutil.which(config["command"], path=app_path())
    assert found, f"{config['command']} is not on PATH ({app_path()})"
    db = default_db_path({"HOME": str(home), "USERPROFILE": str(home)})
    publish_one(db)
    await session(started(config, home, shiv_root), "legacy", LEGACY, manifest)
    with Store.open(db) as store:
        assert store.get("bundle-note").status == DRAFT
