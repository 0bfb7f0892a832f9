"""GTT triggers (rules.md §8): validation on place/modify, firing on ticks, their orders."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from . import rules
from .clock import kite_ts
from .instruments import Instrument
from .order_request import OrderRequest
from .order_rules import GTT_LEG_RULES, GTT_RULES, GTT_TICK_RULES, GttCase, OrderCase, check
from .responses import GttLeg, GttLegResult, GttRow


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
    results: list[GttLegResult | None] = field(default_factory=list)

    def row(self) -> GttRow:
        orders: list[GttLeg] = []
        for i, leg in enumerate(self.orders):
            item: GttLeg = {
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
    now: datetime,
) -> list[dict[str, Any]]:
    """Check a GTT definition against Kite's GTT rules (:mod:`.order_rules`); returns its
    normalised legs. Raises KiteConnectError."""
    legs = [
        OrderRequest(
            variety="regular",
            exchange=inst.exchange,
            tradingsymbol=inst.tradingsymbol,
            transaction_type=str(raw.get("transaction_type") or ""),
            quantity=int(raw.get("quantity") or 0),
            product=str(raw.get("product") or "CNC"),
            order_type="LIMIT",
            price=float(raw.get("price") or 0),
        )
        for raw in orders
    ]
    case = GttCase(
        trigger_type,
        tuple(float(v) for v in trigger_values),
        last_price,
        len(orders),
        tuple(float(leg.price or 0.0) for leg in legs),
        inst.tick_size,
    )
    check(GTT_RULES, case)
    for leg in legs:
        check(GTT_LEG_RULES, OrderCase(leg, inst, now, leg.variety))
    check(GTT_TICK_RULES, case)
    return [
        {
            "transaction_type": leg.transaction_type,
            "quantity": leg.quantity,
            "price": float(leg.price or 0.0),
            "product": leg.product,
            "order_type": "LIMIT",
        }
        for leg in legs
    ]


def too_close(values: list[float], ltp: float) -> bool:
    """A GTT placed within 0.25 % of the LTP is disabled (rules.md §8, support page
    gtts-disabled-cancelled-expired)."""
    return any(abs(v - ltp) / ltp * 100 < rules.GTT_BAND for v in values) if ltp else False
