"""The MCP server checks its project's memories against the code in the background: once soon after it starts
(when the agent's session begins), then every few minutes. A hook only ever reads the stored outcome."""

from __future__ import annotations

import logging
import sys
import threading
from pathlib import Path

log = logging.getLogger(__name__)

FIRST_CHECK_S = 5.0  # after start: the session's first prompts come first
EVERY_S = 600.0


class FreshnessWatch:
    """A thread that runs `orcmem check` for one project on a timer, with its own connection to the profile."""

    def __init__(self, home: Path, project_dir: Path) -> None:
        """Prepare (not start) the watch of the project holding `project_dir`."""
        self.home = home
        self.project_dir = project_dir
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.checks = 0  # completed checks, for tests

    def start(self) -> None:
        """Start the thread."""
        self._thread = threading.Thread(target=self._run, name="orcmem-freshness", daemon=True)
        self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        """Stop the thread (a check under way finishes first, within `timeout`)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        wait = FIRST_CHECK_S
        while not self._stop.wait(wait):
            wait = EVERY_S
            try:
                self._check()
            except Exception as exc:  # a check that fails waits for the next; the server keeps serving
                print(f"orcmem mcp: freshness check failed: {type(exc).__name__}: {exc}", file=sys.stderr)

    def _check(self) -> None:
        from orcmem.service.memory_service import MemoryService
        from orcmem.workspace import locate

        svc = MemoryService.open(self.home, vectors=False)
        try:
            project = svc.project(locate(self.project_dir), create=False)
            if project is not None and svc.is_enabled():
                svc.check_freshness(project)  # against the main working tree, as every other check
                self.checks += 1
        finally:
            svc.close()
