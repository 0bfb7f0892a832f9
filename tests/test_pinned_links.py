"""tools/pinned_links.py: the build's downloads read one local page of the pinned releases'
files instead of every release on the index. A real HTTP server stands for the index (PEP 691
JSON, as PyPI answers), and the real pip downloads from the page."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import os
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .tool_modules import load_tool

JSON_TYPE = "application/vnd.pypi.simple.v1+json"


pinned_links = load_tool("pinned_links")


def wheel(name: str, version: str) -> bytes:
    """A minimal wheel pip accepts: its metadata names the project and version."""
    dist = f"{name.replace('-', '_')}-{version}.dist-info"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(
            f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        )
        archive.writestr(
            f"{dist}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        archive.writestr(f"{dist}/RECORD", "")
    return buffer.getvalue()


class Index:
    """A PEP 691 index of one project, ``demo-pkg``: its JSON page and its files."""

    def __init__(self, json_pages: bool = True) -> None:
        self.files = {
            "demo_pkg-1.0-py3-none-any.whl": wheel("demo-pkg", "1.0"),
            "demo_pkg-1.1-py3-none-any.whl": wheel("demo-pkg", "1.1"),
            "demo_pkg-1.0.tar.gz": b"sdist",
        }
        self.json_pages = json_pages
        self.listed_sha256 = {n: hashlib.sha256(b).hexdigest() for n, b in self.files.items()}

    def listing(self) -> dict[str, object]:
        files = [
            {
                # relative, as an index may give it: resolved against the project's page
                "filename": name,
                "url": f"../../files/{name}",
                "hashes": {"sha256": self.listed_sha256[name]},
                "requires-python": ">=3.9",
            }
            for name in self.files
        ]
        files[1]["yanked"] = "broken <build>"
        return {"meta": {"api-version": "1.1"}, "name": "demo-pkg", "files": files}


@pytest.fixture
def index() -> Iterator[tuple[Index, str]]:
    served = Index()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/simple/demo-pkg/":
                if served.json_pages:
                    body, kind = json.dumps(served.listing()).encode(), JSON_TYPE
                else:
                    body, kind = b"<html><body></body></html>", "text/html"
            elif self.path.startswith("/files/") and self.path[7:] in served.files:
                body, kind = served.files[self.path[7:]], "application/octet-stream"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served, f"http://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()


def pip_download(page: Path, into: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull}
    return subprocess.run(
        [
            *[sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--no-deps"],
            *["--no-index", "--find-links", str(page), "-d", str(into), "demo-pkg==1.0"],
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_the_page_lists_the_pinned_versions_wheels_with_their_hashes(
    index: tuple[Index, str],
) -> None:
    served, url = index
    page = pinned_links.page_for(url, ["Demo_Pkg==1.0"])
    assert page is not None
    files = url.removesuffix("simple/") + "files/"
    sha = served.listed_sha256["demo_pkg-1.0-py3-none-any.whl"]
    assert (
        f'<a href="{files}demo_pkg-1.0-py3-none-any.whl#sha256={sha}"'
        ' data-requires-python="&gt;=3.9">demo_pkg-1.0-py3-none-any.whl</a>'
    ) in page
    assert "demo_pkg-1.1" not in page  # another release
    assert "tar.gz" not in page  # the build takes wheels only


def test_a_yanked_file_keeps_its_mark_and_reason(index: tuple[Index, str]) -> None:
    _, url = index
    page = pinned_links.page_for(url, ["demo-pkg==1.1"])
    assert page is not None
    assert 'data-yanked="broken &lt;build&gt;">demo_pkg-1.1-py3-none-any.whl</a>' in page


def test_pip_downloads_the_pin_from_the_page(index: tuple[Index, str], tmp_path: Path) -> None:
    served, url = index
    page = tmp_path / "links.html"
    page.write_text(pinned_links.page_for(url, ["demo-pkg==1.0"]) or "", encoding="utf-8")
    done = pip_download(page, tmp_path / "wheels")
    assert done.returncode == 0, done.stderr
    fetched = tmp_path / "wheels" / "demo_pkg-1.0-py3-none-any.whl"
    assert fetched.read_bytes() == served.files[fetched.name]


def test_pip_refuses_a_file_whose_hash_differs_from_the_index(
    index: tuple[Index, str], tmp_path: Path
) -> None:
    served, url = index
    served.listed_sha256["demo_pkg-1.0-py3-none-any.whl"] = "0" * 64
    page = tmp_path / "links.html"
    page.write_text(pinned_links.page_for(url, ["demo-pkg==1.0"]) or "", encoding="utf-8")
    done = pip_download(page, tmp_path / "wheels")
    assert done.returncode != 0
    assert "THESE PACKAGES DO NOT MATCH THE HASHES" in done.stderr, done.stderr
    assert not (tmp_path / "wheels" / "demo_pkg-1.0-py3-none-any.whl").exists()


def test_an_index_without_json_gives_no_page_and_says_so(
    index: tuple[Index, str], capsys: pytest.CaptureFixture[str]
) -> None:
    served, url = index
    served.json_pages = False
    assert pinned_links.page_for(url, ["demo-pkg==1.0"]) is None
    assert "lists no wheel of demo-pkg==1.0 in JSON" in capsys.readouterr().err


def test_a_pin_the_index_does_not_know_gives_no_page(index: tuple[Index, str]) -> None:
    _, url = index
    assert pinned_links.page_for(url, ["demo-pkg==1.0", "other==2.0"]) is None
    assert pinned_links.page_for(url, ["demo-pkg==9.9"]) is None


def test_the_index_is_pips_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pip = [sys.executable, "-m", "pip"]
    monkeypatch.setenv("PIP_INDEX_URL", "https://mirror.example/simple/ https://other/")
    assert pinned_links.index_url(pip) == "https://mirror.example/simple/"
    monkeypatch.delenv("PIP_INDEX_URL")
    config = tmp_path / "pip.conf"
    config.write_text("[global]\nindex-url = https://config.example/simple/\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(config))
    assert pinned_links.index_url(pip) == "https://config.example/simple/"
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    assert pinned_links.index_url(pip) == pinned_links.PYPI
