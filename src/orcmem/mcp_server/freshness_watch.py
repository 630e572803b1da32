"""The MCP server checks its project's memories against the code in the background: once soon after it starts
(when the agent's session begins), then every few minutes. A hook only ever reads the stored outcome.

After each check it also prepares the store audit (`StoreAudit.prepare`): after an upgrade that changed the secret
rules or the facts rule, every memory is scanned again in small batches with a pause between them, so the person's
first `orcmem audit` finds most of that done (docs/audit.md, Speed)."""

from __future__ import annotations

import sys
from pathlib import Path

from orcmem.host.background import BackgroundLoop
from orcmem.host.workspace import locate
from orcmem.service.memory_service import MemoryService

FIRST_CHECK_S = 5.0  # after start: the session's first prompts come first
EVERY_S = 600.0
PREPARE_PAUSE_S = 0.05  # between two batches of the audit's preparation: the server's own answers come first


class FreshnessWatch(BackgroundLoop):
    """A thread that runs `orcmem check` for one project on a timer, with its own connection to the profile."""

    name = "orcmem-freshness"

    def __init__(self, home: Path, project_dir: Path) -> None:
        """Prepare (not start) the watch of the project holding `project_dir`."""
        super().__init__()
        self.home = home
        self.project_dir = project_dir
        self.checks = 0  # completed checks, for tests
        self.prepared = 0  # completed preparations of the audit (every memory done), for tests

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
            if svc.is_enabled():
                self._prepare_audit(svc)
        finally:
            svc.close()

    def _prepare_audit(self, svc: MemoryService) -> None:
        """Prepare every memory for the store audit, batch by batch, until done or the server stops."""
        if svc.store_audit.prepare_all(lambda: not self.stopping.wait(PREPARE_PAUSE_S)):
            self.prepared += 1
