"""Prices: deterministic tick paths, quotes in Kite's shapes, historical candles.

Every price comes from a tick path per instrument and trading day:
- a scenario may give explicit ticks for an instrument (they can gap); before the first explicit
  tick the day is a generated walk that ends at it, after the last one the price stays put;
- otherwise one tick a minute through the session, a random walk seeded by the instrument token
  and the date (so the same scenario always shows the same market);
- days before the scenario date close on a backward walk from the previous close, and each of
  their minute paths is a bridge between that day's open and close, so a 200-day moving average
  has data;
- futures follow their underlying with a small cost of carry and options are Black-Scholes prices
  of the underlying at each tick (a fixed volatility per underlying), unless the scenario gives
  their own ticks.
"""

from __future__ import annotations

import bisect
import math
import random
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any, Self

from . import sessions
from .clock import IST, candle_ts, ist, kite_ts
from .instruments import Instrument, InstrumentMaster
from .responses import Candle, Depth, Ohlc, Quote, QuoteLtp, QuoteOhlc

_RATE = 0.065  # risk-free rate for option prices
_CARRY = 0.07  # futures cost of carry per year
_DAILY_VOL = {"INDICES": 0.008, "MCX": 0.015}
_EQUITY_VOL = 0.013


@dataclass(frozen=True)
class Tick:
    at: datetime
    price: float
    liquidity: int | None = None  # most quantity that can fill on this tick (None: no limit)


@dataclass(frozen=True)
class PathSpec:
    """A scenario's market entry for one instrument."""

    close: float | None = None  # previous close on the scenario date
    liquidity: int | None = None  # default per-tick fill limit
    ticks: tuple[Tick, ...] = ()
    spread: float | None = None  # best ask - best bid of the book (None: one tick each side)


@dataclass
class DayPath:
    times: list[datetime] = field(default_factory=list)
    prices: list[float] = field(default_factory=list)
    liquidity: list[int | None] = field(default_factory=list)
    volumes: list[int] = field(default_factory=list)


def round_tick(price: float, tick: float, mode: str = "nearest") -> float:
    """``price`` on the tick grid (``mode`` nearest, up or down), to 2 decimals."""
    units = price / tick
    if mode == "up":
        steps = math.ceil(units - 1e-9)
    elif mode == "down":
        steps = math.floor(units + 1e-9)
    else:
        steps = round(units)
    return round(steps * tick, 2)


def on_tick(price: float, tick: float) -> bool:
    units = price / tick
    return abs(units - round(units)) < 1e-6


def _norm_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def black_scholes(kind: str, spot: float, strike: float, years: float, vol: float) -> float:
    if years <= 0 or vol <= 0:
        return max(0.0, spot - strike) if kind == "CE" else max(0.0, strike - spot)
    sd = vol * math.sqrt(years)
    d1 = (math.log(spot / strike) + (_RATE + vol * vol / 2) * years) / sd
    d2 = d1 - sd
    disc = math.exp(-_RATE * years)
    if kind == "CE":
        return spot * _norm_cdf(d1) - strike * disc * _norm_cdf(d2)
    return strike * disc * _norm_cdf(-d2) - spot * _norm_cdf(-d1)


def _trading_days(start: date, end: date) -> int:
    """Trading days in ``[start, end)`` (a non-trading ``start`` counts from the next one)."""
    days = (end - start).days
    weeks, rest = divmod(days, 7)
    count = weeks * 5
    for i in range(rest):
        if (start + timedelta(days=i)).weekday() < 5:
            count += 1
    return count


OI_DAILY_DRIFT = 0.03  # at most 3 % a day


def _contract_weight(inst: Instrument, spot: float) -> float:
    """Each contract trades its own volume: futures twice the base, options less the further
    from the money (a fifth at 2 % away), times a factor of the contract's own (0.5 to 1.5)."""
    own = _seed("volume", inst.instrument_token).uniform(0.5, 1.5)
    if not inst.is_option or spot <= 0:
        return 2.0 * own
    return own * math.exp(-abs(inst.strike - spot) / spot / 0.0125)


