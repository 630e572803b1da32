"""Ctrl-C and SIGTERM stop a long-running orcmem server for good: gracefully, else by a hard exit after a moment.

A stream that never closes or a worker thread must not keep a stopped server alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator

STOP_GRACE_S = 2.0  # how long a graceful stop may take after the signal before the process leaves regardless
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def stop_on_signals(stop: Callable[[int], None], cleanup: Callable[[], None] | None = None) -> Iterator[None]:
    """Inside a running asyncio loop in the main thread: call `stop(signum)` on SIGINT or SIGTERM, and leave the
    process for good (after `cleanup`) if it is still alive `STOP_GRACE_S` later.

    The loop's own signal handling wakes it whichever thread the signal reached (a plain `signal.signal` handler
    waits until the main thread next runs Python, which an idle loop may never do).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    loop = asyncio.get_running_loop()

    def leave(status: int) -> None:
        if cleanup is not None:
            with contextlib.suppress(Exception):  # leaving matters more than tidying
                cleanup()
        os._exit(status)

    def handle(signum: int) -> None:
        timer = threading.Timer(STOP_GRACE_S, leave, args=(128 + signum,))
        timer.daemon = True
        timer.start()
        stop(signum)

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, handle, signum)
    try:
        yield
    finally:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)
