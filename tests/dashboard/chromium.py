"""Debian's Chromium for the dashboard's browser tests, driven by Playwright with no browser
download (docs: /work/shared/docs/browser-testing.md): where it is, the flags it starts with,
and the one message a machine without it gets.

A test module launches it once (about 1.5 CPU-s with Playwright's driver), and each test opens
a fresh browser context on it: its own cookies, storage, cache and pages, so a test signs in,
and sees, exactly as in a browser of its own.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
# Playwright passes --headless, --no-sandbox and a temporary --user-data-dir itself; these are a
# safety net, and the resolver rule keeps Chromium's own lookups (Google services) off the network.
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


def launch_options(home: Path) -> dict[str, Any]:
    """The keyword arguments of ``playwright.chromium.launch`` (sync and async alike), with
    ``home`` as the browser's HOME (it writes crash reports and dconf there); fails, with the
    command that installs it, when Chromium is missing."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"Chromium not found at {CHROMIUM!r}: apt-get install -y --no-install-recommends "
            "chromium (./build.sh test does), or set CHROMIUM_PATH",
            pytrace=False,
        )
    return {
        "executable_path": CHROMIUM,
        "args": ARGS,
        "timeout": 30_000,
        "env": {**os.environ, "HOME": str(home)},
    }
