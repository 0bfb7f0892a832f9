"""``check_order``: a proposed order against the last price, the margin, the lot, the tick, the
freeze quantity and the circuit, every finding at once; ``size``: the quantity that risks a
given amount between an entry and a stop.

The fat-finger guard's defaults are owned here (:data:`FAT_FINGER`); orders/prepare.md step 11
states them in words and tests/test_owners.py checks that the two agree."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal
from typing import Literal

from pydantic import Field

from ._common import Answer, Inputs, dec, money, on_tick
from ._validate import refuse


@dataclass(frozen=True)
class FatFinger:
    """The fat-finger guard: warn (never block) when the order's value is above
    ``net_share_pct`` % of the segment's net margin, its quantity above
    ``usual_size_multiple`` times the person's usual size, or its price more than
    ``price_distance_pct`` % from the last price."""

    net_share_pct: int
    usual_size_multiple: int
    price_distance_pct: int


FAT_FINGER = FatFinger(net_share_pct=25, usual_size_multiple=5, price_distance_pct=5)
CENT = Decimal("0.01")


class CheckOrderInputs(Inputs):
    transaction_type: Literal["BUY", "SELL"] = Field(description="BUY or SELL")
    order_type: Literal["LIMIT", "MARKET", "SL", "SL-M"] = Field(
        description="LIMIT, MARKET, SL or SL-M"
    )
    quantity: int = Field(ge=1, description="the order's quantity in units (lots × lot size)")
    price: float | None = Field(
        default=None, gt=0, description="the limit price (LIMIT and SL orders), in rupees"
    )
    trigger_price: float | None = Field(
        default=None, gt=0, description="the trigger (SL and SL-M orders), in rupees"
    )
    last_price: float = Field(gt=0, description="`last_price` from a fresh `market` mode `quote`")
    tick_size: float = Field(gt=0, description="the instrument's `tick_size`")
    lot_size: int = Field(default=1, ge=1, description="the instrument's `lot_size` (1 for equity)")
    multiplier: float = Field(
        default=1, gt=0, description="the instrument's `multiplier` (MCX; 1 elsewhere)"
    )
    freeze_quantity: int = Field(
        default=0, ge=0, description="the instrument's `freeze_quantity` (0: none)"
    )
    net: float | None = Field(
        default=None, description="`net` of the segment from `portfolio` mode `margins`"
    )
    usual_quantity: int | None = Field(
        default=None,
        ge=0,
        description="the person's usual size for the symbol (largest trade today or the "
        "holding's `quantity`); omit when none is known",
    )
    lower_circuit_limit: float | None = Field(
        default=None, gt=0, description="`lower_circuit_limit` from the quote"
    )
    upper_circuit_limit: float | None = Field(
        default=None, gt=0, description="`upper_circuit_limit` from the quote"
    )
    net_share_pct: float = Field(
        default=FAT_FINGER.net_share_pct,
        gt=0,
        description="warn above this % of net (default "
        f"{FAT_FINGER.net_share_pct}; the person may set another)",
    )
    usual_size_multiple: float = Field(
        default=FAT_FINGER.usual_size_multiple,
        gt=0,
        description="warn above this many times the usual size (default "
        f"{FAT_FINGER.usual_size_multiple})",
    )
    price_distance_pct: float = Field(
        default=FAT_FINGER.price_distance_pct,
        gt=0,
        description="warn when a limit or trigger is more than this % from the last price "
        f"(default {FAT_FINGER.price_distance_pct})",
    )


def check_order(i: CheckOrderInputs) -> Answer:
    tick, last = dec(i.tick_size), dec(i.last_price)
    findings: list[dict[str, str]] = []

    def find(code: str, text: str) -> None:
        findings.append({"code": code, "message": text})

    needs_price = i.order_type in ("LIMIT", "SL")
    needs_trigger = i.order_type in ("SL", "SL-M")
    if needs_price and i.price is None:
        find("missing_price", f"a {i.order_type} order needs `price`")
    if needs_trigger and i.trigger_price is None:
        find("missing_trigger", f"an {i.order_type} order needs `trigger_price`")
    price = dec(i.price) if i.price is not None and needs_price else None
    trigger = dec(i.trigger_price) if i.trigger_price is not None and needs_trigger else None
    basis = price if price is not None else last
    value = basis * i.quantity * dec(i.multiplier)
    result: dict[str, object] = {"value": value}
    for name, level in (("price", price), ("trigger_price", trigger)):
        if level is None:
            continue
        if not on_tick(level, tick):
            find(
                "off_tick",
                f"{name} {level} is not on the {tick} tick — round it with calc mode tick",
            )
        away = abs(level - last) / last * 100
        result[f"{name}_distance_pct"] = away.quantize(CENT, rounding=ROUND_HALF_UP)
        if away > dec(i.price_distance_pct):
            find(
                "fat_finger_price",
                f"{name} {level} is {away:.2f}% from the last price {last} "
                f"(guard {i.price_distance_pct:g}%)",
            )
        low, high = i.lower_circuit_limit, i.upper_circuit_limit
        if (low is not None and level < dec(low)) or (high is not None and level > dec(high)):
            find("beyond_band", f"{name} {level} is outside the circuit {low}–{high}: rejected")
    if trigger is not None:
        wrong = trigger <= last if i.transaction_type == "BUY" else trigger >= last
        if wrong:
            side = "above" if i.transaction_type == "BUY" else "below"
            find(
                "trigger_side",
                f"a {i.transaction_type} stop's trigger sits {side} the last "
                f"price {last}; {trigger} would fire at once",
            )
        if price is not None and (
            price < trigger if i.transaction_type == "BUY" else price > trigger
        ):
            find(
                "limit_inside_trigger",
                f"the protective limit {price} is on the wrong side of the trigger {trigger}",
            )
    if i.quantity % i.lot_size:
        find("not_lot_multiple", f"{i.quantity} is not a multiple of the lot size {i.lot_size}")
    if i.freeze_quantity and i.quantity > i.freeze_quantity:
        find(
            "above_freeze",
            f"{i.quantity} is above the freeze quantity {i.freeze_quantity}: split "
            "it with calc mode lots",
        )
    if i.net is not None:
        net = dec(i.net)
        share = value / net * 100 if net > 0 else None
        result["net_share_pct"] = (
            share.quantize(CENT, rounding=ROUND_HALF_UP) if share is not None else None
        )
        if net <= 0 or value > net:
            find(
                "above_net",
                f"value {money(value)} is above net {money(net)} by "
                f"{money(value - net)}: it does not fit",
            )
        elif share is not None and share > dec(i.net_share_pct):
            find(
                "fat_finger_value",
                f"value {money(value)} is {share:.2f}% of net (guard {i.net_share_pct:g}%)",
            )
    if i.usual_quantity and i.quantity > dec(i.usual_size_multiple) * i.usual_quantity:
        find(
            "fat_finger_size",
            f"{i.quantity} is more than {i.usual_size_multiple:g} times the "
            f"usual {i.usual_quantity}",
        )
    result["findings"] = findings
    assumptions = ["F&O margin is not known here: the value is the notional"]
    if price is None:
        assumptions.append(f"no limit price: the value is at the last price {last}")
    if i.usual_quantity is None:
        assumptions.append("no usual size known: the size guard was not applied")
    lines = [f"{i.transaction_type} {i.quantity} {i.order_type}: value {money(value)}"]
    lines += [f"{f['code']}: {f['message']}" for f in findings] or ["no findings"]
    roundings = ("percentages shown to 0.01, half up; the guards compare the exact values",)
    return Answer(
        "check_order", i.model_dump(), result, tuple(assumptions), roundings, tuple(lines)
    )


class SizeInputs(Inputs):
    entry: float = Field(gt=0, description="the entry price, in rupees")
    stop: float = Field(gt=0, description="the stop price, in rupees (not equal to the entry)")
    risk_amount: float | None = Field(
        default=None, gt=0, description="the most to lose at the stop, in rupees"
    )
    risk_percent: float | None = Field(
        default=None, gt=0, le=100, description="the most to lose, as a % of `capital`"
    )
    capital: float | None = Field(
        default=None, gt=0, description="the capital `risk_percent` is a share of, in rupees"
    )
    lot_size: int = Field(default=1, ge=1, description="the instrument's `lot_size` (1 for equity)")
    multiplier: float = Field(default=1, gt=0, description="the instrument's `multiplier` (MCX)")
    margin_per_lot: float | None = Field(
        default=None, ge=0, description="the margin one lot needs, where known, in rupees"
    )


def size(i: SizeInputs) -> Answer:
    problems = []
    if (i.risk_amount is None) == (i.risk_percent is None):
        problems.append("`risk_amount`: send exactly one of risk_amount or risk_percent")
    if i.risk_percent is not None and i.capital is None:
        problems.append("`capital`: missing — risk_percent needs the capital it is a share of")
    if i.entry == i.stop:
        problems.append("`stop`: equals the entry — send a stop away from the entry")
    if problems:
        raise refuse("size", *problems)
    entry, stop, unit = dec(i.entry), dec(i.stop), dec(i.multiplier)
    if i.risk_amount is not None:
        budget = dec(i.risk_amount)
    else:
        assert i.risk_percent is not None and i.capital is not None
        budget = dec(i.capital) * dec(i.risk_percent) / 100
    per_lot = abs(entry - stop) * unit * i.lot_size
    whole = int((budget / per_lot).to_integral_value(rounding=ROUND_FLOOR))
    result: dict[str, object] = {
        "lots": whole,
        "quantity": whole * i.lot_size,
        "risk_per_lot": per_lot,
        "risk": per_lot * whole,
        "budget": budget,
        "side": "BUY" if stop < entry else "SELL",
        "margin": dec(i.margin_per_lot) * whole if i.margin_per_lot is not None else None,
    }
    assumptions = ["the stop fills at its price: a gap or a protected market exit can lose more"]
    if i.margin_per_lot is None:
        assumptions.append("margin not known: send margin_per_lot to have it")
    lines = [
        f"{whole} lots ({whole * i.lot_size} units) risk {money(per_lot * whole)} of "
        f"{money(budget)} ({money(per_lot)} a lot between {entry} and {stop})"
    ]
    if whole == 0:
        lines.append("not even one lot fits the risk budget")
    return Answer(
        "size",
        i.model_dump(),
        result,
        tuple(assumptions),
        ("lots rounded down: the risk never exceeds the budget",),
        tuple(lines),
    )
