"""How a server loads its MCP stack: one owner for the server's and the sandbox's start.

Loading the stack creates some 100,000 objects that live as long as the server. The cyclic
garbage collector scanning them again and again while they load took about a tenth of a start,
so it is off while they load; then they are frozen out of its scans (they would survive every
one) and it runs as usual for what requests create.

Ctrl-C while they load ends the process at once with exit code 130: nothing is open yet, and a
KeyboardInterrupt raised inside pydantic-core's schema building comes out as a SchemaError with
a traceback (the zipapp's own start does the same until the program runs: tools/zipapps.py).
"""

from __future__ import annotations

import gc
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


def _exit_at_once(signum: int, frame: FrameType | None) -> None:
    os._exit(130)


@contextmanager
def loading_the_stack() -> Iterator[None]:
    """Import the server's modules inside this block."""
    main = threading.current_thread() is threading.main_thread()  # only it may set handlers
    previous = signal.signal(signal.SIGINT, _exit_at_once) if main else None
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()
        if main:
            signal.signal(signal.SIGINT, previous)
