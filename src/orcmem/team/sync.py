"""Sync a profile with its team: push the outbox, pull each shared project's changes, until both are settled.

One sync per profile at a time (a lock file in its run folder); a background sync skips when one is running.
Interrupted at any moment it loses nothing: the outbox keeps a change until the server has it, and a project's
cursor moves only in the transaction that applied the changes below it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from orcmem.models.errors import TeamError
from orcmem.store.team_pool.links import pull_links, push_links
from orcmem.store.team_pool.server import PUSH_BATCH, TeamServer, connect
from orcmem.team.credentials import load_password

if TYPE_CHECKING:
    from orcmem.service.memory_service import MemoryService
    from orcmem.store.team import SharedProject

ROUNDS = 4  # push then pull, again while a pull stopped at a change that needed a push first
LOCK_NAME = "team-sync.lock"


@dataclass
class SyncReport:
    """What one sync did."""

    pushed: int = 0
    pulled: int = 0
    refused: list[str] = field(default_factory=list)  # one line per change the server refused
    read_only: bool = False
    pending: int = 0  # local changes still waiting (read-only, or written during the sync)
    indexed: int = 0  # pushed vectors moved into the team's HNSW index afterwards
    links_pushed: int = 0  # links between memories the team now holds (docs/team.md, History)
    links_pulled: int = 0  # the team's links applied here


def open_team(svc: MemoryService) -> TeamServer:
    """The profile's team database, connected.

    Raises:
        TeamError: the profile is not connected to a team, or the database cannot be reached.
    """
    link = svc.team.link()
    if link is None:
        raise TeamError("This profile is not connected to a team: orcmem team connect <postgresql URL> --team <name>.")
    return TeamServer(connect(link.url, load_password(link.url)), link.team)


@contextlib.contextmanager
def sync_lock(home: Path, *, wait: bool) -> Iterator[bool]:
    """Hold the profile's sync lock; yields False (holding nothing) when `wait` is False and another sync runs."""
    folder = home / "run"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing releases the lock, as does the process ending however it ends


def sync(svc: MemoryService, server: TeamServer) -> SyncReport:
    """Push, then pull, until nothing waits (at most ROUNDS times).

    Raises:
        TeamError: the server cannot be reached or fails mid-way (what was done so far is kept).
    """
    report = SyncReport(read_only=not server.can_write())
    if report.read_only:
        # Local changes can never be sent from here; kept queued, they would also hold back the team's versions.
        svc.team.drop_outbox()
    person = svc.settings.person()
    for _ in range(ROUNDS):
        if not report.read_only:
            _push(svc, server, person, report)
            _push_links(svc, server, person, report)  # after the memories: the pool holds both ends first
        stalled = any(_pull(svc, server, project, report) for project in svc.team.shared())
        for project in svc.team.shared():
            _pull_links(svc, server, project, report)
        if not stalled:
            break
    report.pending = svc.team.pending()
    return report


class _Queued(Protocol):
    """An outbox entry: a change of a memory or a link, of one project."""

    @property
    def project_id(self) -> str:
        """The local project it belongs to."""
        ...


T = TypeVar("T", bound=_Queued)


def _by_project(read: Callable[[int], list[T]]) -> Iterator[tuple[str, list[T]]]:
    """What waits to be pushed, a batch at a time, each batch's entries by project, until a batch is short."""
    for _ in range(1000):  # bounded: writes that keep arriving while it pushes wait for the next sync
        batch = read(PUSH_BATCH)
        for project_id in dict.fromkeys(entry.project_id for entry in batch):
            yield project_id, [entry for entry in batch if entry.project_id == project_id]
        if len(batch) < PUSH_BATCH:
            return


def _push(svc: MemoryService, server: TeamServer, person: str, report: SyncReport) -> None:
    shared = {project.project_id: project for project in svc.team.shared()}
    for project_id, changes in _by_project(svc.team.outgoing):
        project = shared.get(project_id)
        if project is None:  # no longer shared: the entries go with the share
            continue
        results = server.push(project.team_key, changes, person)
        svc.team.pushed([(result.memory_id, result.queued_at, result.revision) for result in results])
        for result in results:
            if result.instead is not None:
                svc.team.apply(project, [result.instead], advance=False)
            if result.refused:
                report.refused.append(f"{result.memory_id}: {result.refused}")
            report.pushed += result.refused is None


def _push_links(svc: MemoryService, server: TeamServer, person: str, report: SyncReport) -> None:
    """State this profile's new links between shared memories; a refused one is reported and not sent again."""
    keys = {project.project_id: project.team_key for project in svc.team.shared()}
    for project_id, links in _by_project(svc.team.outgoing_links):
        results = push_links(server, keys[project_id], links, person)
        svc.team.links_pushed([result.link for result in results])
        for result in results:
            if result.refused:
                report.refused.append(f"link {result.link.from_id} -> {result.link.to_id}: {result.refused}")
            report.links_pushed += result.refused is None


def _pull_links(svc: MemoryService, server: TeamServer, project: SharedProject, report: SyncReport) -> None:
    cursor = project.links_pulled_through
    while links := pull_links(server, project.team_key, cursor):
        report.links_pulled += svc.team.apply_links(replace(project, links_pulled_through=cursor), links)
        cursor = links[-1].seq


def _pull(svc: MemoryService, server: TeamServer, project: SharedProject, report: SyncReport) -> bool:
    """Pull a project's changes; True when it stopped at one that waits for a push."""
    cursor = project.pulled_through
    while True:
        changes = server.pull(project.team_key, cursor)
        if not changes:
            return False
        applied, changed = svc.team.apply(project, changes)
        report.pulled += changed
        if applied < changes[-1].seq:
            return True
        cursor = applied
        project = replace(project, pulled_through=cursor)


def sync_now(svc: MemoryService, *, wait: bool = True) -> SyncReport | None:
    """Sync under the profile's lock; None when `wait` is False and another sync is running.

    Raises:
        TeamError: as `sync`.
    """
    with sync_lock(svc.home, wait=wait) as held:
        if not held:
            return None
        import psycopg

        server = open_team(svc)
        try:
            report = sync(svc, server)
            if not report.read_only:
                report.indexed = server.move_fresh_vectors()  # after the push: it never waits for the index
            return report
        except psycopg.Error as exc:  # the connection broke between two steps
            raise TeamError(f"Sync with the team failed: {str(exc).strip().splitlines()[0]}") from None
        finally:
            server.close()
