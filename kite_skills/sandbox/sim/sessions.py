"""Trading calendar and session windows.

Weekends are closed; exchange holidays are NOT modelled (every weekday trades).
Windows (IST):
- NSE/BSE equity and NFO/BFO: continuous session 09:15-15:30.
- MCX: 09:00-23:30, 23:55 from November to February (US winter time; approximated by month).
- MIS auto square-off: equity 15:20, equity derivatives 15:25, commodities 25 minutes before the
  close. Source: rules.md §5, https://support.zerodha.com/category/trading-and-markets/
  margin-leverage-and-product-and-order-types/articles/intraday-auto-square-off-timings
- AMO windows: equity 16:00-08:58, F&O 15:45-09:10, MCX close-08:58 (the current support page;
  rules.md §6, https://support.zerodha.com/category/trading-and-markets/kite-web-and-mobile/
  others/articles/what-is-amo-and-when-can-we-place-it). On weekends AMOs may be placed all day
  (the older version of the same page).
- AMO release: 09:00 for equity and MCX, 09:15 for F&O and for equity SL/SL-M (same page).
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from .clock import IST, ist

EQUITY = ("NSE", "BSE")
DERIVATIVES = ("NFO", "BFO")
COMMODITY = ("MCX",)


def is_trading_day(day: date) -> bool:
    return day.weekday() < 5


def next_trading_day(day: date) -> date:
    day += timedelta(days=1)
    while not is_trading_day(day):
        day += timedelta(days=1)
    return day


def previous_trading_day(day: date) -> date:
    day -= timedelta(days=1)
    while not is_trading_day(day):
        day -= timedelta(days=1)
    return day


def _mcx_close(day: date) -> time:
    return time(23, 55) if day.month in (11, 12, 1, 2) else time(23, 30)


def session(exchange: str, day: date) -> tuple[datetime, datetime] | None:
    """Open and close of the continuous session on ``day``, or None when closed."""
    if not is_trading_day(day):
        return None
    if exchange in COMMODITY:
        start, end = time(9, 0), _mcx_close(day)
    else:
        start, end = time(9, 15), time(15, 30)
    return datetime.combine(day, start, IST), datetime.combine(day, end, IST)


def is_open(exchange: str, moment: datetime) -> bool:
    window = session(exchange, ist(moment).date())
    return window is not None and window[0] <= ist(moment) < window[1]


def square_off_time(exchange: str, day: date) -> datetime:
    """When MIS positions of ``exchange`` are squared off (rules.md §5)."""
    if exchange in COMMODITY:
        close = datetime.combine(day, _mcx_close(day), IST)
        return close - timedelta(minutes=25)
    if exchange in DERIVATIVES:
        return datetime.combine(day, time(15, 25), IST)
    return datetime.combine(day, time(15, 20), IST)


def in_amo_window(exchange: str, moment: datetime) -> bool:
    """Whether an AMO may be placed, modified or cancelled now (rules.md §6)."""
    moment = ist(moment)
    day, clock = moment.date(), moment.time()
    if not is_trading_day(day):
        return True
    if exchange in COMMODITY:
        return clock >= _mcx_close(day) or clock < time(8, 58)
    if exchange in DERIVATIVES:
        return clock >= time(15, 45) or clock < time(9, 10)
    return clock >= time(16, 0) or clock < time(8, 58)


def amo_release_time(exchange: str, order_type: str, moment: datetime) -> datetime:
    """When an AMO placed at ``moment`` is sent to the exchange (rules.md §6)."""
    moment = ist(moment)
    day = moment.date()
    release = time(9, 0)
    if exchange in DERIVATIVES or order_type in ("SL", "SL-M"):
        release = time(9, 15)
    if exchange in COMMODITY:
        release = time(9, 0)
    if not is_trading_day(day) or moment.time() >= release:
        day = next_trading_day(day)
    return datetime.combine(day, release, IST)


def last_weekday(year: int, month: int, weekday: int) -> date:
    """The last ``weekday`` (0=Monday) of a month."""
    nxt = date(year + (month == 12), month % 12 + 1, 1)
    day = nxt - timedelta(days=1)
    while day.weekday() != weekday:
        day -= timedelta(days=1)
    return day


def monthly_expiries(start: date, count: int) -> list[date]:
    """NSE monthly expiries (last Tuesday, since September 2025) on or after ``start``."""
    out: list[date] = []
    year, month = start.year, start.month
    while len(out) < count:
        day = last_weekday(year, month, 1)
        if day >= start:
            out.append(day)
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out


def weekly_expiries(start: date, count: int) -> list[date]:
    """NIFTY weekly expiries (Tuesdays) on or after ``start``."""
    day = start
    while day.weekday() != 1:
        day += timedelta(days=1)
    return [day + timedelta(days=7 * i) for i in range(count)]


def mcx_expiries(start: date, count: int) -> list[date]:
    """MCX crude oil style expiries: the 19th, or the weekday before it (approximation)."""
    out: list[date] = []
    year, month = start.year, start.month
    while len(out) < count:
        day = date(year, month, 19)
        while day.weekday() >= 5:
            day -= timedelta(days=1)
        if day >= start:
            out.append(day)
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out
