"""Team sync in the background of a long-running process (the MCP server): what is written here goes out within a
second, and what the team writes comes in as soon as the database announces it (PostgreSQL LISTEN/NOTIFY), else
on a timer. It never runs in a hook, and a team database that cannot be reached only delays it.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orcmem.host.background import BackgroundLoop
from orcmem.models.errors import OrcmemError
from orcmem.service.memory_service import MemoryService
from orcmem.store.team_pool.server import channel, connect
from orcmem.team.credentials import load_password
from orcmem.team.sync import sync_now

if TYPE_CHECKING:
    from orcmem.embed.embedder import Embedder

log = logging.getLogger(__name__)

LOCAL_POLL_S = 0.5  # how often the outbox is looked at (one indexed SQLite count)
LINK_POLL_S = 2.0  # how soon a profile connected while the server runs starts syncing
PULL_INTERVAL_S = 30.0  # a pull without an announcement, in case one was missed
RETRY_MIN_S, RETRY_MAX_S = 2.0, 120.0  # after a failure, wait this long, doubling up to the most


class TeamSyncer(BackgroundLoop):
    """A thread that keeps a connected profile in sync; nothing happens for a profile without a team."""

    name = "orcmem-team-sync"

    def __init__(self, home: Path, embedder: Embedder | None = None) -> None:
        """Prepare (not start) a syncer for the profile at `home`; `embedder` embeds what arrives without a vector."""
        super().__init__()
        self.home = home
        self.embedder = embedder
        self.syncs = 0  # completed syncs, for tests and the log

    def run(self) -> None:
        """Wait for the profile to share a project with a team, then keep it in sync until closed."""
        try:
            if not self._wait_for_a_team():
                return
            svc = MemoryService.open(self.home, embedder=self.embedder)
        except OrcmemError as exc:
            log.warning("team sync: cannot open the profile: %s", exc)
            return
        try:
            self._loop(svc)
        finally:
            svc.close()

    def _wait_for_a_team(self) -> bool:
        """Watch the profile through a light connection (no vectors) until it shares a project with a team; False
        when stopped first. Most profiles never connect, and their server should not hold a second full one."""
        probe = MemoryService.open(self.home, vectors=False)
        try:
            while not self.stopping.is_set():
                if probe.team.link() is not None and probe.team.shared():
                    return True
                self.stopping.wait(LINK_POLL_S)
            return False
        finally:
            probe.close()

    def _loop(self, svc: MemoryService) -> None:
        listener: Any = None
        retry = RETRY_MIN_S
        next_pull = 0.0
        while not self.stopping.is_set():
            link = svc.team.link()
            if link is None or not svc.team.shared() or not svc.is_enabled():  # off means off: no sync either
                _close(listener)
                listener = None
                self.stopping.wait(LINK_POLL_S)
                continue
            try:
                if listener is None:
                    listener = _listen(link.url, link.team)
                    next_pull = 0.0  # announcements before we listened are missed: pull once now
                announced = _announced(listener, LOCAL_POLL_S)
                if announced or svc.team.pending() or time.monotonic() >= next_pull:
                    self._sync(svc)
                    next_pull = time.monotonic() + PULL_INTERVAL_S
                retry = RETRY_MIN_S
            except Exception as exc:  # an unreachable or failing team database only delays the sync
                log.warning("team sync failed, retrying in %.0f s: %s", retry, exc)
                _close(listener)
                listener = None
                self.stopping.wait(retry)
                retry = min(RETRY_MAX_S, retry * 2)
        _close(listener)

    def _sync(self, svc: MemoryService) -> None:

        if sync_now(svc, wait=False) is not None:
            self.syncs += 1


def _listen(url: str, team: str) -> Any:
    from psycopg import sql

    conn = connect(url, load_password(url))
    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel(team))))
    return conn


def _announced(listener: Any, timeout: float) -> bool:
    """Wait up to `timeout` for the team's announcement; whether one came."""
    return any(True for _ in listener.notifies(timeout=timeout, stop_after=1))


def _close(listener: Any) -> None:
    if listener is not None:
        try:
            listener.close()
        except Exception:  # closing a broken connection may fail; it is dropped either way
            log.debug("closing the team listener failed", exc_info=True)
