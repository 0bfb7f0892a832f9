"""The simulation's answers, typed as Kite Connect's REST objects (issue 41 §5): what
gokiteconnect decodes into its structs (``Order``, ``Trade``, ``OrderResponse``, the GTT
response; zerodha/gokiteconnect@621645de orders.go and gtt.go) before the adapter
(:mod:`kite_skills.sandbox.gotypes`) marshals them as the Kite MCP server does."""

from __future__ import annotations

from typing import Any, TypedDict


class OrderRow(TypedDict):
    """One order of the book, or one row of its history (Kite's order object)."""

    placed_by: str
    order_id: str
    exchange_order_id: str | None
    parent_order_id: str | None
    status: str
    status_message: str | None
    status_message_raw: str | None
    order_timestamp: str
    exchange_update_timestamp: str | None
    exchange_timestamp: str | None
    variety: str
    modified: bool
    exchange: str
    tradingsymbol: str
    instrument_token: int
    order_type: str
    transaction_type: str
    validity: str
    validity_ttl: int
    product: str
    quantity: int
    disclosed_quantity: int
    price: float
    trigger_price: float
    average_price: float
    filled_quantity: int
    pending_quantity: int
    cancelled_quantity: int
    market_protection: float
    meta: dict[str, Any]
    tag: str | None
    tags: list[str]
    guid: str
    auction_number: str
    account_id: str


class TradeRow(TypedDict):
    """One fill (Kite's trade object)."""

    trade_id: str
    order_id: str
    exchange: str
    tradingsymbol: str
    instrument_token: int
    product: str
    average_price: float
    quantity: int
    exchange_order_id: str | None
    transaction_type: str
    fill_timestamp: str
    order_timestamp: str
    exchange_timestamp: str


class OrderResponse(TypedDict):
    """The answer to place, modify and cancel."""

    order_id: str


class GttResponse(TypedDict):
    """The answer to a GTT's place, modify and delete."""

    trigger_id: int
