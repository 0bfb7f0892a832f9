"""Simulated time: India Standard Time, Kite's timestamp formats, and ``SimClock``."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone

# A fixed +05:30 zone: zoneinfo may lack its data on Windows, and India has no DST.
IST = timezone(timedelta(hours=5, minutes=30), "IST")


def ist(value: datetime) -> datetime:
    """``value`` as an aware IST datetime (a naive one is taken to be IST already)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=IST)
    return value.astimezone(IST)


def kite_ts(value: datetime) -> str:
    """Kite's JSON timestamp: ``YYYY-MM-DD HH:MM:SS`` in IST."""
    return ist(value).strftime("%Y-%m-%d %H:%M:%S")


def candle_ts(value: datetime) -> str:
    """Kite's candle timestamp: ``YYYY-MM-DDTHH:MM:SS+0530``."""
    return ist(value).strftime("%Y-%m-%dT%H:%M:%S+0530")


def at_time(day: date, hh: int, mm: int, ss: int = 0) -> datetime:
    return datetime(day.year, day.month, day.day, hh, mm, ss, tzinfo=IST)


class SimClock:
    """Simulated time from ``start``, running ``speed`` times as fast as the wall clock.

    ``wall`` is any monotonic seconds counter (tests pass their own)."""

    def __init__(
        self,
        start: datetime,
        speed: float = 1.0,
        wall: Callable[[], float] = time.monotonic,
    ) -> None:
        if speed < 0:
            raise ValueError(f"speed must be 0 or more (got {speed})")
        self._start = ist(start)
        self._speed = speed
        self._wall = wall
        self._wall0 = wall()

    @property
    def speed(self) -> float:
        return self._speed

    def now(self) -> datetime:
        elapsed = (self._wall() - self._wall0) * self._speed
        moment = self._start + timedelta(seconds=elapsed)
        return moment.replace(microsecond=0)
