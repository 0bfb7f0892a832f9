"""What the per-platform zipapp tests share: the CPythons on this machine, the built files,
each mode of the program run with Python's import log on, and what each platform's
binaries must look like."""

from __future__ import annotations

import functools
import glob
import http.cookiejar
import json
import os
import re
import signal
import subprocess
import threading
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from kite_skills.launcher import build_info
from kite_skills.launcher.preamble import PLATFORMS
from kite_skills.store.records import revision_id

from .server.harness import LEGACY, MODERN, zipapp

PYTHONS = ["3.11", "3.12", "3.13", "3.14"]


@dataclass(frozen=True)
class Interpreter:
    implementation: str
    version: str
    path: str


def _probe(path: str) -> Interpreter | None:
    # Syntax every Python reads, 2.7 included.
    code = (
        "import platform, sys; print('%s %d.%d' % (platform.python_implementation().lower(), "
        "sys.version_info[0], sys.version_info[1]))"
    )
    try:
        out = subprocess.run(
            [path, "-c", code], capture_output=True, text=True, timeout=20, check=True
        ).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    return Interpreter(out[0], out[1], path) if len(out) == 2 else None


@functools.cache
def local_cpythons() -> tuple[Interpreter, ...]:
    """One interpreter per CPython minor version found on PATH or under pyenv (not shims)."""
    candidates: list[str] = []
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates += sorted(glob.glob(str(pyenv / "versions" / "*" / "bin" / "python")))
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not directory or "shims" in directory:
            continue
        candidates += sorted(glob.glob(os.path.join(directory, "python[23]*")))
    found: dict[str, Interpreter] = {}
    for candidate in candidates:
        if not re.fullmatch(r"python(\d(\.\d+)?)?", os.path.basename(candidate)):
            continue
        real = os.path.realpath(candidate)
        interpreter = _probe(real)
        if interpreter and interpreter.implementation == "cpython":
            found.setdefault(interpreter.version, interpreter)
    return tuple(sorted(found.values(), key=lambda i: tuple(map(int, i.version.split(".")))))


def runnable() -> list[Interpreter]:
    return [i for i in local_cpythons() if i.version in PYTHONS]


def too_old() -> list[Interpreter]:
    return [i for i in local_cpythons() if i.version not in PYTHONS]


def platform_file(name: str) -> Path:
    path = zipapp().parent / f"kite-skills-{name}.pyz"
    if not path.is_file():
        pytest.fail(f"{path} is missing — run ./build.sh --all (./build.sh test does)")
    return path


def host_name() -> str:
    return built_target(zipapp())["platform"]


def built_target(pyz: Path) -> dict[str, object]:
    """The platform and CPythons the build wrote into the file's build-info member."""
    with zipfile.ZipFile(pyz) as archive:
        facts = build_info.loads(archive.read(build_info.MEMBER))
    return {"platform": facts.platform, "pythons": list(facts.pythons)}


def run(
    python: str, pyz: Path, args: list[str], env: dict[str, str], stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, str(pyz), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def session_messages(era: str = "legacy") -> list[dict[str, object]]:
    """One MCP session: every request the server mode answers. ``legacy`` starts with
    ``initialize``; ``modern`` (2026-07-28) sends ``server/discover`` and carries the
    protocol version and capabilities in each request's ``_meta``."""
    messages: list[dict[str, object]] = [
        {
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {"extensions": {"io.modelcontextprotocol/skills": {}}},
                "clientInfo": {"name": "imports", "version": "1"},
            },
        },
        {"method": "notifications/initialized"},
        {"id": 2, "method": "tools/list"},
        {"id": 3, "method": "tools/call", "params": {"name": "help", "arguments": {"key": "/"}}},
        {
            "id": 4,
            "method": "tools/call",
            "params": {
                "name": "skillSave",
                "arguments": {
                    "name": "import-check",
                    "description": "A skill saved to exercise the write path of the server.",
                    "body": "# Import check\n\n1. Do nothing at all.\n",
                },
            },
        },
        {"id": 5, "method": "skills/list", "params": {}},
        {"id": 6, "method": "resources/list"},
        {"id": 7, "method": "resources/read", "params": {"uri": "skill://orders/SKILL.md"}},
        {"id": 8, "method": "resources/subscribe", "params": {"uri": "skill://orders/SKILL.md"}},
        {"id": 9, "method": "tools/call", "params": {"name": "skills", "arguments": {}}},
        {"id": 10, "method": "no/such/method"},
        # Arguments the schema refuses: answered with jsonschema's own messages.
        {
            "id": 11,
            "method": "tools/call",
            "params": {"name": "skills", "arguments": {"limit": "a"}},
        },
    ]
    if era == "modern":
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"io.modelcontextprotocol/skills": {}}
            },
            "io.modelcontextprotocol/clientInfo": {"name": "imports", "version": "1"},
        }
        # No initialize handshake, and no resources/subscribe (not a 2026-07-28 method).
        kept = [m for m in messages[2:] if m["method"] != "resources/subscribe"]
        messages = [{"id": 1, "method": "server/discover"}, *kept]
        for m in messages:
            params = m.get("params")
            m["params"] = {**(params if isinstance(params, dict) else {}), "_meta": meta}
    return [{"jsonrpc": "2.0", **m} for m in messages]


