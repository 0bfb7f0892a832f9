"""Kite's order rules as the simulation enforces them: the texts, with their sources (each
text is one rule's row in :mod:`.order_rules`, which holds the checks).

Sources are rules.md sections (/work/shared/reference/kite-mcp/rules.md in the project's shared
reference) and the URLs they cite. Texts marked UNVERIFIED were not found in any source: they are
plausible wording written for the simulation, kept in one place so that a real text can replace
them.
"""

from __future__ import annotations

import re

# §1 tick size (exchange rejection). Source: https://kite.trade/forum/discussion/9124/
TRIGGER_TICK = "16316 : The trigger price is not a multiple of tick size"
# UNVERIFIED: the price counterpart of the trigger text above.
PRICE_TICK = "16317 : The price is not a multiple of tick size"
# UNVERIFIED wording; the rule (quantity a multiple of lot size) is from the same forum thread.
LOT_MULTIPLE = "Quantity should be a multiple of lot size {lot}."

# §2 freeze quantity. Source: https://kite.trade/forum/discussion/comment/42709/
FREEZE = (
    "The order quantity {qty} ({lots} lots) is higher than the maximum quantity of "
    "{freeze} ({freeze_lots} lots) allowed by the exchanges. Please reduce the order "
    "quantity or use iceberg orders."
)
# §1 Kite pre-validation blocks quantity > 1,00,000 shares (kite-order-rejections page).
# UNVERIFIED wording.
EQUITY_MAX = (
    "Order quantity {qty} is higher than the maximum of 100000 shares allowed per "
    "order. Please reduce the order quantity or use iceberg orders."
)
# §2 iceberg: legs 2..50 (https://kite.trade/forum/discussion/comment/46708/ and /51724).
# UNVERIFIED wording.
ICEBERG_LEGS = "Iceberg legs should be between 2 and 50."
ICEBERG_QTY = (
    "Iceberg quantity should be at least the total quantity divided by the number of "
    "legs, and a multiple of the lot size."
)  # UNVERIFIED
# rules.md §2/§6: AMOs cannot be iceberg. `variety` is one value, so an iceberg is never an
# AMO: outside market hours it is refused as any regular order is (MARKET_CLOSED).

# §1 circuit limits: Kite pre-validation blocks prices beyond circuit limits
# (https://support.zerodha.com/category/console/portfolio/holdings/articles/kite-order-rejections).
# UNVERIFIED wording, modelled on the GTT rejection reason "...lower than the current lower
# circuit limit..." (kite-domain.md §6) and the trigger template of §1.
CIRCUIT_LOW = (
    "Your order price is lower than the current lower circuit limit of {limit}. "
    "Place an order within the daily range."
)
CIRCUIT_HIGH = (
    "Your order price is higher than the current upper circuit limit of {limit}. "
    "Place an order within the daily range."
)
# §1 trigger vs circuit. Source: https://kite.trade/forum/discussion/3141/ (template).
TRIGGER_CIRCUIT_SELL = (
    "Trigger price for stoploss sell orders cannot be below the lower "
    "circuit price. Please try placing the order with trigger price above "
    "{limit}."
)
TRIGGER_CIRCUIT_BUY = (
    "Trigger price for stoploss buy orders cannot be above the upper circuit "
    "price. Please try placing the order with trigger price below {limit}."
)
# §1 trigger side vs LTP (kite-order-rejections page). UNVERIFIED wording.
TRIGGER_SIDE_BUY = (
    "Trigger price for stoploss buy orders should be higher than the last traded price {ltp}."
)
TRIGGER_SIDE_SELL = (
    "Trigger price for stoploss sell orders should be lower than the last traded price {ltp}."
)

# §3 market protection mandatory from 1 April 2026.
# Source: https://tradingqna.com/t/api-market-protection-parameter-clarification-needed-on-
# correct-usage/193504 (text); https://kite.trade/forum/discussion/comment/52316 (rule).
NO_PROTECTION = (
    "Market orders without market protection are not allowed via API. Please set "
    "market protection or use a Limit order."
)
AUTO_PROTECTION_PERCENT = 3.0  # -1 = auto; ~3 % reported by a user (rules.md §3)

# §4 SL-M barred on NSE options (16052, https://sasonline.in/bulletin.php?p=388) and on all BSE
# segments (https://upstox.com/?p=46531). The BSE text is UNVERIFIED (same exchange code used).
SLM_BARRED = "16052 : Function not available"

# §1 Kite pre-validation blocks market orders in stock options, and market AMOs in index options
# (https://support.zerodha.com/category/console/portfolio/holdings/articles/kite-order-rejections).
# UNVERIFIED wording.
STOCK_OPTION_MARKET = (
    "Market orders are blocked for stock option contracts. Place a limit order instead."
)
INDEX_OPTION_MARKET_AMO = (
    "Market orders cannot be placed as AMO for index option contracts. Place a limit order instead."
)

# §5 fresh MIS after the auto square-off time. UNVERIFIED wording (rules.md: not found).
MIS_BLOCKED = (
    "Fresh MIS orders are blocked after the auto square-off time ({time}). Place "
    "the order as CNC or NRML instead."
)
SQUARE_OFF_MESSAGE = "Auto square-off by the risk management team."  # UNVERIFIED
SQUARE_OFF_CHARGE = 59.0  # ₹50 + 18 % GST per order squared off (rules.md §5)

