"""Past sessions imported into the ledger: which a session file already is, importing one, listing and undoing."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from orcmem.models.constants import MAX_CONCURRENT_EXTRACTIONS
from orcmem.models.types import Project
from orcmem.models.vocabulary import Agent, JobState
from orcmem.service.learning import GeneratorFactory, JobOutcome, Learning
from orcmem.store.jobs import Job
from orcmem.store.runs import Run

DURATION_SAMPLE = 20  # the newest finished jobs whose median times a run
# The user asked for this run now and waits for it: it does not queue behind the background workers' two slots
# (the import itself distils one run at a time).
IMPORT_SLOTS = MAX_CONCURRENT_EXTRACTIONS + 1


class SessionStatus(StrEnum):
    """Where a past session file stands against the store."""

    NEW = "new"  # orcmem never saw it
    LIVE = "live"  # the hooks saw it while it ran: the live pipeline learns from it, the import leaves it alone
    LEARNED = "learned"  # imported and distilled up to the end the file has now
    PENDING = "pending"  # imported, not distilled yet (an interrupted or failed import, or the file grew)


@dataclass(frozen=True, slots=True)
class ImportedRun:
    """One imported session: its run, when it was imported, its job, and the memories it created."""

    run: Run
    imported_at: int
    job: Job | None
    memory_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class UndoResult:
    """What undoing a project's import erased."""

    runs: int
    memories: int


class SessionImports:
    """Imports of past sessions, over the learning half of the service."""

    def __init__(self, learning: Learning) -> None:
        """Import through `learning` (its store, rules and clock)."""
        self.learning = learning
        self.memory = learning.memory
        self.store = learning.memory.store

    def status(self, agent: Agent, session_id: str, size: int) -> SessionStatus:
        """Where the session `session_id` of `agent`, whose file is now `size` bytes, stands."""
        run = self.store.runs.find_session(str(agent), session_id)
        if run is None:
            return SessionStatus.NEW
        if self.store.runs.imported_at(run.id) is None:
            return SessionStatus.LIVE
        job = self.store.jobs.get(run.id)
        finished = job is not None and job.state in (JobState.DONE, JobState.SKIPPED)
        read_all = run.transcript_offset >= size and self.store.runs.max_seq(run.id) <= (job.through_seq if job else 0)
        return SessionStatus.LEARNED if finished and read_all else SessionStatus.PENDING

    def bring_in(
        self, project: Project, path: Path, agent: Agent, session_id: str, cwd: str | None, started_at: int
    ) -> Run:
        """Read a past session into the ledger as an ended run labelled imported (a rerun reads only what is new).

        The run is labelled before its first event is stored, so an import stopped anywhere is resumed as an
        import, never mistaken for a session the hooks saw live."""
        with self.store.db.transaction():
            if self.store.runs.find_session(str(agent), session_id) is None:
                run = self.store.runs.for_session(
                    project_id=project.id,
                    agent=str(agent),
                    session_id=session_id,
                    transcript_path=str(path),
                    cwd=cwd,
                    now=started_at,  # the run started when the session did, not when it was imported
                )
                self.store.runs.mark_imported(run.id, self.memory.clock())
        result = self.learning.ingest(
            project, path, agent=agent, session_id=session_id, cwd=cwd, ended=True, link_task=False
        )
        return result.run

    def distil(
        self, run: Run, generators: GeneratorFactory, worker_pid: int, is_alive: Callable[[int], bool]
    ) -> JobOutcome | None:
        """Queue an imported run and distil it now in this thread; None when another worker holds it (it is then
        distilled there) or the rules do not let it be queued (memory off, no finished turn)."""
        self.learning.requeue_orphans(is_alive)  # a killed import's run, still marked running, is queued again
        if self.learning.cancelled.is_set():  # stopped while the session was read: it waits for the next import
            return None
        if not self.learning.queue(run) and not self._waiting(run.id):
            return None
        job = self.store.jobs.claim(
            max_running=IMPORT_SLOTS,
            worker_pid=worker_pid,
            now=self.memory.clock(),
            is_alive=is_alive,
            run_id=run.id,
        )
        if job is None:
            return None
        return self.learning.run_job(job, generators)

    def _waiting(self, run_id: str) -> bool:
        job = self.store.jobs.get(run_id)
        return job is not None and job.state == JobState.QUEUED

    def job(self, run_id: str) -> Job | None:
        """The run's extraction job, if it has one."""
        return self.store.jobs.get(run_id)

    def imported(self, project: Project) -> list[ImportedRun]:
        """The project's imported sessions, oldest import first."""
        created = self.store.memories.created_by_imports(project.id)
        return [
            ImportedRun(run, at, self.store.jobs.get(run.id), tuple(created.get(run.id, ())))
            for run, at in self.store.runs.imported(project.id)
        ]

    def created(self, project: Project, run_id: str) -> int:
        """How many memories an imported run created (those it only confirmed not counted)."""
        return len(self.store.memories.created_by_imports(project.id).get(run_id, ()))

    def origin(self, run_id: str | None) -> str | None:
        """The session file a memory's run was imported from, or None when the run was not imported."""
        if run_id is None or self.store.runs.imported_at(run_id) is None:
            return None
        run = self.store.runs.get(run_id)
        return run.transcript_path if run is not None else None

    def undo(self, project: Project) -> UndoResult:
        """Erase every memory the project's imports created and the imported runs' ledgers (events, jobs,
        summaries); memories learned live, and those an import only confirmed, stay. Erased from the file and its
        WAL as a forgotten memory is."""
        imported = self.imported(project)
        erased = 0
        with self.store.db.transaction():
            for item in imported:
                for memory_id in item.memory_ids:
                    self.store.memories.delete(memory_id)
                    self.memory.audit("user", "memory.forget", memory_id, project.id)
                    erased += 1
                self.store.runs.delete(item.run.id)
            self.memory.audit(
                "user", "import.sessions.undo", None, project.id, metadata={"runs": len(imported), "memories": erased}
            )
        self.store.db.erase_old_pages()
        return UndoResult(len(imported), erased)

    def typical_run_ms(self) -> int | None:
        """The median time the newest finished distillations took on this machine, or None when there are none."""
        durations = self.store.jobs.durations_ms(DURATION_SAMPLE)
        return int(statistics.median(durations)) if durations else None
