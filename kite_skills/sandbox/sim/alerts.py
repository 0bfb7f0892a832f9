"""Kite alerts (simple and ATO) over LastTradedPrice: create, fire on ticks, history."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .clock import kite_ts
from .instruments import Instrument
from .responses import AlertRow

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
    "==": operator.eq,
}


@dataclass
class Alert:
    uuid: str
    name: str
    type: str
    inst: Instrument
    operator: str
    rhs_type: str
    rhs_constant: float
    rhs_inst: Instrument | None
    basket: dict[str, Any] | None
    created_at: datetime
    updated_at: datetime
    status: str = "enabled"
    disabled_reason: str = ""
    alert_count: int = 0
    user_id: str = "ZS0001"
    armed: bool = True  # fires again only after the condition has been false
    history: list[dict[str, Any]] = field(default_factory=list)

    def row(self) -> AlertRow:
        row: AlertRow = {
            "type": self.type,
            "user_id": self.user_id,
            "uuid": self.uuid,
            "name": self.name,
            "status": self.status,
            "disabled_reason": self.disabled_reason,
            "lhs_attribute": "LastTradedPrice",
            "lhs_exchange": "INDICES" if self.inst.is_index else self.inst.exchange,
            "lhs_tradingsymbol": self.inst.tradingsymbol,
            "operator": self.operator,
            "rhs_type": self.rhs_type,
            "rhs_attribute": "LastTradedPrice" if self.rhs_inst else "",
            "rhs_exchange": (
                ("INDICES" if self.rhs_inst.is_index else self.rhs_inst.exchange)
                if self.rhs_inst
                else ""
            ),
            "rhs_tradingsymbol": self.rhs_inst.tradingsymbol if self.rhs_inst else "",
            "rhs_constant": self.rhs_constant,
            "alert_count": self.alert_count,
            "created_at": kite_ts(self.created_at),
            "updated_at": kite_ts(self.updated_at),
        }
        if self.basket is not None:
            row["basket"] = self.basket
        return row

    def holds(self, lhs: float, rhs: float) -> bool:
        return OPERATORS[self.operator](lhs, rhs)