# §6 session windows. "Markets are closed" text: UNVERIFIED (widely quoted on the Kite forum).
MARKET_CLOSED = "Markets are closed right now. Use GTT for placing long standing orders instead."
AMO_DURING_MARKET = (
    "AMO orders can be placed only outside market hours ({window}). Place a "
    "regular order instead."
)  # UNVERIFIED; rule: kite-order-rejections page
AMO_RELEASED = (
    "This AMO has been sent to the exchange; modify or cancel it with variety "
    "regular."
)  # UNVERIFIED; rule: https://kite.trade/forum/discussion/comment/40302/
AMO_WINDOWS = {
    "NSE": "4:00 PM to 8:58 AM",
    "BSE": "4:00 PM to 8:58 AM",
    "NFO": "3:45 PM to 9:10 AM",
    "BFO": "3:45 PM to 9:10 AM",
    "MCX": "after the close to 8:58 AM",
}

# §7 25 modifications. Source: https://kite.trade/forum/discussion/9201/maximum-order-modifications
MAX_MODIFICATIONS = 25
TOO_MANY_MODIFICATIONS = "Maximum allowed order modifications exceeded."

# §10 funds. Source: kiteconnect-mocks orders.json (status_message of a REJECTED order).
INSUFFICIENT_FUNDS = (
    "Insufficient funds. Required margin is {required:.2f} but available "
    "margin is {available:.2f}. Check the orderbook for open orders."
)
# The same rejection's status_message_raw: the RMS's own text (kiteconnect-mocks orders.json
# @4a069d12778c226a6afaca205928dd391bde6ff5, order 220524001859672; the trailing space is its).
RMS_MARGIN_RAW = (
    "RMS:Margin Exceeds,Required:{required:.2f}, Available:{available:.2f} for entity "
    "account-{user_id} across exchange across segment across product "
)
# §10 holdings. Source: https://kite.trade/forum/discussion/comment/43891/ (user-quoted; the
# quoted text ends in "Check the orderbook....").
INSUFFICIENT_HOLDINGS = (
    "Insufficient stock holding or there are pending sell orders for this "
    "stock. Check the orderbook."
)
# §11 TPIN/DDPI: HTTP 428 for un-authorised quantity. Text: user report
# (https://glama.ai/mcp/servers/techfreakworm/kite-connect-mcp/tools/authorise_holdings).
NEEDS_AUTHORISATION = "{qty} quantity needs authorisation at depository"

# Input texts (all UNVERIFIED wording; Kite answers InputException for each).
BAD_TAG = "Invalid `tag`. A tag has only letters and digits, at most 20 characters."
UNKNOWN_INSTRUMENT = "Invalid `tradingsymbol`."
BAD_VARIETY = "Invalid `variety`."
BAD_PARAM = "Invalid `{name}`."
NEEDS_PRICE = "Invalid `price`. Limit and SL orders need a price."
NEEDS_TRIGGER = "Invalid `trigger_price`. SL and SL-M orders need a trigger price."
BAD_QUANTITY = "Invalid `quantity`."
DISCLOSED_QTY = "Disclosed quantity cannot be more than the order quantity."
NO_SUCH_ORDER = "Couldn't find that `order_id`."
NOT_MODIFIABLE = "Order cannot be modified as it is {status}."
NOT_CANCELLABLE = "Order cannot be cancelled as it is {status}."
BELOW_FILLED = "Quantity cannot be less than the filled quantity {filled}."
CO_UNSUPPORTED = (
    "Cover orders are not simulated in the sandbox; use a regular order with a "
    "separate stop-loss."
)  # sandbox limitation, not a Kite text
NO_AUCTION = "Invalid `auction_number`. There is no auction running for this instrument."
NO_POSITION_TO_CONVERT = "Insufficient position quantity to convert."

# §8 GTT. Sources: https://kite.trade/forum/discussion/comment/45755 (two OCO texts).
GTT_SECOND_BELOW = (
    "Trigger cannot be created with the second trigger price less than the last price."
)
GTT_EQUAL_LAST = "Trigger cannot be created with one of the trigger values equal to the last price."
GTT_FIRST_ABOVE = (
    "Trigger cannot be created with the first trigger price more than the last "
    "price."
)  # UNVERIFIED counterpart of the text above
GTT_PRODUCT = (
    "GTT can be used only for CNC orders in the equity cash segment and NRML orders "
    "in equity derivatives."
)  # UNVERIFIED wording; rule: https://zerodha.com/tos/gtt
GTT_MAX_ACTIVE = 250
GTT_TOO_MANY = "You can have a maximum of 250 active GTTs."  # UNVERIFIED wording
GTT_NOT_FOUND = "Trigger not found."  # UNVERIFIED
GTT_NOT_ACTIVE = "Trigger is not active; only active triggers can be modified or deleted."  # UNV.
GTT_BAND = 0.25  # percent: a GTT placed closer than this to the LTP is disabled (rules.md §8)
GTT_TICK = "Trigger values and prices must be multiples of the tick size {tick}."  # UNVERIFIED

# Alerts: at most 200 including disabled ones (kite-domain.md §6). UNVERIFIED texts.
ALERT_MAX = 200
ALERT_TOO_MANY = "You can have a maximum of 200 alerts."
ALERT_NOT_FOUND = "Alert not found."
ATO_NEEDS_BASKET = "Invalid `basket`. An ATO alert needs basket items."

_TAG = re.compile(r"[A-Za-z0-9]{1,20}")


def tag_ok(tag: str) -> bool:
    """Tags: letters and digits only, at most 20 characters; longer ones are rejected, not
    truncated (kite-domain.md §2, Kite forum comments 52940/52991)."""
    return bool(_TAG.fullmatch(tag))
