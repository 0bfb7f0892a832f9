"""The simulation's answers, typed as Kite Connect's REST objects (issue 41 §5): what
gokiteconnect decodes into its structs before the adapter (:mod:`kite_skills.sandbox.gotypes`)
marshals them as the Kite MCP server does (zerodha/gokiteconnect@621645de: orders.go
``Order``, ``Trade``, ``OrderResponse``; portfolio.go ``Holding``, ``HoldingsSummary``,
``Position``, ``Positions``; user.go ``UserProfile``; margins.go ``Margins``,
``AvailableMargins``, ``UsedMargins``, ``AllMargins``; market.go ``Quote``, ``QuoteOHLC``,
``QuoteLTP``, ``OHLC``, ``DepthItem``, ``HistoricalData``; gtt.go ``GTT``, ``GTTResponse``;
alerts.go ``Alert``; margins.go ``OrderMargins``, ``Charges``, ``GST``, ``PNL``,
``BasketMargins``; mutualfunds.go ``MFHolding``).
Each lists the keys the simulation fills, which are the REST object's (the kiteconnect-mocks
fixture's) keys; the adapter takes the Go struct's fields from them."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


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


class ProfileMeta(TypedDict):
    demat_consent: str


class Profile(TypedDict):
    """``UserProfile`` (kiteconnect-mocks profile.json)."""

    user_id: str
    user_type: str
    email: str
    user_name: str
    user_shortname: str
    broker: str
    exchanges: list[str]
    products: list[str]
    order_types: list[str]
    avatar_url: str | None
    meta: ProfileMeta


class AvailableMargins(TypedDict):
    adhoc_margin: float
    cash: float
    opening_balance: float
    live_balance: float
    collateral: float
    intraday_payin: float


class UsedMargins(TypedDict):
    debits: float
    exposure: float
    m2m_realised: float
    m2m_unrealised: float
    option_premium: float
    payout: float
    span: float
    holding_sales: float
    turnover: float
    liquid_collateral: float
    stock_collateral: float
    delivery: float


class Margins(TypedDict):
    """One segment's ``Margins`` (kiteconnect-mocks margins_equity.json)."""

    enabled: bool
    net: float
    available: AvailableMargins
    utilised: UsedMargins


class AllMargins(TypedDict):
    equity: Margins
    commodity: Margins


class MtfHolding(TypedDict):
    quantity: int
    used_quantity: int
    average_price: float
    value: float
    initial_margin: float


class HoldingRow(TypedDict):
    """``Holding`` (kiteconnect-mocks holdings.json)."""

    tradingsymbol: str
    exchange: str
    instrument_token: int
    isin: str
    product: str
    price: float
    quantity: int
    used_quantity: int
    t1_quantity: int
    realised_quantity: int
    authorised_quantity: int
    authorised_date: str
    authorisation: dict[str, Any]
    opening_quantity: int
    short_quantity: int
    collateral_quantity: int
    collateral_type: str
    discrepancy: bool
    average_price: float
    last_price: float
    close_price: float
    pnl: float
    day_change: float
    day_change_percentage: float
    mtf: MtfHolding


class HoldingCompact(TypedDict):
    """kiteconnect-mocks holdings_compact.json."""

    exchange: str
    tradingsymbol: str
    instrument_token: int
    t1_quantity: int
    quantity: int


class HoldingsSummary(TypedDict):
    """``HoldingsSummary`` (kiteconnect-mocks holdings_summary.json)."""

    total_pnl: float
    total_pnl_percent: float
    today_pnl: float
    today_pnl_percent: float
    invested_amount: float
    current_value: float


class PositionRow(TypedDict):
    """``Position`` (kiteconnect-mocks positions.json)."""

    tradingsymbol: str
    exchange: str
    instrument_token: int
    product: str
    quantity: int
    overnight_quantity: int
    multiplier: float
    average_price: float
    close_price: float
    last_price: float
    value: float
    pnl: float
    m2m: float
    unrealised: float
    realised: float
    buy_quantity: int
    buy_price: float
    buy_value: float
    buy_m2m: float
    sell_quantity: int
    sell_price: float
    sell_value: float
    sell_m2m: float
    day_buy_quantity: int
    day_buy_price: float
    day_buy_value: float
    day_sell_quantity: int
    day_sell_price: float
    day_sell_value: float


class Positions(TypedDict):
    net: list[PositionRow]
    day: list[PositionRow]


class Ohlc(TypedDict):
    open: float
    high: float
    low: float
    close: float


class DepthItem(TypedDict):
    price: float
    quantity: int
    orders: int


class Depth(TypedDict):
    buy: list[DepthItem]
    sell: list[DepthItem]


