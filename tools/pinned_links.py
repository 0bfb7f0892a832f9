"""A find-links page of the pinned releases' files alone, for the build's ``pip download``s.

pip reads a project's whole index page for every download: pydantic-core's lists 15,000 files,
and the build downloads for 20 (platform, CPython) pairs, so parsing those pages again and
again was most of the download's CPU time. This page lists, for each pin, only the files of
its version, as the index lists them (PEP 691 JSON: URL, sha256, Requires-Python, yanked):
pip still fetches each file from the index's own hosts and checks its hash.

When the index does not list a pin in JSON (an old mirror, no network, a proxy only pip
knows), there is no page and pip reads the index itself, as it always did.
"""

from __future__ import annotations

import concurrent.futures
import html
import json
import os
import re
import subprocess
import sys
import urllib.parse
import urllib.request
from typing import Any

PYPI = "https://pypi.org/simple/"
PEP_691 = "application/vnd.pypi.simple.v1+json"


def index_url(pip: list[str]) -> str:
    """The index pip downloads from: PIP_INDEX_URL, else an ``index-url`` in pip's
    configuration (``pip config list``), else PyPI."""
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"].split()[0]
    listed = subprocess.run([*pip, "config", "list"], capture_output=True, text=True).stdout
    found = re.findall(r"^(?:global|download)\.index-url='([^']+)'$", listed, re.MULTILINE)
    return found[-1] if found else PYPI


def project_name(pin: str) -> str:
    """PEP 503's normalized name of ``name==version``."""
    return re.sub(r"[-_.]+", "-", pin.split("==")[0].strip()).lower()


def release_links(listing: dict[str, Any], page: str, version: str) -> list[str]:
    """``<a>`` elements for the wheels of ``version`` in a PEP 691 project ``listing``
    fetched from ``page`` (relative URLs are resolved against it)."""
    links = []
    for file in listing.get("files", []):
        filename = file["filename"]
        if not filename.endswith(".whl") or filename.split("-")[1] != version:
            continue
        url = urllib.parse.urljoin(page, file["url"]).split("#")[0]
        sha256 = file.get("hashes", {}).get("sha256")
        href = f"{url}#sha256={sha256}" if sha256 else url
        attributes = f' href="{html.escape(href)}"'
        if file.get("requires-python"):
            attributes += f' data-requires-python="{html.escape(file["requires-python"])}"'
        if file.get("yanked"):
            reason = file["yanked"] if isinstance(file["yanked"], str) else ""
            attributes += f' data-yanked="{html.escape(reason)}"'
        links.append(f"<a{attributes}>{html.escape(filename)}</a>")
    return links


def fetch(page: str) -> dict[str, Any] | None:
    """The PEP 691 listing at ``page``, or None when the index does not give one."""
    request = urllib.request.Request(page, headers={"Accept": PEP_691})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            if response.headers.get_content_type() != PEP_691:
                return None
            listing: dict[str, Any] = json.load(response)
            return listing
    except (OSError, ValueError):
        return None


def page_for(index: str, pins: list[str]) -> str | None:
    """The find-links HTML listing every pin's wheels, or None when a pin is not listed (or
    lists no wheel of its version): then pip must read the index itself."""
    base = index if index.endswith("/") else index + "/"
    pages = {pin: urllib.parse.urljoin(base, project_name(pin) + "/") for pin in pins}
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        listings = dict(zip(pins, pool.map(fetch, pages.values()), strict=True))
    links: list[str] = []
    for pin in pins:
        listing = listings[pin]
        found = [] if listing is None else release_links(listing, pages[pin], pin.split("==")[1])
        if not found:
            sys.stderr.write(
                f"zipapps.py: {pages[pin]} lists no wheel of {pin} in JSON — pip reads the "
                "whole index instead (slower)\n"
            )
            return None
        links += found
    return "<!DOCTYPE html>\n<html><body>\n" + "\n".join(links) + "\n</body></html>\n"
