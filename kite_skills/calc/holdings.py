"""``sellable``: from a holdings row, the open SELL orders, the active SELL GTTs and
``demat_consent``: what can be sold now, what can back a sell GTT, the BTST part, whether a
TPIN is needed, and which reading of ``quantity`` against ``t1_quantity`` the row shows
(orders/reference/selling-held-shares.md; kite-domain §0: decided per row)."""

from __future__ import annotations

from pydantic import Field

from ._common import Answer, Inputs
from ._validate import refuse


def standing_authorisation(demat_consent: str) -> bool:
    """Whether the account's demat sells need no same-day TPIN (issue 41 §3). Kite documents
    only ``empty``, ``consent`` and ``physical`` (kite.trade/docs/connect/v3/user, profile
    ``meta.demat_consent``). ``physical`` is a POA on file: a standing authorisation.
    ``consent`` is Zerodha's online DIS consent, which authorises each sell when it is placed
    (zerodha.com/tos/demat-consent; support "how-do-i-fill-up-the-poa-form": with consent "at
    the time of placing the sell order you will need to authorize"), and ``empty`` is no
    authorisation at all: both need a TPIN each day unless ``authorised_quantity`` covers the
    sell. An unknown value is treated as no authorisation (catalog review 4 X5)."""
    return demat_consent == "physical"


class HoldingRow(Inputs):
    tradingsymbol: str = Field(default="", description="the row's `tradingsymbol`")
    quantity: int = Field(ge=0, description="the row's `quantity`")
    t1_quantity: int = Field(default=0, ge=0, description="the row's `t1_quantity`")
    realised_quantity: int = Field(ge=0, description="the row's `realised_quantity`")
    used_quantity: int = Field(default=0, ge=0, description="the row's `used_quantity`")
    authorised_quantity: int = Field(
        default=0, ge=0, description="the row's `authorised_quantity` (TPIN-authorised today)"
    )
    collateral_quantity: int = Field(
        default=0, ge=0, description="the row's `collateral_quantity` (pledged)"
    )


class SellableInputs(Inputs):
    holding: HoldingRow = Field(description="the holdings row from `portfolio` mode `holdings`")
    open_sell_orders: int = Field(
        default=0,
        ge=0,
        description="units in today's open CNC SELL orders on the symbol (pending quantity)",
    )
    active_sell_gtts: int = Field(
        default=0, ge=0, description="units in the symbol's active SELL GTTs"
    )
    demat_consent: str = Field(
        description="`meta.demat_consent` from `portfolio` mode `profile` (empty, consent "
        "or physical)"
    )


def sellable(i: SellableInputs) -> Answer:
    h = i.holding
    if h.quantity == h.realised_quantity + h.t1_quantity and h.t1_quantity:
        reading = "includes_t1"
        words = f"quantity {h.quantity} = realised {h.realised_quantity} + T+1 {h.t1_quantity}"
    elif h.quantity == h.realised_quantity and h.t1_quantity:
        reading = "excludes_t1"
        words = (
            f"quantity {h.quantity} = realised {h.realised_quantity}; T+1 {h.t1_quantity} "
            "outside it"
        )
    elif not h.t1_quantity and h.quantity == h.realised_quantity:
        reading = "no_t1"
        words = f"no T+1 shares; quantity {h.quantity} = realised"
    else:
        raise refuse(
            "sellable",
            f"`holding`: quantity {h.quantity} is neither realised {h.realised_quantity} nor "
            f"realised + t1 {h.realised_quantity + h.t1_quantity} — read the row again; do "
            "not size a sell from it",
        )
    demat_free = max(0, h.realised_quantity - h.used_quantity - i.open_sell_orders)
    btst = h.t1_quantity
    gtt_free = max(0, demat_free - i.active_sell_gtts)
    standing = standing_authorisation(i.demat_consent)
    tpin = not standing and demat_free > h.authorised_quantity
    result = {
        "reading": reading,
        "sellable_now": demat_free + btst,
        "demat_sellable": demat_free,
        "btst": btst,
        "gtt_backable": gtt_free,
        "tpin_needed": tpin,
        "tpin_covers": h.authorised_quantity,
    }
    lines = [
        f"{h.tradingsymbol or 'holding'}: {words}",
        f"sellable now {demat_free + btst} (demat {demat_free}, BTST {btst}); a sell GTT can "
        f"cover {gtt_free}",
        "TPIN: "
        + (
            "not needed (demat_consent physical: POA on file)"
            if standing
            else f"needed today: {demat_free} to sell, {h.authorised_quantity} authorised "
            f"(demat_consent {i.demat_consent or 'empty'})"
            if tpin
            else f"covered: {h.authorised_quantity} authorised today"
        ),
    ]
    assumptions = [
        f"reading of the row: {reading} ({words})",
        "demat shares = realised_quantity − used_quantity − open SELL orders",
        "T+1 shares sell only as BTST, with the risk of short delivery; they cannot back a GTT",
        "only demat_consent physical is standing authorisation; any other value needs a "
        "same-day TPIN for what authorised_quantity does not cover",
    ]
    if h.collateral_quantity:
        assumptions.append(
            f"{h.collateral_quantity} pledged shares may sit outside quantity: unpledge "
            "before selling them"
        )
    return Answer("sellable", i.model_dump(), result, tuple(assumptions), (), tuple(lines))
