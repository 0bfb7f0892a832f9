"""Which tool calls are writes, by the tool names of all three Kite MCP generations, and what a
write asks for. A pure module: no MCP, no I/O.

The generations (kite_skills/kite_schemas/): ``legacy-oldest`` and ``legacy`` name one tool per
action (``place_order``, ``delete_gtt_order``; ``legacy`` adds ``alerts`` with a ``mode``);
``grouped`` has seven tools with a ``mode`` (``orders`` ``place``, ``gtt`` ``delete``). A call of
a tool that can write, with a mode that is not one of its known reads, is a write: an unknown
mode is judged, never waved through.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

PLACE: Final = "place"
MODIFY: Final = "modify"
CANCEL: Final = "cancel"
GTT_PLACE: Final = "gtt-place"
GTT_MODIFY: Final = "gtt-modify"
GTT_DELETE: Final = "gtt-delete"
ALERT: Final = "alert"  # create, modify or delete a price alert
UNKNOWN: Final = "unknown"  # a mode the guard does not know on a tool that writes

# One tool, one action (legacy-oldest and legacy).
BY_TOOL: Final[dict[str, str]] = {
    "place_order": PLACE,
    "modify_order": MODIFY,
    "cancel_order": CANCEL,
    "place_gtt_order": GTT_PLACE,
    "modify_gtt_order": GTT_MODIFY,
    "delete_gtt_order": GTT_DELETE,
}
# Tools with a mode (grouped; legacy's ``alerts``): the modes that write, and those that read.
BY_MODE: Final[dict[str, dict[str, str]]] = {
    "orders": {"place": PLACE, "modify": MODIFY, "cancel": CANCEL},
    "gtt": {"place": GTT_PLACE, "modify": GTT_MODIFY, "delete": GTT_DELETE},
    "alerts": {"create": ALERT, "modify": ALERT, "delete": ALERT},
}
READ_MODES: Final[dict[str, frozenset[str]]] = {
    "orders": frozenset({"list", "history", "trades", "all_trades"}),
    "gtt": frozenset({"list"}),
    "alerts": frozenset({"get"}),
}
# Writes that open or enlarge a position: the per-order, per-day and watch limits apply.
ORDERS: Final = frozenset({PLACE, MODIFY, GTT_PLACE, GTT_MODIFY})


@dataclass(frozen=True)
class Write:
    """A write as the guard judges it: the action and the order's fields as given (None where
    the call leaves one out; a modify names its order, whose other fields are in the book)."""

    tool: str
    action: str
    mode: str | None
    exchange: str | None
    tradingsymbol: str | None
    side: str | None
    quantity: float | None
    price: float | None
    trigger_price: float | None
    product: str | None
    order_type: str | None
    order_id: str | None

    @property
    def instrument(self) -> str | None:
        if self.exchange and self.tradingsymbol:
            return f"{self.exchange}:{self.tradingsymbol}"
        return None

    def describe(self) -> str:
        parts = [self.action]
        if self.side:
            parts.append(self.side)
        if self.quantity is not None:
            parts.append(f"{self.quantity:g}")
        if self.instrument:
            parts.append(self.instrument)
        if self.price:
            parts.append(f"at {self.price:g}")
        if self.order_id:
            parts.append(f"order {self.order_id}")
        return " ".join(parts)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _text(value: Any) -> str | None:
    return value.strip().upper() if isinstance(value, str) and value.strip() else None


def action_of(tool: str, arguments: dict[str, Any]) -> str | None:
    """The write a call makes, or None for a read."""
    if tool in BY_TOOL:
        return BY_TOOL[tool]
    modes = BY_MODE.get(tool)
    if modes is None:
        return None
    mode = arguments.get("mode")
    if isinstance(mode, str) and mode in READ_MODES[tool]:
        return None
    return modes.get(mode, UNKNOWN) if isinstance(mode, str) else UNKNOWN


def classify(tool: str, arguments: dict[str, Any]) -> Write | None:
    """The write this call makes (None: a read, passed straight through)."""
    action = action_of(tool, arguments)
    if action is None:
        return None
    gtt = action in (GTT_PLACE, GTT_MODIFY)
    quantity = _number(arguments.get("quantity"))
    price = _number(arguments.get("limit_price" if gtt else "price"))
    if gtt and quantity is None:  # a two-leg GTT: the larger leg is what it can trade
        legs = [_number(arguments.get(f"{s}_quantity")) for s in ("upper", "lower")]
        quantity = max((q for q in legs if q is not None), default=None)
        prices = [_number(arguments.get(f"{s}_limit_price")) for s in ("upper", "lower")]
        price = max((p for p in prices if p is not None), default=None)
    order_id = arguments.get("trigger_id" if action in (GTT_MODIFY, GTT_DELETE) else "order_id")
    mode = arguments.get("mode")
    return Write(
        tool=tool,
        action=action,
        mode=mode if isinstance(mode, str) else None,
        exchange=_text(arguments.get("exchange")),
        tradingsymbol=_text(arguments.get("tradingsymbol")),
        side=_text(arguments.get("transaction_type")),
        quantity=quantity,
        price=price,
        trigger_price=_number(arguments.get("trigger_price" if not gtt else "trigger_value")),
        product=_text(arguments.get("product")),
        order_type="LIMIT" if gtt else _text(arguments.get("order_type")),
        order_id=str(order_id) if isinstance(order_id, str | int) and order_id != "" else None,
    )
