"""Each platform's file is at most 15 MB, and what keeps it so (tools/zipapps.py): compiled
binaries stored with LZMA, a macOS file carrying only its own architecture's slice of a
universal binary, and no file that no mode can import (NOT_SHIPPED). (The benchmark,
section 6, reports the sizes too.)"""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile

import pytest

from kite_skills.launcher.preamble import PLATFORMS

from .tool_modules import load_tool
from .zipapp_platforms import BINARY, binary_kinds, platform_file

pytestmark = pytest.mark.zipapp
zipapps = load_tool("zipapps")
# A file a person downloads is at most 15 MB (15,000,000 bytes, as the benchmark counts).
MAX_BYTES = 15_000_000


@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_each_file_is_at_most_15_mb(name: str) -> None:
    size = platform_file(name).stat().st_size
    assert size <= MAX_BYTES, f"kite-skills-{name}.pyz is {size:,} bytes, over {MAX_BYTES:,}"


@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_each_file_holds_the_http_client_and_nothing_not_shipped(name: str) -> None:
    """`guard --url` needs httpx2's transport (httpcore2) and its TLS context (truststore:
    the system's trust store on Windows and macOS); the files NOT_SHIPPED names are left
    out, and so are their RECORD lines."""
    with zipfile.ZipFile(platform_file(name)) as archive:
        names = [n.removeprefix("site-packages/") for n in archive.namelist()]
        records = [
            line.split(",")[0]
            for n in archive.namelist()
            if n.endswith(".dist-info/RECORD")
            for line in archive.read(n).decode().splitlines()
        ]
    for module in ("httpcore2/__init__.py", "httpcore2/_ssl.py", "truststore/__init__.py"):
        assert module in names, f"{name}: {module} is missing"
    assert [n for n in names if zipapps.NOT_SHIPPED.fullmatch(n)] == []
    assert [r for r in records if zipapps.NOT_SHIPPED.fullmatch(r)] == []
    assert "_cffi_backend" in " ".join(names)  # cryptography's binding loads it


COMPILED = re.compile(r"site-packages/.*\.(so|pyd|dll)")


@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_binaries_are_stored_with_lzma_and_the_rest_deflated(name: str) -> None:
    """zipimport reads the archive's own modules (the preamble, shiv's bootstrap) and knows
    only deflate; the binaries are unpacked by zipfile, which reads LZMA."""
    with zipfile.ZipFile(platform_file(name)) as archive:
        infos = archive.infolist()
    lzma = {i.filename for i in infos if i.compress_type == zipfile.ZIP_LZMA}
    assert lzma == {i.filename for i in infos if COMPILED.fullmatch(i.filename)}
    assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in infos if i.filename not in lzma)


@pytest.mark.parametrize("name", ["macos-arm64", "macos-x86_64"])
def test_a_macos_file_holds_thin_binaries_of_its_own_architecture(name: str) -> None:
    """cryptography ships only universal2 wheels for macOS: the file keeps the slice its
    Macs load, and the wheel's RECORD names that slice's hash and size."""
    with zipfile.ZipFile(platform_file(name)) as archive:
        binaries = {n: archive.read(n) for n in archive.namelist() if n.endswith(".so")}
        records = "\n".join(
            archive.read(n).decode() for n in archive.namelist() if n.endswith(".dist-info/RECORD")
        )
    assert any("cryptography/" in n for n in binaries)
    for member, data in binaries.items():
        assert binary_kinds(data[:4096]) == {BINARY[name]}, member
    rust = "cryptography/hazmat/bindings/_rust.abi3.so"
    digest = base64.urlsafe_b64encode(hashlib.sha256(binaries[f"site-packages/{rust}"]).digest())
    line = f"{rust},sha256={digest.rstrip(b'=').decode()},{len(binaries[f'site-packages/{rust}'])}"
    assert line in records.splitlines()
