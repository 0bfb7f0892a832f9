"""GTT triggers (rules.md §8): validation on place/modify, firing on ticks, their orders."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from . import rules
from .clock import kite_ts
from .errors import KiteConnectError, input_error
from .instruments import Instrument
from .market import on_tick


@dataclass
class Gtt:
    id: int
    inst: Instrument
    type: str
    trigger_values: list[float]
    last_price: float
    orders: list[dict[str, Any]]
    created_at: datetime
    updated_at: datetime
    status: str = "active"
    user_id: str = "ZS0001"
    meta: dict[str, Any] | None = None
    results: list[dict[str, Any] | None] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        orders = []
        for i, leg in enumerate(self.orders):
            item = {
                "exchange": self.inst.exchange,
                "tradingsymbol": self.inst.tradingsymbol,
                "product": leg["product"],
                "order_type": "LIMIT",
                "transaction_type": leg["transaction_type"],
                "quantity": leg["quantity"],
                "price": leg["price"],
                "result": None,
            }
            if i < len(self.results):
                item["result"] = self.results[i]
            orders.append(item)
        return {
            "id": self.id,
            "user_id": self.user_id,
            "parent_trigger": None,
            "type": self.type,
            "created_at": kite_ts(self.created_at),
            "updated_at": kite_ts(self.updated_at),
            "expires_at": kite_ts(self.created_at + timedelta(days=365)),
            "status": self.status,
            "condition": {
                "exchange": self.inst.exchange,
                "last_price": self.last_price,
                "tradingsymbol": self.inst.tradingsymbol,
                "trigger_values": list(self.trigger_values),
                "instrument_token": self.inst.instrument_token,
            },
            "orders": orders,
            "meta": self.meta or {},
        }

    def leg_hit(self, price: float) -> int | None:
        """Index of the leg whose trigger ``price`` crossed, else None."""
        if self.type == "two-leg":
            lower, upper = self.trigger_values
            if price <= lower:
                return 0
            if price >= upper:
                return 1
            return None
        trigger = self.trigger_values[0]
        if trigger >= self.last_price:
            return 0 if price >= trigger else None
        return 0 if price <= trigger else None


def validate(
    inst: Instrument,
    trigger_type: str,
    trigger_values: list[float],
    last_price: float,
    orders: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """Check a GTT definition; returns its normalised legs. Raises KiteConnectError."""
    if trigger_type not in ("single", "two-leg"):
        raise input_error(rules.BAD_PARAM.format(name="type"))
    want = 1 if trigger_type == "single" else 2
    if len(trigger_values) != want or len(orders) != want:
        raise input_error(rules.BAD_PARAM.format(name="trigger_values"))
    values = [float(v) for v in trigger_values]
    # rules.md §8 (https://kite.trade/forum/discussion/comment/45755): the two OCO texts.
    if any(abs(v - last_price) < 1e-9 for v in values):
        raise input_error(rules.GTT_EQUAL_LAST)
    if trigger_type == "two-leg":
        if values[1] < last_price:
            raise input_error(rules.GTT_SECOND_BELOW)
        if values[0] > last_price:
            raise input_error(rules.GTT_FIRST_ABOVE)
    legs: list[dict[str, Any]] = []
    for raw in orders:
        product = str(raw.get("product") or "CNC")
        # https://zerodha.com/tos/gtt: CNC in NSE/BSE cash, NRML in NSE F&O.
        if (inst.is_equity and product != "CNC") or (inst.is_derivative and product != "NRML"):
            raise input_error(rules.GTT_PRODUCT)
        price = float(raw.get("price") or 0)
        qty = int(raw.get("quantity") or 0)
        side = str(raw.get("transaction_type") or "")
        if side not in ("BUY", "SELL"):
            raise input_error(rules.BAD_PARAM.format(name="transaction_type"))
        if qty <= 0:
            raise input_error(rules.BAD_QUANTITY)
        legs.append(
            {
                "transaction_type": side,
                "quantity": qty,
                "price": price,
                "product": product,
                "order_type": "LIMIT",
            }
        )
    for value in [*values, *(leg["price"] for leg in legs)]:
        if not on_tick(value, inst.tick_size):
            raise input_error(rules.GTT_TICK.format(tick=f"{inst.tick_size:g}"))
    return legs


def too_close(values: list[float], ltp: float) -> bool:
    """A GTT placed within 0.25 % of the LTP is disabled (rules.md §8, support page
    gtts-disabled-cancelled-expired)."""
    return any(abs(v - ltp) / ltp * 100 < rules.GTT_BAND for v in values) if ltp else False


def not_found() -> KiteConnectError:
    return input_error(rules.GTT_NOT_FOUND)
