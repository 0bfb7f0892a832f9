"""What the end-to-end tests share: the built zipapp, the SDK client over a real stdio
subprocess, and a raw JSON-lines peer for what the SDK client cannot send."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any, Literal

import pytest
from mcp import Client, StdioServerParameters, types
from mcp.client import advertise
from pydantic import ConfigDict, TypeAdapter

ROOT = Path(__file__).resolve().parents[2]
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"


def zipapp() -> Path:
    """The built zipapp; build.sh passes its path. A missing one fails, never skips, and so
    does one built from other sources than this tree (see :func:`stale_sources`)."""
    path = Path(os.environ.get("KITE_SKILLS_PYZ", ROOT / "dist" / "kite-skills.pyz"))
    if not path.is_file():
        pytest.fail(f"{path} is missing — run ./build.sh first (./build.sh test does)")
    stale = stale_sources(path)
    if stale:
        shown = "; ".join(stale[:5]) + (f"; and {len(stale) - 5} more" if len(stale) > 5 else "")
        pytest.fail(
            f"{path} was not built from the sources in this tree ({shown}) — run ./build.sh "
            "to rebuild it; the zipapp tests would otherwise test old code"
        )
    return path


PACKAGED = ("kite_skills", "skills_catalog")
_ZIP_ROOT = "site-packages/"
# Made by the build inside the packed tree, never in the sources (tools/zipapps.py).
BUILT_HERE = {"skills_catalog/markdown-facts.json"}


@functools.cache
def stale_sources(pyz: Path) -> list[str]:
    """How the package files inside ``pyz`` differ from ``kite_skills/`` and
    ``skills_catalog/`` in this tree, byte for byte (``[]`` when it was built from them).

    Compares content, not times, so a fresh clone (where every file is new) and a touched but
    unchanged file both pass, and an edit without a rebuild always fails."""
    problems: list[str] = []
    with zipfile.ZipFile(pyz) as archive:
        inside = {
            name.removeprefix(_ZIP_ROOT): name
            for name in archive.namelist()
            if name.startswith(tuple(f"{_ZIP_ROOT}{top}/" for top in PACKAGED))
            and not name.endswith("/")
            and "__pycache__" not in name
            and name.removeprefix(_ZIP_ROOT) not in BUILT_HERE
        }
        if not inside:
            return [f"it holds no {' or '.join(PACKAGED)} package"]
        kinds = {Path(rel).suffix for rel in inside} | {".py"}
        for top in PACKAGED:
            for file in sorted((ROOT / top).rglob("*")):
                if not file.is_file() or "__pycache__" in file.parts:
                    continue
                rel = file.relative_to(ROOT).as_posix()
                if rel in inside:
                    if archive.read(inside[rel]) != file.read_bytes():
                        problems.append(f"{rel} changed")
                elif file.suffix in kinds:
                    problems.append(f"{rel} is new")
        problems += [f"{rel} was removed" for rel in sorted(inside) if not (ROOT / rel).is_file()]
    return problems


def server_command(pyz: Path) -> list[str]:
    return [sys.executable, str(pyz)]


def server_env(shiv_root: Path, db: Path, **extra: str) -> dict[str, str]:
    return {
        "SHIV_ROOT": str(shiv_root),
        "KITE_SKILLS_DB": str(db),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        **extra,
    }


def sdk_client(
    pyz: Path,
    shiv_root: Path,
    db: Path,
    *,
    mode: Literal["legacy", "auto"],
    skills: bool = False,
    env: dict[str, str] | None = None,
    **kwargs: Any,
) -> Client:
    """The SDK's own client over a real stdio subprocess running the zipapp."""
    params = StdioServerParameters(
        command=sys.executable, args=[str(pyz)], env=server_env(shiv_root, db, **(env or {}))
    )
    extensions = [advertise(SKILLS_EXTENSION)] if skills else []
    return Client(params, mode=mode, extensions=extensions, **kwargs)


class _CustomParams(types.RequestParams):
    model_config = ConfigDict(extra="allow")


async def custom_request(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Send a non-spec request (skills/list, skills/get) through the SDK client."""

    class CustomRequest(types.Request[_CustomParams | None, str]):
        pass

    request = CustomRequest(method=method, params=_CustomParams(**params))
    return await client.session.send_request(request, TypeAdapter(dict[str, Any]))


class RawPeer:
    """A JSON-lines peer on the zipapp's stdin/stdout. Keeps stdin open until told."""

    def __init__(self, pyz: Path, shiv_root: Path, db: Path, **env: str) -> None:
        self.process = subprocess.Popen(
            server_command(pyz),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=server_env(shiv_root, db, **env),
        )
        self._next_id = 0
        self.seen: list[dict[str, Any]] = []  # notifications met while waiting for replies

    def send_line(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_line(json.dumps(message).encode())

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise AssertionError("the server closed stdout (see its stderr)")
        return json.loads(line)

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and return its response (notifications met on the way are kept)."""
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            reply = self.receive()
            if reply.get("id") == self._next_id:
                return reply
            self.seen.append(reply)

    def initialize(self, capabilities: dict[str, Any]) -> dict[str, Any]:
        reply = self.request(
            "initialize",
            {
                "protocolVersion": LEGACY,
                "capabilities": capabilities,
                "clientInfo": {"name": "raw-peer", "version": "1.0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def modern(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        capabilities: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A 2026-07-28 request carrying its own envelope in ``_meta``."""
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": capabilities or {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw-peer", "version": "1.0"},
        }
        return self.request(method, {**(params or {}), "_meta": meta})

    def close(self, timeout: float = 10) -> tuple[int, str]:
        """Close stdin and return (exit code, stderr)."""
        assert self.process.stdin is not None and self.process.stderr is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=timeout)
        return code, self.process.stderr.read().decode(errors="replace")
