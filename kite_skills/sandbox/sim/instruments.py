"""The built-in instrument master (data/instruments.json plus derivatives generated per date).

Equities, indices, the commodity and mutual funds come from the data file. Futures and options
are generated for the scenario date, so a scenario on any date has live contracts:
- NIFTY: futures for the next two monthly expiries; options for the next two weekly expiries
  (Tuesdays, monthly format when the week's expiry is the month's last Tuesday);
- BANKNIFTY and RELIANCE (the stock future): futures and options for the next two monthly
  expiries (last Tuesday);
- options: ``strikes_each_side`` strikes either side of the money at the previous close, CE and
  PE;
- CRUDEOIL on MCX: the next two monthly contracts (expiring on the 19th, or the weekday before).
Expiries are "on or after the scenario date", so on an expiry day the expiring contracts are
still listed. Exchange holidays are not modelled.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, replace
from datetime import date
from functools import lru_cache
from importlib import resources
from typing import Any, Self

from . import sessions

SEGMENT_IDS = {"NSE": 1, "NFO": 2, "CDS": 3, "BSE": 4, "BFO": 5, "MCX": 7, "INDICES": 9}
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_WEEKLY_MONTH = "123456789OND"
# Equity cash segment hard cap: Kite blocks quantities above 1,00,000 shares (rules.md §1,
# https://support.zerodha.com/category/console/portfolio/holdings/articles/kite-order-rejections).
EQUITY_MAX_QUANTITY = 100_000


@dataclass(frozen=True)
class Instrument:
    instrument_token: int
    exchange_token: int
    exchange: str
    tradingsymbol: str
    name: str
    segment: str
    instrument_type: str  # EQ, FUT, CE, PE
    tick_size: float
    lot_size: int
    freeze_quantity: int  # 0: no exchange freeze limit (equity uses EQUITY_MAX_QUANTITY)
    band: float  # circuit band in percent of the previous close
    base_close: float  # the previous close of the data file (0 for derivatives: priced by model)
    isin: str = ""
    expiry: date | None = None
    strike: float = 0.0
    multiplier: int = 1
    underlying: str = ""  # "EXCHANGE:TRADINGSYMBOL" of the underlying, derivatives only
    iv: float = 0.0

    @property
    def key(self) -> str:
        return f"{self.exchange}:{self.tradingsymbol}"

    @property
    def is_index(self) -> bool:
        return self.segment == "INDICES"

    @property
    def is_option(self) -> bool:
        return self.instrument_type in ("CE", "PE")

    @property
    def is_derivative(self) -> bool:
        return self.instrument_type in ("FUT", "CE", "PE")

    @property
    def is_equity(self) -> bool:
        return self.exchange in sessions.EQUITY and not self.is_index

    @property
    def margin_segment(self) -> str:
        return "commodity" if self.exchange in sessions.COMMODITY else "equity"

    def row(self, last_price: float = 0.0) -> dict[str, Any]:
        """A row of the Kite instruments CSV dump (as pykiteconnect parses it)."""
        return {
            "instrument_token": self.instrument_token,
            "exchange_token": self.exchange_token,
            "tradingsymbol": self.tradingsymbol,
            "name": self.name,
            "last_price": last_price,
            "expiry": self.expiry.isoformat() if self.expiry else "",
            "strike": self.strike,
            "tick_size": self.tick_size,
            "lot_size": self.lot_size,
            "instrument_type": self.instrument_type,
            "segment": self.segment,
            "exchange": self.exchange,
        }


@dataclass(frozen=True)
class InstrumentFacts:
    """Facts the adapter needs that Kite Connect's instrument dump lacks (the MCP server's own
    instrument master carries them, behaviour.md §9)."""

    instrument_token: int
    exchange: str
    tradingsymbol: str
    instrument_type: str
    segment: str
    tick_size: float
    lot_size: int
    freeze_quantity: int
    max_order_quantity: int
    lower_circuit: float
    upper_circuit: float
    expiry: str
    strike: float
    isin: str
    name: str


@dataclass(frozen=True)
class MutualFund:
    tradingsymbol: str
    amc: str
    name: str
    dividend_type: str
    scheme_type: str
    plan: str
    nav: float

    def row(self, last_price_date: date) -> dict[str, Any]:
        return {
            "tradingsymbol": self.tradingsymbol,
            "amc": self.amc,
            "name": self.name,
            "purchase_allowed": True,
            "redemption_allowed": True,
            "minimum_purchase_amount": 100.0,
            "purchase_amount_multiplier": 1.0,
            "minimum_additional_purchase_amount": 100.0,
            "minimum_redemption_quantity": 0.001,
            "redemption_quantity_multiplier": 0.001,
            "dividend_type": self.dividend_type,
            "scheme_type": self.scheme_type,
            "plan": self.plan,
            "settlement_type": "T3" if self.scheme_type != "liquid" else "T1",
            "last_price": self.nav,
            "last_price_date": last_price_date.isoformat(),
        }


def equity_tick(price: float) -> float:
    """NSE price-linked tick sizes (the 2025 revision: finer ticks for cheaper shares)."""
    if price < 250:
        return 0.01
    if price < 1000:
        return 0.05
    if price < 5000:
        return 0.1
    if price < 10000:
        return 0.5
    if price < 20000:
        return 1.0
    return 5.0


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    text = (
        resources.files(__package__)
        .joinpath("data")
        .joinpath("instruments.json")
        .read_text("utf-8")
    )
    data: dict[str, Any] = json.loads(text)
    return data


def _token(exchange: str, exchange_token: int) -> int:
    return (exchange_token << 8) + SEGMENT_IDS[exchange]


def _strike_text(strike: float) -> str:
    return str(int(strike)) if float(strike).is_integer() else f"{strike:g}"


class InstrumentMaster:
    """Every instrument listed on ``day``, looked up by key or token."""

    def __deepcopy__(self, memo: dict[int, object]) -> Self:
        # Prices (and the listing) depend only on the scenario, never on the account: a copy
        # of the simulation (--watch strict's trial of a call) shares them.
        return self

    def __init__(self, day: date) -> None:
        self.day = day
        data = _data()
        rows: list[Instrument] = []
        for exchange, symbol, name, isin, etoken, close, band in data["equities"]:
            rows.append(
                Instrument(
                    instrument_token=_token(exchange, etoken),
                    exchange_token=etoken,
                    exchange=exchange,
                    tradingsymbol=symbol,
                    name=name,
                    segment=exchange,
                    instrument_type="EQ",
                    tick_size=equity_tick(close),
                    lot_size=1,
                    freeze_quantity=0,
                    band=float(band),
                    base_close=float(close),
                    isin=isin,
                )
            )
        for exchange, symbol, name, etoken, close in data["indices"]:
            rows.append(
                Instrument(
                    instrument_token=_token("INDICES", etoken),
                    exchange_token=etoken,
                    exchange=exchange,
                    tradingsymbol=symbol,
                    name=name,
                    segment="INDICES",
                    instrument_type="EQ",
                    tick_size=0.05,
                    lot_size=0,
                    freeze_quantity=0,
                    band=0.0,
                    base_close=float(close),
                )
            )
        spot = {row.key: row for row in rows}
        for spec in data["derivatives"]:
            rows.extend(self._derivatives(spec, spot[spec["underlying"]]))
        for spec in data["commodities"]:
            for expiry in sessions.mcx_expiries(day, 2):
                symbol = f"{spec['name']}{expiry:%y}{_MONTHS[expiry.month - 1]}FUT"
                rows.append(
                    self._fno(
                        symbol,
                        spec["name"],
                        "MCX",
                        "MCX-FUT",
                        "FUT",
                        expiry,
                        0.0,
                        spec,
                        float(spec["tick_size"]),
                        float(spec["band"]),
                        float(spec["price"]),
                        "",
                        int(spec["multiplier"]),
                    )
                )
        self._rows = tuple(rows)
        self._by_key = {row.key: row for row in rows}
        self._by_token = {row.instrument_token: row for row in rows}
        if len(self._by_token) != len(rows):  # pragma: no cover - data error caught in tests
            raise ValueError("instrument master: duplicate instrument tokens")
        self.mutual_funds = tuple(MutualFund(*row) for row in data["mutual_funds"])

    def _fno(
        self,
        symbol: str,
        name: str,
        exchange: str,
        segment: str,
        itype: str,
        expiry: date,
        strike: float,
        spec: dict[str, Any],
        tick: float,
        band: float,
        close: float,
        underlying: str,
        multiplier: int = 1,
    ) -> Instrument:
        etoken = 30000 + zlib.crc32(f"{exchange}:{symbol}".encode()) % 2_000_000
        while _token(exchange, etoken) in getattr(self, "_seen", set()):
            etoken += 1
        seen: set[int] = getattr(self, "_seen", set())
        seen.add(_token(exchange, etoken))
        self._seen = seen
        return Instrument(
            instrument_token=_token(exchange, etoken),
            exchange_token=etoken,
            exchange=exchange,
            tradingsymbol=symbol,
            name=name,
            segment=segment,
            instrument_type=itype,
            tick_size=tick,
            lot_size=int(spec["lot_size"]),
            freeze_quantity=int(spec["freeze_quantity"]),
            band=band,
            base_close=close,
            expiry=expiry,
            strike=strike,
            multiplier=multiplier,
            underlying=underlying,
            iv=float(spec.get("iv", 0.0)),
        )

    def _derivatives(self, spec: dict[str, Any], under: Instrument) -> list[Instrument]:
        name, exchange = spec["name"], spec["exchange"]
        out: list[Instrument] = []
        monthly = sessions.monthly_expiries(self.day, 2)
        for expiry in monthly:
            symbol = f"{name}{expiry:%y}{_MONTHS[expiry.month - 1]}FUT"
            out.append(
                self._fno(
                    symbol,
                    name,
                    exchange,
                    f"{exchange}-FUT",
                    "FUT",
                    expiry,
                    0.0,
                    spec,
                    0.1,
                    10.0,
                    0.0,
                    under.key,
                )
            )
        weekly = spec["options"] == "weekly"
        expiries = sessions.weekly_expiries(self.day, 2) if weekly else monthly
        step = float(spec["strike_step"])
        atm = round(under.base_close / step) * step
        month_ends = {sessions.last_weekday(e.year, e.month, 1) for e in expiries}
        for expiry in expiries:
            if expiry in month_ends:
                prefix = f"{name}{expiry:%y}{_MONTHS[expiry.month - 1]}"
            else:
                prefix = f"{name}{expiry:%y}{_WEEKLY_MONTH[expiry.month - 1]}{expiry.day:02d}"
            for i in range(-int(spec["strikes_each_side"]), int(spec["strikes_each_side"]) + 1):
                strike = atm + i * step
                for kind in ("CE", "PE"):
                    symbol = f"{prefix}{_strike_text(strike)}{kind}"
                    out.append(
                        self._fno(
                            symbol,
                            name,
                            exchange,
                            f"{exchange}-OPT",
                            kind,
                            expiry,
                            strike,
                            spec,
                            0.05,
                            0.0,
                            0.0,
                            under.key,
                        )
                    )
        return out

    def all(self) -> tuple[Instrument, ...]:
        return self._rows

    def get(self, exchange: str, tradingsymbol: str) -> Instrument | None:
        return self._by_key.get(f"{exchange}:{tradingsymbol}")

    def for_alert(self, exchange: str, tradingsymbol: str) -> Instrument | None:
        """An alert's instrument: indices are named with the exchange ``INDICES`` in alerts
        (docs/kite-domain.md; kiteconnect-mocks alerts_history.json), other instruments by
        their exchange. ``NSE:NIFTY 50`` is still accepted (UNVERIFIED whether Kite refuses it)."""
        if exchange == "INDICES":
            for inst in self._rows:
                if inst.is_index and inst.tradingsymbol == tradingsymbol:
                    return inst
            return None
        return self.get(exchange, tradingsymbol)

    def by_key(self, key: str) -> Instrument | None:
        """``EXCHANGE:TRADINGSYMBOL`` or an instrument token as text."""
        if key.isdigit():
            return self._by_token.get(int(key))
        return self._by_key.get(key)

    def by_token(self, token: int) -> Instrument | None:
        return self._by_token.get(token)

    def mutual_fund(self, tradingsymbol: str) -> MutualFund | None:
        for fund in self.mutual_funds:
            if fund.tradingsymbol == tradingsymbol:
                return fund
        return None

    def with_close(self, inst: Instrument, close: float) -> Instrument:
        return replace(inst, base_close=close)


@lru_cache(maxsize=8)
def master_for(day: date) -> InstrumentMaster:
    return InstrumentMaster(day)
