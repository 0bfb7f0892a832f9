"""One order request as the place call carries it: read by the handlers, checked by the
order rules (:mod:`.order_rules`), placed by the engine, so that none of them imports another
for it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OrderRequest:
    """One order as the place call carries it (gokiteconnect ``OrderParams``): what the
    handler read from the tool's arguments, the GTT or the ATO alert, and what the engine
    checks and places. ``None`` (or an empty text, a zero quantity) is a parameter not
    sent."""

    variety: str
    exchange: str
    tradingsymbol: str
    transaction_type: str
    quantity: int
    product: str
    order_type: str
    price: float | None = None
    validity: str | None = None
    validity_ttl: int | None = None
    disclosed_quantity: int | None = None
    trigger_price: float | None = None
    iceberg_legs: int | None = None
    iceberg_quantity: int | None = None
    auction_number: str | None = None
    tag: str | None = None
    market_protection: float | None = None
