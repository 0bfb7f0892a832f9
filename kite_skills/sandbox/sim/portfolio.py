"""Holdings, positions (Day and Net books) and funds, kept up to date by the fills.

Margin model (an approximation; Kite's SPAN and exposure files are not modelled):
- equity CNC buy: the full value; equity MIS: 20 % of the value (5x intraday leverage);
- futures (NFO, MCX) and option sells: 12 % of the contract value (MCX 10 %), MIS the same as
  NRML (peak-margin rules);
- option buys: the premium (shown as utilised ``option_premium`` for today's buys);
- a short option paired with a long option of the same underlying and type blocks at most the
  pair's largest loss (``Engine._hedged_units``; issue 41 §2);
- the part of an order that closes an open position of the same product needs no margin.
``net`` (available margin) = opening balance + intraday pay-in + collateral + adhoc margin
  - margin blocked by open positions and open orders + M2M of futures and MIS positions
  + today's CNC and option cash flows (sales credit, purchases debit) - charges.
It already excludes what open orders block and includes realised and unrealised M2M
(kite-domain.md §0), so callers never subtract them again.
"""

from __future__ import annotations

from dataclasses import dataclass

from .instruments import Instrument
from .responses import PositionRow

MIS_EQUITY_RATE = 0.20
FUTURES_RATE = 0.12
MCX_RATE = 0.10


@dataclass
class Holding:
    inst: Instrument
    quantity: int
    t1_quantity: int
    realised_quantity: int
    used_quantity: int
    authorised_quantity: int
    authorised_date: str
    collateral_quantity: int
    collateral_type: str
    average_price: float
    opening_quantity: int
    sold_authorised: int = 0  # demat shares sold today against the TPIN authorisation
    sold_t1: int = 0  # T+1 shares sold today (BTST)

    def demat_free(self) -> int:
        """Shares in demat not yet sold today (realised less used)."""
        return max(self.realised_quantity - self.used_quantity + self.sold_t1, 0)

    def t1_free(self) -> int:
        return max(self.t1_quantity - self.sold_t1, 0)


@dataclass
class Position:
    inst: Instrument
    product: str
    overnight_quantity: int = 0
    overnight_price: float = 0.0
    day_buy_quantity: int = 0
    day_buy_value: float = 0.0
    day_sell_quantity: int = 0
    day_sell_value: float = 0.0

    @property
    def quantity(self) -> int:
        return self.overnight_quantity + self.day_buy_quantity - self.day_sell_quantity

    @property
    def traded_today(self) -> bool:
        return self.day_buy_quantity > 0 or self.day_sell_quantity > 0

    def add_fill(self, side: str, quantity: int, price: float) -> None:
        mult = self.inst.multiplier
        if side == "BUY":
            self.day_buy_quantity += quantity
            self.day_buy_value += quantity * price * mult
        else:
            self.day_sell_quantity += quantity
            self.day_sell_value += quantity * price * mult

    def m2m(self, ltp: float, close: float) -> float:
        """Today's mark-to-market: day cash flows plus the position valued at LTP, the
        overnight part measured from the previous close."""
        mult = self.inst.multiplier
        return (
            self.day_sell_value
            - self.day_buy_value
            + self.quantity * ltp * mult
            - self.overnight_quantity * close * mult
        )

    def rows(self, ltp: float, close: float) -> tuple[PositionRow | None, PositionRow]:
        """(Day row or None, Net row) in Kite's position shape."""
        mult = self.inst.multiplier
        on = self.overnight_quantity
        buy_q = self.day_buy_quantity + max(on, 0)
        buy_v = self.day_buy_value + max(on, 0) * self.overnight_price * mult
        sell_q = self.day_sell_quantity + max(-on, 0)
        sell_v = self.day_sell_value + max(-on, 0) * self.overnight_price * mult
        net = self._row(self.quantity, on, buy_q, buy_v, sell_q, sell_v, ltp, close)
        day = None
        if self.traded_today:
            day = self._row(
                self.day_buy_quantity - self.day_sell_quantity,
                0,
                self.day_buy_quantity,
                self.day_buy_value,
                self.day_sell_quantity,
                self.day_sell_value,
                ltp,
                close,
            )
        return day, net

    def _row(
        self,
        qty: int,
        overnight: int,
        buy_q: int,
        buy_v: float,
        sell_q: int,
        sell_v: float,
        ltp: float,
        close: float,
    ) -> PositionRow:
        mult = self.inst.multiplier
        buy_p = buy_v / (buy_q * mult) if buy_q else 0.0
        sell_p = sell_v / (sell_q * mult) if sell_q else 0.0
        pnl = (sell_v - buy_v) + qty * ltp * mult
        if qty > 0:
            avg = buy_p
        elif qty < 0:
            avg = sell_p
        else:
            avg = 0.0
        closed = min(buy_q, sell_q)
        realised = (sell_p - buy_p) * closed * mult if closed else 0.0
        m2m = self.day_sell_value - self.day_buy_value + qty * ltp * mult - overnight * close * mult
        return {
            "tradingsymbol": self.inst.tradingsymbol,
            "exchange": self.inst.exchange,
            "instrument_token": self.inst.instrument_token,
            "product": self.product,
            "quantity": qty,
            "overnight_quantity": overnight,
            "multiplier": mult,
            "average_price": round(avg, 4),
            "close_price": close,
            "last_price": ltp,
            "value": round(sell_v - buy_v, 2),
            "pnl": round(pnl, 2),
            "m2m": round(m2m, 2),
            "unrealised": round(pnl - realised, 2),
            "realised": round(realised, 2),
            "buy_quantity": buy_q,
            "buy_price": round(buy_p, 4),
            "buy_value": round(buy_v, 2),
            "buy_m2m": round(buy_v, 2),
            "sell_quantity": sell_q,
            "sell_price": round(sell_p, 4),
            "sell_value": round(sell_v, 2),
            "sell_m2m": round(sell_v, 2),
            "day_buy_quantity": self.day_buy_quantity,
            "day_buy_price": round(self.day_buy_value / (self.day_buy_quantity * mult), 4)
            if self.day_buy_quantity
            else 0.0,
            "day_buy_value": round(self.day_buy_value, 2),
            "day_sell_quantity": self.day_sell_quantity,
            "day_sell_price": round(self.day_sell_value / (self.day_sell_quantity * mult), 4)
            if self.day_sell_quantity
            else 0.0,
            "day_sell_value": round(self.day_sell_value, 2),
        }


def margin_for(
    inst: Instrument, product: str, side: str, quantity: int, price: float, underlying_price: float
) -> dict[str, float]:
    """Margin blocked by ``quantity`` at ``price``, split as Kite's utilised fields."""
    value = quantity * price * inst.multiplier
    out = {"span": 0.0, "exposure": 0.0, "option_premium": 0.0, "delivery": 0.0}
    if inst.is_option:
        if side == "BUY":
            out["option_premium"] = value
        else:
            contract = quantity * underlying_price * inst.multiplier
            out["span"] = contract * FUTURES_RATE * 0.75
            out["exposure"] = contract * FUTURES_RATE * 0.25
    elif inst.is_derivative:
        rate = MCX_RATE if inst.exchange == "MCX" else FUTURES_RATE
        out["span"] = value * rate * 0.75
        out["exposure"] = value * rate * 0.25
    elif product == "MIS":
        out["exposure"] = value * MIS_EQUITY_RATE
    elif side == "BUY":
        out["delivery"] = value
    return out


def total(parts: dict[str, float]) -> float:
    return sum(parts.values())
