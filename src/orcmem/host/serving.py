"""A uvicorn server that Ctrl-C or SIGTERM stops for good: a graceful shutdown, else a hard exit after a moment.

Both of orcmem's loopback servers (the Memory page and MCP over HTTP) run on it. uvicorn's own handling re-raises
the signal after shutdown, which a process that ignores SIGINT never sees (it then exits 0), and a stream that
never closes can hold its shutdown forever.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import uvicorn

from orcmem.host.stopping import stop_on_signals


class StoppableServer(uvicorn.Server):
    """uvicorn's server; `stopped_by` names the signal that stopped it (None: it ended by itself)."""

    stopped_by: int | None = None
    cleanup: Callable[[], None] | None = None  # runs before a hard exit, when the graceful one takes too long
    signals_outside = False  # the caller watches the signals from before the server starts (and calls `stop`)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Stop on SIGINT or SIGTERM while serving."""
        if self.signals_outside:
            yield
            return
        with stop_on_signals(self.stop, self.cleanup):
            yield

    def stop(self, signum: int) -> None:
        """Shut down gracefully because of `signum`."""
        self.stopped_by = signum
        self.should_exit = True

    @property
    def exit_status(self) -> int:
        """The status the process should exit with: 128 + the signal, or 0."""
        return 0 if self.stopped_by is None else 128 + self.stopped_by
