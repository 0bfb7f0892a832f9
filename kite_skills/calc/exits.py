"""``exit_plan``: from the Net positions, the order in which to square off safely: grouped
by underlying, shorts (then long futures) before the long options that hedge them, each leg
only after the previous one fills, an MIS leg that hedges an NRML one flagged (orders/exit.md)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from ._common import Answer, Inputs
from .rounding import slices_of

_UNDERLYING = re.compile(r"[A-Z&-]+?(?=\d|$)")
# Kite's derivative exchanges: their symbols are UNDERLYING + expiry (+ strike) + FUT/CE/PE.
DERIVATIVE_EXCHANGES = frozenset({"NFO", "BFO", "MCX", "CDS", "BCD"})
KINDS = ("FUT", "CE", "PE")


def kind_of(exchange: str, tradingsymbol: str) -> str:
    """FUT, CE or PE, read off a derivative's symbol; EQ for anything else (an NSE share
    named ...CE is a share)."""
    if exchange in DERIVATIVE_EXCHANGES:
        for kind in KINDS:
            if tradingsymbol.endswith(kind):
                return kind
    return "EQ"


def underlying_name(exchange: str, tradingsymbol: str) -> str:
    """A derivative's underlying read off its symbol (NIFTY26D1525900CE -> NIFTY); a share's
    own symbol, so that RELIANCE and RELIANCE26DEC1600CE group together."""
    if exchange not in DERIVATIVE_EXCHANGES:
        return tradingsymbol
    match = _UNDERLYING.match(tradingsymbol)
    return match.group() if match else tradingsymbol


class Position(Inputs):
    tradingsymbol: str = Field(min_length=1, description="the Net row's `tradingsymbol`")
    exchange: str = Field(min_length=1, description="the Net row's `exchange`")
    product: Literal["CNC", "NRML", "MIS", "MTF"] = Field(description="the Net row's `product`")
    quantity: int = Field(description="the Net row's `quantity`: negative for a short")
    underlying: str | None = Field(
        default=None,
        description="the underlying's `name` from `market` mode `search` (default: the "
        "symbol's leading letters)",
    )
    lot_size: int = Field(default=1, ge=1, description="the contract's `lot_size`")
    freeze_quantity: int = Field(
        default=0, ge=0, description="the contract's `freeze_quantity` (0: none)"
    )


class ExitPlanInputs(Inputs):
    positions: list[Position] = Field(
        min_length=1, max_length=500, description="the Net book's rows (not the Day book)"
    )


def underlying_of(p: Position) -> tuple[str, bool]:
    """The underlying's name, and whether it was read off the symbol."""
    if p.underlying:
        return p.underlying, False
    return underlying_name(p.exchange, p.tradingsymbol), True


def exit_plan(i: ExitPlanInputs) -> Answer:
    groups: dict[str, list[Position]] = {}
    guessed = set()
    for p in i.positions:
        if p.quantity == 0:
            continue
        name, guess = underlying_of(p)
        groups.setdefault(name, []).append(p)
        if guess:
            guessed.add(f"{p.tradingsymbol} -> {name}")
    steps: list[dict[str, object]] = []
    flags: list[str] = []
    lines: list[str] = []
    for name in sorted(groups):
        rows = groups[name]
        shorts = sorted((p for p in rows if p.quantity < 0), key=lambda p: p.tradingsymbol)
        # a long future is exposure a long option may hedge (a protective put): it closes
        # before the options, as a short does (issue 43: the watch's hedge-broken)
        longs = sorted(
            (p for p in rows if p.quantity > 0),
            key=lambda p: (kind_of(p.exchange, p.tradingsymbol) != "FUT", p.tradingsymbol),
        )
        for short in shorts:
            for long in longs:
                if {short.product, long.product} == {"MIS", "NRML"}:
                    mis = short if short.product == "MIS" else long
                    nrml = long if mis is short else short
                    flags.append(
                        f"{name}: the MIS leg {mis.tradingsymbol} hedges the NRML leg "
                        f"{nrml.tradingsymbol}; MIS is squared off automatically near the "
                        "close, which would leave the NRML leg unhedged"
                    )
        lines.append(f"{name}:")
        for p in shorts + longs:
            side = "BUY" if p.quantity < 0 else "SELL"
            size = abs(p.quantity)
            biggest = (p.freeze_quantity // p.lot_size) * p.lot_size if p.freeze_quantity else 0
            orders = slices_of(size, biggest) if biggest else [size]
            step = len(steps) + 1
            after = f"after step {step - 1} fills" if steps else "first"
            steps.append(
                {
                    "step": step,
                    "underlying": name,
                    "transaction_type": side,
                    "tradingsymbol": p.tradingsymbol,
                    "exchange": p.exchange,
                    "product": p.product,
                    "quantity": size,
                    "orders": orders,
                    "closes": "short" if p.quantity < 0 else "long",
                    "after": step - 1 if step > 1 else None,
                }
            )
            split = (
                f" in {len(orders)} orders ({' + '.join(map(str, orders))})"
                if len(orders) > 1
                else ""
            )
            lines.append(
                f"  {step}. {side} {size} {p.tradingsymbol} {p.exchange} {p.product}{split} "
                f"({after})"
            )
    assumptions = [
        "shorts close before the longs that hedge them, and long futures before long "
        "options; each step waits for the previous one to fill",
        "each exit uses the position's own product; rows with quantity 0 are skipped",
    ]
    if guessed:
        assumptions.append("underlying read off the symbol: " + ", ".join(sorted(guessed)))
    lines += [f"FLAG: {f}" for f in flags]
    return Answer(
        "exit_plan",
        i.model_dump(),
        {"steps": steps, "flags": flags},
        tuple(assumptions),
        (),
        tuple(lines) or ("no open positions",),
    )
