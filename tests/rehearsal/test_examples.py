"""Worked examples that show tool output are what the sandbox returns for a named scenario
(issue 19 §3), so they cannot drift from the shapes and numbers the server gives: the
positions recipe's table is `portfolio` mode `positions` on `positions-closed` at its clock,
row for row and in the server's order."""

from __future__ import annotations

import re

from .agent import in_process, recipe, step


def table(text: str, heading: str) -> list[dict[str, str]]:
    body = text[text.index(heading) :]
    lines = [ln for ln in body.splitlines() if ln.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = []
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) != len(header):
            break
        rows.append(dict(zip(header, cells, strict=True)))
    return rows


def test_the_positions_example_is_the_sandbox_output() -> None:
    r = recipe("holdings/positions.md")
    shown = table(r.text, "### Worked example")
    assert re.search(r"sandbox scenario `positions-closed`", r.text)
    agent = in_process("positions-closed")
    rows = agent.call(step(r, 1, "Fetch positions: `portfolio` mode `positions`"), "portfolio",
                      "positions")  # fmt: skip
    assert len(rows) == len(shown)
    numbers = ("quantity", "overnight_quantity", "buy_value", "sell_value", "last_price",
               "multiplier", "pnl")  # fmt: skip
    for got, row in zip(rows, shown, strict=True):
        assert (got["tradingsymbol"], got["exchange"], got["product"]) == (
            row["tradingsymbol"], row["exchange"], row["product"])  # fmt: skip
        for name in numbers:
            assert float(row[name].replace(",", "")) == float(got[name]), (row["row"], name)