class QuoteLtp(TypedDict):
    """``QuoteLTP`` (kiteconnect-mocks ltp.json)."""

    instrument_token: int
    last_price: float


class QuoteOhlc(TypedDict):
    """``QuoteOHLC`` (kiteconnect-mocks ohlc.json)."""

    instrument_token: int
    last_price: float
    ohlc: Ohlc


class Quote(TypedDict):
    """``Quote`` (kiteconnect-mocks quote.json). An index's quote has no trade, depth, OI or
    circuit fields."""

    instrument_token: int
    timestamp: str
    last_trade_time: NotRequired[str | None]
    last_price: float
    last_quantity: NotRequired[int]
    buy_quantity: NotRequired[int]
    sell_quantity: NotRequired[int]
    volume: NotRequired[int]
    average_price: NotRequired[float]
    oi: NotRequired[int]
    oi_day_high: NotRequired[int]
    oi_day_low: NotRequired[int]
    net_change: float
    lower_circuit_limit: NotRequired[float]
    upper_circuit_limit: NotRequired[float]
    ohlc: Ohlc
    depth: NotRequired[Depth]


class GttCondition(TypedDict):
    exchange: str
    last_price: float
    tradingsymbol: str
    trigger_values: list[float]
    instrument_token: int


class OrderResult(TypedDict):
    order_id: str
    rejection_reason: str
    status: str


class GttLegResult(TypedDict):
    """What a GTT leg's firing left: the order it placed (or why it was refused)."""

    account_id: str
    exchange: str
    tradingsymbol: str
    validity: str
    product: str
    order_type: str
    transaction_type: str
    quantity: int
    price: float
    meta: dict[str, Any]
    timestamp: str
    triggered_at: float
    order_result: OrderResult


class GttLeg(TypedDict):
    exchange: str
    tradingsymbol: str
    product: str
    order_type: str
    transaction_type: str
    quantity: int
    price: float
    result: GttLegResult | None


class GttRow(TypedDict):
    """``GTT`` (kiteconnect-mocks gtt_get_order.json)."""

    id: int
    user_id: str
    parent_trigger: None
    type: str
    created_at: str
    updated_at: str
    expires_at: str
    status: str
    condition: GttCondition
    orders: list[GttLeg]
    meta: dict[str, Any]


class AlertRow(TypedDict):
    """``Alert`` (kiteconnect-mocks alerts_get_one.json; an ATO alert adds its basket)."""

    type: str
    user_id: str
    uuid: str
    name: str
    status: str
    disabled_reason: str
    lhs_attribute: str
    lhs_exchange: str
    lhs_tradingsymbol: str
    operator: str
    rhs_type: str
    rhs_attribute: str
    rhs_exchange: str
    rhs_tradingsymbol: str
    rhs_constant: float
    alert_count: int
    created_at: str
    updated_at: str
    basket: NotRequired[dict[str, Any]]


class Candle(TypedDict):
    """One historical candle (market.go ``HistoricalData``); ``oi`` when asked for."""

    date: str
    open: float
    high: float
    low: float
    close: float
    volume: int
    oi: NotRequired[int]


class Gst(TypedDict):
    igst: float
    cgst: float
    sgst: float
    total: float


class Charges(TypedDict):
    transaction_tax: float
    transaction_tax_type: str
    exchange_turnover_charge: float
    sebi_turnover_charge: float
    brokerage: float
    stamp_duty: float
    gst: Gst
    total: float


class MarginPnl(TypedDict):
    realised: float
    unrealised: float


class OrderMargins(TypedDict):
    """The margin one order needs (margins.go ``OrderMargins``)."""

    type: str
    tradingsymbol: str
    exchange: str
    span: float
    exposure: float
    option_premium: float
    additional: float
    bo: float
    cash: float
    var: float
    pnl: MarginPnl
    leverage: float
    charges: Charges
    total: float


class BasketTotal(TypedDict):
    """A basket's sum (``OrderMargins`` again; its charges are the first order's, and an
    empty basket has none: ``{}``)."""

    type: str
    tradingsymbol: str
    exchange: str
    additional: float
    bo: float
    cash: float
    var: float
    pnl: MarginPnl
    leverage: float
    charges: Charges | dict[str, float]
    span: float
    exposure: float
    option_premium: float
    total: float


class BasketMargins(TypedDict):
    """A basket's margins, before and after it (margins.go ``BasketMargins``)."""

    initial: BasketTotal
    final: BasketTotal
    orders: list[OrderMargins]
    charges: Charges | dict[str, float]


class MfHolding(TypedDict):
    """One mutual-fund holding (mutualfunds.go ``MFHolding``)."""

    folio: str
    fund: str
    tradingsymbol: str
    average_price: float
    last_price: float
    last_price_date: str
    pledged_quantity: float
    pnl: float
    quantity: float