def _seed(*parts: object) -> random.Random:
    return random.Random(":".join(str(p) for p in parts))


class Market:
    """Prices of every instrument at any simulated moment."""

    def __deepcopy__(self, memo: dict[int, object]) -> Self:
        # Prices (and the listing) depend only on the scenario, never on the account: a copy
        # of the simulation (--watch strict's trial of a call) shares them.
        return self

    def __init__(self, master: InstrumentMaster, day: date, paths: dict[str, PathSpec]) -> None:
        self.master = master
        self.day = day  # the scenario date
        self.paths = paths
        self._days: dict[tuple[int, date], DayPath] = {}
        self._back: dict[int, list[float]] = {}

    # ----- closes -----------------------------------------------------------------------
    def _base_close(self, inst: Instrument) -> float:
        spec = self.paths.get(inst.key)
        if spec is not None and spec.close is not None:
            return spec.close
        return inst.base_close

    def _vol(self, inst: Instrument) -> float:
        return _DAILY_VOL.get(inst.segment, _EQUITY_VOL)

    def _back_close(self, inst: Instrument, steps: int) -> float:
        """Close ``steps`` trading days before the previous close (0: the previous close)."""
        closes = self._back.setdefault(inst.instrument_token, [self._base_close(inst)])
        while len(closes) <= steps:
            k = len(closes)
            rng = _seed("back", inst.instrument_token, k)
            change = rng.gauss(0.0004, self._vol(inst))
            closes.append(round_tick(closes[-1] / (1 + change), inst.tick_size))
        return closes[steps]

    def prev_close(self, inst: Instrument, day: date) -> float:
        """The close of the trading day before ``day`` (Kite's ``ohlc.close``)."""
        if inst.is_derivative and inst.exchange != "MCX":
            under = self._underlying(inst)
            before = sessions.previous_trading_day(day)
            moment = datetime.combine(before, time(15, 30), IST)
            return self._derived(inst, self.prev_close(under, day), moment)
        if day <= self.day:
            return self._back_close(inst, _trading_days(day, self.day))
        before = sessions.previous_trading_day(day)
        path = self.day_path(inst, before)
        return path.prices[-1] if path.prices else self.prev_close(inst, before)

    def _day_close_target(self, inst: Instrument, day: date) -> float | None:
        if day >= self.day:
            return None
        return self.prev_close(inst, sessions.next_trading_day(day))

    # ----- paths --------------------------------------------------------------------------
    def _underlying(self, inst: Instrument) -> Instrument:
        under = self.master.by_key(inst.underlying)
        assert under is not None, inst.underlying
        return under

    def _derived(self, inst: Instrument, spot: float, moment: datetime) -> float:
        assert inst.expiry is not None
        expiry = datetime.combine(inst.expiry, time(15, 30), IST)
        years = max((expiry - moment).total_seconds(), 0.0) / (365 * 86400)
        if inst.instrument_type == "FUT":
            value = spot * (1 + _CARRY * years)
        else:
            value = black_scholes(inst.instrument_type, spot, inst.strike, years, inst.iv)
        return max(round_tick(value, inst.tick_size), inst.tick_size)

    def _explicit(self, inst: Instrument, day: date) -> list[Tick]:
        spec = self.paths.get(inst.key)
        if spec is None:
            return []
        return [t for t in spec.ticks if ist(t.at).date() == day]

    def day_path(self, inst: Instrument, day: date) -> DayPath:
        key = (inst.instrument_token, day)
        cached = self._days.get(key)
        if cached is None:
            cached = self._build_path(inst, day)
            self._days[key] = cached
        return cached

    def _build_path(self, inst: Instrument, day: date) -> DayPath:
        path = DayPath()
        window = sessions.session("MCX" if inst.exchange == "MCX" else "NSE", day)
        if window is None:
            return path
        explicit = self._explicit(inst, day)
        spec = self.paths.get(inst.key)
        default_liq = spec.liquidity if spec is not None else None
        rng = _seed("day", inst.instrument_token, day.isoformat())
        if inst.is_derivative and inst.exchange != "MCX" and not explicit:
            under = self.day_path(self._underlying(inst), day)
            weight = _contract_weight(inst, under.prices[0] if under.prices else 0.0)
            for at, spot, vol in zip(under.times, under.prices, under.volumes, strict=True):
                path.times.append(at)
                path.prices.append(self._derived(inst, spot, at))
                path.liquidity.append(default_liq)
                path.volumes.append(max(1, int(vol // 50 * weight)) * max(inst.lot_size, 1))
            return path
        start, end = window
        minutes = int((end - start).total_seconds() // 60)
        prev = self.prev_close(inst, day)
        if explicit:
            first = ist(explicit[0].at)
            n = max(0, int((first - start).total_seconds() // 60))
            target: float | None = explicit[0].price
            minutes = n
        else:
            target = self._day_close_target(inst, day)
        step = self._vol(inst) / math.sqrt(max(minutes, 1))
        open_price = prev * math.exp(rng.gauss(0, self._vol(inst) / 4))
        if explicit and minutes == 0:
            open_price = explicit[0].price
        walk = [0.0]
        for _ in range(max(minutes - 1, 0)):
            walk.append(walk[-1] + rng.gauss(0, step))
        if target is not None and minutes > 0:
            goal = math.log(target / open_price)
            last = walk[-1]
            steps = max(len(walk) - 1, 1)
            walk = [w - (i / steps) * (last - goal) for i, w in enumerate(walk)]
        base_volume = 2000 if inst.is_index else 500 + rng.randrange(5000)
        for i in range(minutes):
            path.times.append(start + timedelta(minutes=i))
            path.prices.append(
                max(round_tick(open_price * math.exp(walk[i]), inst.tick_size), inst.tick_size)
            )
            path.liquidity.append(default_liq)
            path.volumes.append(base_volume + rng.randrange(base_volume))
        for tick in explicit:
            at = ist(tick.at)
            if path.times and at <= path.times[-1]:
                at = path.times[-1] + timedelta(seconds=1)
            path.times.append(at)
            path.prices.append(tick.price)
            path.liquidity.append(tick.liquidity if tick.liquidity is not None else default_liq)
            path.volumes.append(tick.liquidity or (base_volume + rng.randrange(base_volume)))
        return path

    # ----- prices now -----------------------------------------------------------------------
    def _index_at(self, inst: Instrument, moment: datetime) -> tuple[DayPath, int]:
        path = self.day_path(inst, ist(moment).date())
        return path, bisect.bisect_right(path.times, ist(moment)) - 1

    def price_at(self, inst: Instrument, moment: datetime) -> float:
        moment = ist(moment)
        day = moment.date()
        path, i = self._index_at(inst, moment)
        if i >= 0:
            return path.prices[i]
        if sessions.is_trading_day(day):
            return self.prev_close(inst, day)
        probe = day
        while not sessions.is_trading_day(probe):
            probe -= timedelta(days=1)
        return self.prev_close(inst, sessions.next_trading_day(probe))

    def ticks_between(self, inst: Instrument, after: datetime, until: datetime) -> list[Tick]:
        """Ticks with ``after < at <= until`` (across days)."""
        out: list[Tick] = []
        day = ist(after).date()
        while day <= ist(until).date():
            path = self.day_path(inst, day)
            lo = bisect.bisect_right(path.times, ist(after))
            hi = bisect.bisect_right(path.times, ist(until))
            for i in range(lo, hi):
                out.append(Tick(path.times[i], path.prices[i], path.liquidity[i]))
            day += timedelta(days=1)
        return out

    def circuits(self, inst: Instrument, day: date) -> tuple[float, float]:
        """Lower and upper circuit (price band) for ``day``; (0, 0) for indices."""
        if inst.is_index:
            return 0.0, 0.0
        close = self.prev_close(inst, day)
        if inst.is_option:
            upper = close + max(close, self.prev_close(self._underlying(inst), day) * 0.02)
            return inst.tick_size, round_tick(upper, inst.tick_size, "down")
        band = inst.band / 100
        return (
            round_tick(close * (1 - band), inst.tick_size, "up"),
            round_tick(close * (1 + band), inst.tick_size, "down"),
        )

    def day_stats(self, inst: Instrument, moment: datetime) -> dict[str, Any]:
        moment = ist(moment)
        day = moment.date()
        if not sessions.is_trading_day(day):
            probe = day
            while not sessions.is_trading_day(probe):
                probe -= timedelta(days=1)
            day, moment = probe, datetime.combine(probe, time(23, 59), IST)
        path, i = self._index_at(inst, moment)
        close = self.prev_close(inst, day)
        if i < 0:
            return {
                "open": 0.0,
                "high": 0.0,
                "low": 0.0,
                "close": close,
                "volume": 0,
                "last": close,
                "last_time": None,
                "last_qty": 0,
            }
        prices = path.prices[: i + 1]
        return {
            "open": prices[0],
            "high": max(prices),
            "low": min(prices),
            "close": close,
            "volume": sum(path.volumes[: i + 1]),
            "last": prices[-1],
            "last_time": path.times[i],
            "last_qty": path.volumes[i] % 97 + 1,
            "vwap": round(sum(prices) / len(prices), 2),
        }

    # ----- Kite shapes --------------------------------------------------------------------
    def ltp_row(self, inst: Instrument, moment: datetime) -> QuoteLtp:
        return {
            "instrument_token": inst.instrument_token,
            "last_price": self.price_at(inst, moment),
        }

    def ohlc_row(self, inst: Instrument, moment: datetime) -> QuoteOhlc:
        stats = self.day_stats(inst, moment)
        return {
            "instrument_token": inst.instrument_token,
            "last_price": self.price_at(inst, moment),
            "ohlc": {
                "open": stats["open"],
                "high": stats["high"],
                "low": stats["low"],
                "close": stats["close"],
            },
        }

    def quote_row(self, inst: Instrument, moment: datetime) -> Quote:
        stats = self.day_stats(inst, moment)
        last = self.price_at(inst, moment)
        ohlc: Ohlc = {
            "open": stats["open"],
            "high": stats["high"],
            "low": stats["low"],
            "close": stats["close"],
        }
        net_change = round(last - stats["close"], 2) if stats["close"] else 0.0
        if inst.is_index:  # no trades, depth, OI or circuits: the keys are absent
            return {
                "instrument_token": inst.instrument_token,
                "timestamp": kite_ts(moment),
                "last_price": last,
                "net_change": net_change,
                "ohlc": ohlc,
            }
        lower, upper = self.circuits(inst, ist(moment).date())
        row: Quote = {
            "instrument_token": inst.instrument_token,
            "timestamp": kite_ts(moment),
            "last_trade_time": kite_ts(stats["last_time"]) if stats["last_time"] else None,
            "last_price": last,
            "last_quantity": stats["last_qty"],
            "buy_quantity": 0,
            "sell_quantity": 0,
            "volume": stats["volume"],
            "average_price": stats.get("vwap", 0.0),
            "oi": 0,
            "oi_day_high": 0,
            "oi_day_low": 0,
            "net_change": net_change,
            "lower_circuit_limit": lower,
            "upper_circuit_limit": upper,
            "ohlc": ohlc,
            "depth": {"buy": [], "sell": []},
        }
        depth = self.depth(inst, moment)
        row["depth"] = depth
        row["buy_quantity"] = sum(level["quantity"] for level in depth["buy"]) * 7
        row["sell_quantity"] = sum(level["quantity"] for level in depth["sell"]) * 7
        if inst.is_derivative:
            oi = self.open_interest(inst, ist(moment).date())
            row["oi"], row["oi_day_high"], row["oi_day_low"] = oi, int(oi * 1.04), int(oi * 0.97)
        return row

    def depth(self, inst: Instrument, moment: datetime) -> Depth:
        last = self.price_at(inst, moment)
        path, i = self._index_at(inst, moment)
        limit = path.liquidity[i] if i >= 0 else None
        rng = _seed("depth", inst.instrument_token, kite_ts(moment))
        lot = max(inst.lot_size, 1)
        tick = inst.tick_size
        bid, ask = self.touch(inst, last)
        levels: Depth = {"buy": [], "sell": []}
        for side, best, sign in ((levels["buy"], bid, -1), (levels["sell"], ask, 1)):
            for k in range(5):
                qty = (limit // 5 if limit else rng.randrange(1, 400)) or 1
                side.append(
                    {
                        "price": max(round_tick(best + sign * k * tick, tick), tick),
                        "quantity": max(qty // lot, 1) * lot,
                        "orders": rng.randrange(1, 20),
                    }
                )
        return levels

    def touch(self, inst: Instrument, last: float) -> tuple[float, float]:
        """The best bid and ask around ``last``: one tick either side, or ``spread`` apart
        around it (the bid half a spread below, rounded down to the tick grid) when the
        scenario gives one. Deeper levels of the depth are one tick further out each."""
        tick = inst.tick_size
        spec = self.paths.get(inst.key)
        if spec is not None and spec.spread is not None:
            bid = max(round_tick(last - spec.spread / 2, tick, "down"), tick)
            return bid, round_tick(bid + spec.spread, tick)
        return round_tick(last - tick, tick), round_tick(last + tick, tick)

    def open_interest(self, inst: Instrument, day: date) -> int:
        """Open interest drifts from day to day (at most a few per cent a day, a walk seeded
        by the contract) from its level on the scenario's date, never a fresh random level."""
        lot = max(inst.lot_size, 1)
        lots = float(_seed("oi", inst.instrument_token, self.day.isoformat()).randrange(200, 20000))

        def change(moment: date) -> float:  # OI(moment) / OI(the day before)
            drift = _seed("oi-drift", inst.instrument_token, moment.isoformat())
            return 1 + drift.uniform(-OI_DAILY_DRIFT, OI_DAILY_DRIFT)

        for n in range(1, (day - self.day).days + 1):
            lots *= change(self.day + timedelta(days=n))
        for n in range((self.day - day).days):
            lots /= change(self.day - timedelta(days=n))
        return max(int(lots), 1) * lot

    # ----- historical -----------------------------------------------------------------------
    def candles(
        self,
        inst: Instrument,
        start: datetime,
        end: datetime,
        minutes: int | None,
        now: datetime,
        with_oi: bool,
    ) -> list[Candle]:
        """Candles of ``minutes`` (None: daily) between ``start`` and ``end``, none after now."""
        out: list[Candle] = []
        start, end, now = ist(start), min(ist(end), ist(now)), ist(now)
        day = start.date()
        while day <= end.date():
            if sessions.is_trading_day(day):
                if minutes is None and day < self.day:
                    out.append(self._past_daily(inst, day, with_oi))
                else:
                    out.extend(self._day_candles(inst, day, start, end, minutes, with_oi))
            day += timedelta(days=1)
        return out

    def _past_ohlc(self, inst: Instrument, day: date) -> tuple[float, float, float, float, int]:
        """Open, high, low, close and volume of a day before the scenario date, without building
        its minute path (the open is the one the minute path uses; high and low are drawn
        separately, so they can differ slightly from the day's minute candles)."""
        if inst.is_derivative and inst.exchange != "MCX":
            o, h, lo, c, v = self._past_ohlc(self._underlying(inst), day)
            start = datetime.combine(day, time(9, 15), IST)
            close_at = datetime.combine(day, time(15, 30), IST)
            a, b = self._derived(inst, h, close_at), self._derived(inst, lo, close_at)
            return (
                self._derived(inst, o, start),
                max(a, b),
                min(a, b),
                self._derived(inst, c, close_at),
                max(1, v // 50) * max(inst.lot_size, 1),
            )
        rng = _seed("day", inst.instrument_token, day.isoformat())
        prev = self.prev_close(inst, day)
        open_price = round_tick(prev * math.exp(rng.gauss(0, self._vol(inst) / 4)), inst.tick_size)
        close = self.prev_close(inst, sessions.next_trading_day(day))
        wide = _seed("range", inst.instrument_token, day.isoformat())
        vol = self._vol(inst)
        high = round_tick(
            max(open_price, close) * (1 + abs(wide.gauss(0, vol / 2))), inst.tick_size
        )
        low = round_tick(min(open_price, close) * (1 - abs(wide.gauss(0, vol / 2))), inst.tick_size)
        volume = 375 * (2000 + wide.randrange(8000))
        return open_price, high, low, close, volume

    def _past_daily(self, inst: Instrument, day: date, with_oi: bool) -> Candle:
        o, h, lo, c, v = self._past_ohlc(inst, day)
        row: Candle = {
            "date": candle_ts(datetime.combine(day, time(0, 0), IST)),
            "open": o,
            "high": h,
            "low": lo,
            "close": c,
            "volume": 0 if inst.is_index else v,
        }
        if with_oi:
            row["oi"] = self.open_interest(inst, day) if inst.is_derivative else 0
        return row

    def _day_candles(
        self,
        inst: Instrument,
        day: date,
        start: datetime,
        end: datetime,
        minutes: int | None,
        with_oi: bool,
    ) -> list[Candle]:
        path = self.day_path(inst, day)
        if not path.times:
            return []
        opening = path.times[0].replace(second=0)
        prev = self.prev_close(inst, day)
        buckets: dict[datetime, dict[str, Any]] = {}
        last = prev
        for at, price, volume in zip(path.times, path.prices, path.volumes, strict=True):
            if at > end:
                break
            if minutes is None:
                key = datetime.combine(day, time(0, 0), IST)
            else:
                offset = int((at - opening).total_seconds() // 60) // minutes * minutes
                key = opening + timedelta(minutes=offset)
            wiggle = inst.tick_size * (volume % 3)
            hi, lo = max(last, price) + wiggle, max(min(last, price) - wiggle, inst.tick_size)
            candle = buckets.get(key)
            if candle is None:
                buckets[key] = {
                    "date": key,
                    "open": price if minutes is None else last,
                    "high": hi,
                    "low": lo,
                    "close": price,
                    "volume": volume,
                }
            else:
                candle["high"] = max(candle["high"], hi)
                candle["low"] = min(candle["low"], lo)
                candle["close"] = price
                candle["volume"] += volume
            last = price
        rows: list[Candle] = []
        for key in sorted(buckets):
            lower_bound = (
                start if minutes is not None else datetime.combine(start.date(), time(0, 0), IST)
            )
            if key < lower_bound:
                continue
            candle = buckets[key]
            row: Candle = {
                "date": candle_ts(key),
                "open": round(candle["open"], 2),
                "high": round(candle["high"], 2),
                "low": round(candle["low"], 2),
                "close": round(candle["close"], 2),
                "volume": 0 if inst.is_index else int(candle["volume"]),
            }
            if with_oi:
                row["oi"] = self.open_interest(inst, day) if inst.is_derivative else 0
            rows.append(row)
        return rows
