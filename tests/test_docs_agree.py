"""The pages agree with each other and with what ships: one example folder for the file on
every page (the one the README recommends), and no download promised that the release does
not upload."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "SECURITY.md", *sorted((ROOT / "docs").glob("*.md"))]
FOLDER = "~/.local/share/kite-skills"
"""The folder the README's install step recommends for the file."""
EXAMPLES = (
    f"{FOLDER}/",
    "/home/you/.local/share/kite-skills/",
    "C:\\Users\\you\\.local\\share\\kite-skills\\",
    "/home/you/Downloads/",  # doctor.md's entry left on a file that moved away
    "dist/",
    "server/",  # inside the Claude Desktop bundle (and "<extension folder>/server/")
    "folder>/server/",
)
PYZ = re.compile(r"[^\s\"'`(\[|]*[/\\][^\s\"'`/\\]*kite-skills[^\s\"'`/\\]*\.pyz")


def test_the_readme_recommends_the_folder_with_a_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "**Keep it in a folder of its own**" in readme
    assert f"mkdir -p {FOLDER} && mv kite-skills-linux-x86_64.pyz {FOLDER}/" in readme


def test_every_page_puts_the_example_file_in_that_folder() -> None:
    elsewhere = [
        f"{page.relative_to(ROOT)}: {path}"
        for page in PAGES
        for path in PYZ.findall(page.read_text(encoding="utf-8"))
        if not path.startswith(EXAMPLES)
    ]
    assert elsewhere == [], f"put the example file in {FOLDER} (README, Install, step 3)"


def test_the_bundle_page_promises_only_what_the_release_uploads() -> None:
    workflow = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    page = (ROOT / "docs" / "bundles.md").read_text(encoding="utf-8")
    for_people = page.split("## For builders")[0]
    assert ".sha256" not in for_people or ".sha256" in workflow
