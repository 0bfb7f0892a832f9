"""Worked examples that show tool output are what the sandbox returns for a named scenario
(issue 19 §3), so they cannot drift from the shapes and numbers the server gives: the
positions recipe's table is `portfolio` mode `positions` on `positions-closed` at its clock,
row for row and in the server's order; the option-chain table and the greeks inputs are the
quotes, candles and search rows of `option-books` (whose option books have realistic
spreads, one of them wide), read by the recipes' own steps."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

from .agent import in_process, recipe, step
from .scripts import Chain, implied_vol, option_chain


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


# ------------------------------------------------------------------ derivatives/option-chain.md

CHAIN = ("CE last", "CE bid", "CE ask", "CE oi", "CE oi prev",
         "PE last", "PE bid", "PE ask", "PE oi", "PE oi prev")  # fmt: skip


def chain_rows() -> tuple[Chain, dict[str, Any], list[dict[str, str]]]:
    """The option-chain recipe followed on `option-books` (two strikes either side of the
    money): the underlying's quote and one row per strike as the example's table writes it."""
    r = recipe("derivatives/option-chain.md")
    agent = in_process("option-books")
    chain = option_chain(agent, r, "NSE:NIFTY 50", "NFO:NIFTY", 2)
    underlying = json.loads(agent.calls_of("market", "quote")[0].text)["NSE:NIFTY 50"]
    quotes = json.loads(agent.calls_of("market", "quote")[-1].text)
    today = agent.now.date()
    yesterday = today - timedelta(days=1)  # the last two sessions: a Tuesday and a Wednesday
    s5 = step(r, 5, "`market` mode `historical` with `instrument_token`, `interval` `day`")
    rows: dict[float, dict[str, str]] = {k: {"strike": f"{k:.0f}"} for k in chain.strikes}
    for key, q in quotes.items():
        strike = float(re.sub(r"^NFO:NIFTY\w{5}(\d+)(CE|PE)$", r"\1", key))
        side = key[-2:]
        candles = agent.call(s5, "market", "historical", instrument_token=q["instrument_token"],
                             interval="day", oi=True, from_date=f"{yesterday} 00:00:00",
                             to_date=f"{agent.now:%Y-%m-%d %H:%M:%S}")  # fmt: skip
        previous = [c for c in candles if c["date"][:10] < today.isoformat()][-1]
        rows[strike].update({
            f"{side} last": f"{q['last_price']:.2f}",
            f"{side} bid": f"{q['depth']['buy'][0]['price']:.2f}",
            f"{side} ask": f"{q['depth']['sell'][0]['price']:.2f}",
            f"{side} oi": str(q["oi"]),
            f"{side} oi prev": str(previous["oi"]),
        })  # fmt: skip
    return chain, underlying, [rows[k] for k in chain.strikes]


def test_the_option_chain_example_is_the_sandbox_output() -> None:
    r = recipe("derivatives/option-chain.md")
    assert "sandbox scenario `option-books`" in " ".join(r.text.split())
    shown = table(r.text, "### Worked example")
    chain, underlying, rows = chain_rows()
    assert [row["strike"] for row in shown] == [row["strike"] for row in rows]
    for got, row in zip(rows, shown, strict=True):
        for name in CHAIN:
            assert row[name] == got[name], (row["strike"], name)
    head = " ".join(r.text[r.text.index("### Worked example") :].split("|")[0].split())
    assert (
        f"underlying {underlying['last_price']:,.2f} at {underlying['timestamp'][11:19]} IST"
        in head
    )
    assert f"expiry {chain.expiry[:10]}" in head
    # the wide book the liquidity warning is about is the sandbox's, not an invented one
    assert [k.removeprefix("NFO:NIFTY26D08") for k in chain.wide] == ["26050CE"]


# ------------------------------------------------------------------ derivatives/greeks.md


def test_the_greeks_example_is_the_sandbox_output() -> None:
    """The inputs table is the option's search row and the one quote of step 2 on
    `option-books` (tests/content recomputes the results from them)."""
    r = recipe("derivatives/greeks.md")
    assert "sandbox scenario `option-books`" in " ".join(r.text.split())
    shown = {row["input"]: row["value"] for row in table(r.text, "### Worked example")}
    agent = in_process("option-books")
    option = "NFO:" + shown["option"].split()[0]
    implied_vol(agent, r, option, "NSE:NIFTY 50")  # steps 1 to 5, as the rehearsal does
    (search,) = agent.calls_of("market", "search")  # step 1: the exact lookup, one row
    (row,) = json.loads(search.text)["data"]
    quote = json.loads(agent.calls_of("market", "quote")[-1].text)
    got, spot = quote[option], quote["NSE:NIFTY 50"]
    assert shown["option"] == f"{row['tradingsymbol']} (call)" and row["instrument_type"] == "CE"
    assert float(shown["strike K"]) == row["strike"]
    assert shown["lot size"] == str(row["lot_size"])
    assert shown["expiry time"] == f"{row['expiry_date'][:10]} 15:30:00"
    assert shown["underlying S"] == f"{spot['last_price']:.2f}"
    assert shown["best bid"] == f"{got['depth']['buy'][0]['price']:.2f}"
    assert shown["best ask"] == f"{got['depth']['sell'][0]['price']:.2f}"
    assert shown["quote time"] == got["timestamp"][:19].replace("T", " ")
