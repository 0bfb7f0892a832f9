"""``tick``: a price to the tick for its purpose; ``lots``: a quantity to whole lots, split at
the freeze quantity (orders/prepare.md steps 4 and 5)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ._common import Answer, Inputs, dec, on_tick, to_tick
from ._validate import refuse

Purpose = Literal[
    "buy_limit", "sell_limit", "buy_trigger", "sell_trigger", "buy_stop_limit", "sell_stop_limit"
]

# Which way each purpose rounds (True: down), and why, in the answer's words.
ROUNDS: dict[str, tuple[bool, str]] = {
    "buy_limit": (True, "a BUY limit rounds down: never pay more than stated"),
    "sell_limit": (False, "a SELL limit rounds up: never receive less than stated"),
    "buy_trigger": (
        True,
        "a BUY stop's trigger rounds down, towards the last price: it never "
        "fires later than stated",
    ),
    "sell_trigger": (
        False,
        "a SELL stop's trigger rounds up, towards the last price: it never fires later than stated",
    ),
    "buy_stop_limit": (
        False,
        "a BUY stop's protective limit rounds up: it stays at or above its trigger",
    ),
    "sell_stop_limit": (
        True,
        "a SELL stop's protective limit rounds down: it stays at or below its trigger",
    ),
}

MAX_ICEBERG_LEGS = 50
MIN_ICEBERG_LEGS = 2


class TickInputs(Inputs):
    price: float = Field(gt=0, description="the price to round, in rupees (a number > 0)")
    tick_size: float = Field(
        gt=0, description="the instrument's `tick_size` from `market` mode `search` (e.g. 0.05)"
    )
    purpose: Purpose = Field(
        description="what the price is for: buy_limit, sell_limit, buy_trigger, sell_trigger, "
        "buy_stop_limit or sell_stop_limit"
    )
    trigger_price: float | None = Field(
        default=None,
        gt=0,
        description="for buy_stop_limit and sell_stop_limit: the stop's trigger, already on "
        "the tick (round it first with purpose buy_trigger or sell_trigger)",
    )


def tick(i: TickInputs) -> Answer:
    price, size = dec(i.price), dec(i.tick_size)
    down, why = ROUNDS[i.purpose]
    protects = i.purpose.endswith("stop_limit")
    problems = []
    trigger = dec(i.trigger_price) if i.trigger_price is not None else None
    if protects and trigger is None:
        problems.append(f"`trigger_price`: missing — purpose {i.purpose} needs the stop's trigger")
    if trigger is not None and not protects:
        problems.append(
            f"`trigger_price`: purpose {i.purpose} takes no trigger — send it only with "
            "buy_stop_limit or sell_stop_limit"
        )
    if trigger is not None and protects and not on_tick(trigger, size):
        problems.append(
            f"`trigger_price`: {trigger} is not on the {size} tick — round it first with "
            f"purpose {'sell' if down else 'buy'}_trigger"
        )
    if trigger is not None and protects and (price > trigger if down else price < trigger):
        side = "at or below" if down else "at or above"
        problems.append(
            f"`price`: a {'SELL' if down else 'BUY'} stop's limit {price} must be {side} its "
            f"trigger {trigger} — send a limit {side} the trigger"
        )
    if problems:
        raise refuse("tick", *problems)
    rounded = to_tick(price, size, down)
    ticks = int(rounded / size)
    result = {
        "price": rounded,
        "moved_by": rounded - price,
        "ticks": ticks,
        "on_tick": rounded == price,
    }
    lines = [f"{i.purpose} {price} -> {rounded} (tick {size}, {ticks} ticks)"]
    if trigger is not None:
        result["trigger_price"] = trigger
        lines.append(f"trigger {trigger}; the limit stays {'below' if down else 'above'} or at it")
    return Answer(
        "tick",
        i.model_dump(),
        result,
        roundings=(f"{why}; {price} {'down' if down else 'up'} to {rounded}",),
        lines=tuple(lines),
    )


class LotsInputs(Inputs):
    quantity: int = Field(
        ge=0, description="the quantity wanted, in units (shares or contracts' units)"
    )
    lot_size: int = Field(ge=1, description="the instrument's `lot_size` (1 for equity)")
    freeze_quantity: int = Field(
        default=0,
        ge=0,
        description="the instrument's `freeze_quantity`, the largest order the exchange takes "
        "(0: no freeze limit)",
    )
    round_up: bool = Field(
        default=False,
        description="true to round a part lot up to a whole lot (default false: down)",
    )
    split: Literal["orders", "iceberg"] = Field(
        default="orders",
        description="how to split above the freeze quantity: orders (separate orders) or "
        "iceberg (one iceberg order's legs)",
    )


def lots(i: LotsInputs) -> Answer:
    wanted, lot = i.quantity, i.lot_size
    whole = (wanted + lot - 1) // lot if i.round_up else wanted // lot
    quantity = whole * lot
    roundings = []
    if quantity != wanted:
        way = "up (asked for)" if i.round_up else "down (never up unless asked)"
        roundings.append(f"{wanted} units rounded {way} to {whole} lots of {lot} = {quantity}")
    biggest = (i.freeze_quantity // lot) * lot if i.freeze_quantity else quantity
    result: dict[str, object] = {
        "lots": whole,
        "quantity": quantity,
        "rounded_by": quantity - wanted,
    }
    lines = [f"{wanted} units -> {whole} lots of {lot} = {quantity} units"]
    findings = []
    if i.freeze_quantity and biggest == 0:
        raise refuse(
            "lots",
            f"`freeze_quantity`: {i.freeze_quantity} is less than one lot of {lot} — send the "
            "instrument's own freeze_quantity",
        )
    if i.split == "orders" or quantity <= biggest:
        slices = slices_of(quantity, biggest) if quantity else []
        result["slices"] = slices
        if len(slices) > 1:
            lines.append(
                f"{len(slices)} orders above the freeze quantity {i.freeze_quantity}: "
                + " + ".join(str(s) for s in slices)
            )
    else:
        legs = max(MIN_ICEBERG_LEGS, -(-quantity // biggest))
        slices = _even(whole, legs, lot)
        result.update(slices=slices, iceberg_legs=legs, iceberg_quantity=max(slices))
        lines.append(
            f"one iceberg order: {legs} legs of at most {max(slices)} units: "
            + " + ".join(str(s) for s in slices)
        )
        if legs > MAX_ICEBERG_LEGS:
            findings.append(
                f"{legs} legs is above the iceberg limit of {MAX_ICEBERG_LEGS}: place several "
                "iceberg orders or separate orders"
            )
    result["findings"] = findings
    return Answer(
        "lots",
        i.model_dump(),
        result,
        assumptions=("a slice may equal the freeze quantity; above it the exchange rejects",)
        if i.freeze_quantity
        else (),
        roundings=tuple(roundings),
        lines=tuple(lines + findings),
    )


def slices_of(quantity: int, biggest: int) -> list[int]:
    """Orders of ``biggest`` units (a whole number of lots) and one for the rest."""
    full, rest = divmod(quantity, biggest)
    return [biggest] * full + ([rest] if rest else [])


def _even(lots: int, legs: int, lot: int) -> list[int]:
    """``lots`` spread over ``legs`` as evenly as whole lots allow, larger legs first."""
    base, extra = divmod(lots, legs)
    return [(base + (1 if n < extra else 0)) * lot for n in range(legs)]


def is_lot_multiple(quantity: int, lot: int) -> bool:
    return quantity % lot == 0
