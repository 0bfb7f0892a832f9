"""Store work from the event loop: off the loop, one call at a time.

The store keeps one SQLite connection behind a lock, so a second worker thread would only
wait for the first; and each thread that allocates gets a malloc arena of its own. Ten
pipelined ``skillSave`` calls on ten worker threads grew a warm server by 2 MB (bench
section 5); on one thread they do not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread
from anyio.lowlevel import RunVar

T = TypeVar("T")

# One limiter per event loop (a limiter belongs to the loop that made it).
_ONE_AT_A_TIME: RunVar[anyio.CapacityLimiter] = RunVar("kite-skills store thread")


async def run(function: Callable[[], T]) -> T:
    """``function()`` on the store's worker thread, after any store call already running."""
    try:
        limiter = _ONE_AT_A_TIME.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(1)
        _ONE_AT_A_TIME.set(limiter)
    return await anyio.to_thread.run_sync(function, limiter=limiter)
