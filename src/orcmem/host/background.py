"""A stoppable background thread for the long-running processes' periodic work (team sync, freshness checks)."""

from __future__ import annotations

import threading


class BackgroundLoop:
    """A daemon thread running `run` until `close`; `run` waits on `self.stopping` between rounds."""

    name = "orcmem-background"

    def __init__(self) -> None:
        """Prepare (not start) the thread."""
        self.stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread."""
        self._thread = threading.Thread(target=self.run, name=self.name, daemon=True)
        self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        """Stop the thread (a round under way finishes first, within `timeout`)."""
        self.stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def run(self) -> None:
        """The thread's work."""
        raise NotImplementedError
