"""The MCP server checks its project's memories against the code in the background: once soon after it starts
(when the agent's session begins), then every few minutes. A hook only ever reads the stored outcome."""

from __future__ import annotations

import sys
from pathlib import Path

from orcmem.host.background import BackgroundLoop
from orcmem.host.workspace import locate
from orcmem.service.memory_service import MemoryService

FIRST_CHECK_S = 5.0  # after start: the session's first prompts come first
EVERY_S = 600.0


class FreshnessWatch(BackgroundLoop):
    """A thread that runs `orcmem check` for one project on a timer, with its own connection to the profile."""

    name = "orcmem-freshness"

    def __init__(self, home: Path, project_dir: Path) -> None:
        """Prepare (not start) the watch of the project holding `project_dir`."""
        super().__init__()
        self.home = home
        self.project_dir = project_dir
        self.checks = 0  # completed checks, for tests

    def run(self) -> None:
        """Check soon after start, then every EVERY_S."""
        wait = FIRST_CHECK_S
        while not self.stopping.wait(wait):
            wait = EVERY_S
            try:
                self._check()
            except Exception as exc:  # a check that fails waits for the next; the server keeps serving
                print(f"orcmem mcp: freshness check failed: {type(exc).__name__}: {exc}", file=sys.stderr)

    def _check(self) -> None:

        svc = MemoryService.open(self.home, vectors=False)
        try:
            project = svc.project(locate(self.project_dir), create=False)
            if project is not None and svc.is_enabled():
                svc.check_freshness(project)  # against the main working tree, as every other check
                self.checks += 1
        finally:
            svc.close()