def session(
    command: list[str],
    env: dict[str, str],
    era: str = "legacy",
    messages: list[dict[str, object]] | None = None,
) -> tuple[int, dict[object, dict[str, object]], str]:
    """Run the server mode through one session of ``era`` (see session_messages), or another
    mode through ``messages``, each request answered before the next is sent; then end of
    input. Returns (exit code, replies by id, stderr)."""
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None
    stderr = process.stderr
    chunks: list[bytes] = []
    drain = threading.Thread(target=lambda: chunks.append(stderr.read()), daemon=True)
    drain.start()  # the import log is long: never let the server block on a full pipe
    replies: dict[object, dict[str, object]] = {}
    try:
        for message in session_messages(era) if messages is None else messages:
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
            while "id" in message and message["id"] not in replies:
                line = process.stdout.readline()
                if not line:
                    break
                reply = json.loads(line)
                replies[reply.get("id")] = reply
        process.stdin.close()
        process.stdout.read()
        process.wait(timeout=600)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        drain.join(timeout=60)
    return process.returncode, replies, b"".join(chunks).decode(errors="replace")


def dashboard(command: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run the dashboard mode: start it on a free port, open its link (token -> cookie ->
    /skills, then one skill's page), stop it with SIGTERM. Returns (exit code, stderr)."""
    process = subprocess.Popen(
        [*command, "dashboard", "--port", "0", "--no-browser"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert process.stderr is not None
    stderr = process.stderr
    lines: list[str] = []
    link = threading.Event()

    def drain() -> None:
        for line in stderr:
            lines.append(line)
            if "?token=" in line:
                link.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        assert link.wait(timeout=120), "".join(lines)[-3000:]
        url = re.search(r"http://127\.0\.0\.1:\d+/skills\?token=\S+", "".join(lines))
        assert url is not None, "".join(lines)[-3000:]
        opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )
        with opener.open(url.group(0), timeout=60) as page:
            assert page.status == 200
        base = url.group(0).split("?", 1)[0]
        with opener.open(f"{base}/import-check", timeout=60) as page:
            assert page.status == 200
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        reader.join(timeout=60)
    return process.returncode, "".join(lines)


# The draft the server mode saves, published by the skills-publish mode with its revision id.
IMPORT_CHECK_REVISION = revision_id(
    "A skill saved to exercise the write path of the server.",
    "# Import check\n\n1. Do nothing at all.\n",
)

AUTHORS_CATALOG = "{authors-catalog}"
"""Stands for a directory made by :func:`authors_catalog` in MODES' arguments."""


def authors_catalog(root: Path) -> Path:
    """A small valid catalog an author might validate, with frontmatter that only the full
    YAML parser reads (a folded block scalar)."""
    (root / "notes").mkdir(parents=True)
    (root / "index.md").write_text("# Catalog\n\n- [Notes](notes/SKILL.md)\n", encoding="utf-8")
    (root / "notes" / "SKILL.md").write_text(
        "---\nname: notes\ndescription: >-\n  Notes an author keeps.\nlicense: MIT\n"
        'compatibility: Needs nothing else.\nmetadata:\n  version: "1.0"\n  author: me\n'
        "---\n# Notes\n\nNothing to do.\n",
        encoding="utf-8",
    )
    return root


SANDBOX_URL = "{sandbox-url}"
"""Stands for the MCP address of a running `kite-skills sandbox --http` in MODES' arguments;
its bearer token is in the environment variable SANDBOX_TOKEN."""

# The sandbox's and the guard's session: what a client sends first, and the tools' list.
TOOLS_SESSION: list[dict[str, object]] = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "imports", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


# Every mode a person or a client starts: (label, arguments, stdin). skills-publish runs at a
# pseudo-terminal, where the person types the skill's name (tests/terminal.py).
MODES: list[tuple[str, list[str], str]] = [
    ("version", ["--version"], ""),
    ("help", ["help", "/orders"], ""),
    ("help-root", ["help", "/"], ""),
    ("catalog-validate", ["catalog", "validate"], ""),
    ("catalog-list", ["catalog", "list"], ""),
    # An author's directory whose frontmatter needs the full YAML parser (a block scalar).
    ("catalog-validate-dir", ["catalog", "validate", AUTHORS_CATALOG], ""),
    ("server", [], ""),  # driven by session()
    ("server-modern", [], ""),  # driven by session(era="modern")
    ("skills-list", ["skills", "list"], ""),
    ("skills-show", ["skills", "show", "import-check"], ""),
    ("dashboard", [], ""),  # driven by dashboard()
    ("skills-publish", ["skills", "publish", "import-check", "--rev", IMPORT_CHECK_REVISION], ""),
    ("skills-log", ["skills", "log"], ""),
    ("setup", ["setup", "claude-code"], ""),
    ("doctor", ["doctor"], ""),
    ("calc", ["calc", "tick", '{"price": 1500.03, "tick_size": 0.05, "purpose": "buy_limit"}'], ""),
    ("sandbox", ["sandbox"], ""),  # driven by session(messages=TOOLS_SESSION)
    # The guard in front of a Streamable HTTP server (the hosted one's transport): its HTTP
    # client, httpcore2, and truststore, which makes its TLS context.
    ("guard-url", ["guard", "--url", SANDBOX_URL, "--bearer-env", "SANDBOX_TOKEN"], ""),
]


def imported_modules(stderr: str) -> set[str]:
    """Module names from ``-X importtime`` lines (attempted imports that failed are listed
    too; they name nothing the file holds, so they do no harm)."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name and name != "imported package":
                names.add(name)
    return names


def distributions(pyz: Path) -> dict[str, str]:
    """Top-level importable name -> distribution, from each dist-info RECORD in the file."""
    owner: dict[str, str] = {}
    with zipfile.ZipFile(pyz) as archive:
        for name in archive.namelist():
            match = re.fullmatch(r"site-packages/([^/]+)-[^-/]+\.dist-info/RECORD", name)
            if not match:
                continue
            for line in archive.read(name).decode().splitlines():
                path = line.split(",")[0]
                if not path or ".dist-info/" in path or path.startswith(".."):
                    continue
                top = path.split("/")[0]
                top = re.sub(r"(\.[^.]*\.(so|pyd)|\.py|\.pth)$", "", top)
                owner.setdefault(top, match.group(1))
    return owner


# (binary format, machine) each platform's extension modules must be.
ELF_X86_64, ELF_AARCH64 = ("elf", 62), ("elf", 183)
MACHO_X86_64, MACHO_ARM64 = ("macho", 0x01000007), ("macho", 0x0100000C)
PE_AMD64 = ("pe", 0x8664)
BINARY: dict[str, tuple[str, int]] = {
    "linux-x86_64": ELF_X86_64,
    "linux-aarch64": ELF_AARCH64,
    "macos-arm64": MACHO_ARM64,
    "macos-x86_64": MACHO_X86_64,
    "windows-amd64": PE_AMD64,
}
assert set(BINARY) == set(PLATFORMS)


def extension_suffixes(platform: str, version: str) -> list[str]:
    """importlib.machinery.EXTENSION_SUFFIXES of CPython ``version`` on ``platform``."""
    v = version.replace(".", "")
    if platform.startswith("linux"):
        arch = platform.split("-")[1]
        return [f".cpython-{v}-{arch}-linux-gnu.so", ".abi3.so", ".so"]
    if platform.startswith("macos"):
        return [f".cpython-{v}-darwin.so", ".abi3.so", ".so"]
    return [f".cp{v}-win_amd64.pyd", ".pyd"]


def binary_kinds(data: bytes) -> set[tuple[str, int]]:
    """The (format, machine) of an ELF, Mach-O (thin or universal) or PE file."""
    if data[:4] == b"\x7fELF":
        return {("elf", int.from_bytes(data[18:20], "little"))}
    if data[:4] == b"\xcf\xfa\xed\xfe":
        return {("macho", int.from_bytes(data[4:8], "little"))}
    if data[:4] == b"\xca\xfe\xba\xbe":  # universal: big-endian fat header
        count = int.from_bytes(data[4:8], "big")
        return {
            ("macho", int.from_bytes(data[8 + 20 * i : 12 + 20 * i], "big")) for i in range(count)
        }
    if data[:2] == b"MZ":
        pe = int.from_bytes(data[0x3C:0x40], "little")
        if data[pe : pe + 4] == b"PE\0\0":
            return {("pe", int.from_bytes(data[pe + 4 : pe + 6], "little"))}
    return set()
