"""What keeps each platform's file small (tools/zipapps.py): compiled binaries stored with
LZMA, and a macOS file carrying only its own architecture's slice of a universal binary.
(The sizes themselves are measured by the benchmark, section 6.)"""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile

import pytest

from kite_skills.launcher.preamble import PLATFORMS

from .zipapp_platforms import BINARY, binary_kinds, platform_file

pytestmark = pytest.mark.zipapp

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
