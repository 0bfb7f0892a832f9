from __future__ import annotations

from pathlib import Path

import pytest

# What every SKILL.md of a catalog must state besides its name and description: its license,
# what it needs to run, its version (kite_skills/catalog/loader.py).
STATED = b'license: MIT\ncompatibility: Needs the Kite MCP server.\nmetadata:\n  version: "1"\n'

FILES: dict[str, bytes] = {
    "index.md": b"# Kite catalog\n\nStart with [orders](orders/SKILL.md).\n",
    "orders/SKILL.md": (
        b"---\nname: orders\ndescription: Inspect orders and prepare approved changes.\n"
        b"license: MIT\ncompatibility: Needs the Kite MCP server.\n"
        b'metadata:\n  zeta: z\n  alpha: a\n  version: "1"\n---\n# Orders\n\n'
        b"See [prepare](prepare.md) and [reconcile](reconcile.md#steps).\n"
        b"Code is not a link: `[x](nope.md)`\n\n```\n[y](nope.md)\n```\n"
    ),
    "orders/prepare.md": b"---\ndescription: Prepare a new order for approval.\n---\n# Prepare\n\n"
    b"1. Read [the audit](audit/SKILL.md).\nSECRET-PREPARE-STEPS\n",
    "orders/reconcile.md": b"# Reconcile fills\r\n\r\nMatch fills against orders.\r\n",
    "orders/audit/SKILL.md": b"---\r\nname: audit\r\ndescription: Audit order history.\r\n"
    + STATED.replace(b"\n", b"\r\n")
    + b"---\r\n"
    b"# Audit\r\n\r\nAUDIT-ENTRY-TEXT\r\n",
    "orders/audit/checks.md": b"---\ndescription: The audit checks.\n---\n# Checks\n",
    "orders/examples/market.md": b"# A market order example\n\nBack to [prepare](../prepare.md).\n",
    "holdings/SKILL.md": b"---\nname: holdings\ndescription: Review holdings.\n"
    + STATED
    + b"---\n# Holdings\n",
}


def write_catalog(root: Path, files: dict[str, bytes]) -> Path:
    for relative, data in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    return write_catalog(tmp_path / "cat", FILES)
