"""Extraction jobs: the durable queue of runs to distil, claimed by one worker at a time."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from dataclasses import dataclass

from orcmem.models.constants import GENERATOR_TIMEOUT_S
from orcmem.models.data_shapes import Row
from orcmem.models.errors import ValidationError
from orcmem.models.vocabulary import JobState, values
from orcmem.store.connection import Repository
from orcmem.store.runs import RUN_COLUMNS, Run
from orcmem.text.redact import redact_text

JOB_STATES = values(JobState)
# A job makes one distillation call (bounded by GENERATOR_TIMEOUT_S) and one save: a claim older than four calls
# belongs to a hung worker, or to a dead one whose pid was reused, and goes back to the queue.
JOB_LEASE_MS = int(4 * GENERATOR_TIMEOUT_S * 1000)


@dataclass(frozen=True, slots=True)
class Job:
    """An extraction job: one per run, distilling the run's events up to `through_seq`."""

    run_id: str
    state: str
    error: str | None
    memories_written: int
    through_seq: int
    policy_revision: int
    worker_pid: int | None
    queued_at: int
    started_at: int | None
    finished_at: int | None
    not_before: int | None = None  # a job refused for a rate limit is not claimed before this (ms)
    attempts: int = 0  # rate-limit refusals in a row: the next wait doubles


_JOB_COLUMNS = (
    "run_id, state, error, memories_written, through_seq, policy_revision, worker_pid, queued_at, started_at, "
    "finished_at, not_before, attempts"
)


class JobRepository(Repository):
    """The durable extraction queue: one row per run."""

    def get(self, run_id: str) -> Job | None:
        """The job of a run, or None."""
        row = self.db.query_one(f"SELECT {_JOB_COLUMNS} FROM extraction_jobs WHERE run_id = ?", (run_id,))
        return Job(*row) if row else None

    def enqueue(self, run_id: str, *, policy_revision: int, now: int) -> bool:
        """Queue a run (again) unless it is queued or running already; returns whether it was queued."""
        with self.db.transaction():
            job = self.get(run_id)
            if job is not None and job.state in (JobState.QUEUED, JobState.RUNNING):
                return False
            self.db.query(
                "INSERT INTO extraction_jobs (run_id, state, policy_revision, queued_at) VALUES (?, 'queued', ?, ?) "
                "ON CONFLICT(run_id) DO UPDATE SET state = 'queued', error = NULL, "
                "policy_revision = excluded.policy_revision, queued_at = excluded.queued_at, "
                "started_at = NULL, finished_at = NULL, worker_pid = NULL, not_before = NULL, attempts = 0",
                (run_id, policy_revision, now),
            )
        return True

    def claim(
        self,
        *,
        max_running: int,
        worker_pid: int,
        now: int,
        is_alive: Callable[[int], bool],
        run_id: str | None = None,
    ) -> Job | None:
        """Take the oldest queued job (or `run_id`'s, when it is queued) if fewer than `max_running` run, across
        every process.

        Jobs marked running by a worker that no longer exists go back to the queue first, so a killed worker
        loses nothing; so do jobs claimed longer than `JOB_LEASE_MS` ago, whose worker is hung or whose pid now
        belongs to another process.
        """
        with self.db.transaction():
            self.requeue_orphans(now=now, is_alive=is_alive)
            running = self.db.query_one("SELECT count(*) FROM extraction_jobs WHERE state = 'running'")
            if running and int(running[0]) >= max_running:
                return None
            only = "AND run_id = ?" if run_id is not None else ""
            row = self.db.query_one(
                f"SELECT {_JOB_COLUMNS} FROM extraction_jobs WHERE state = 'queued' {only} "
                "AND (not_before IS NULL OR not_before <= ?) ORDER BY queued_at, run_id LIMIT 1",
                ((run_id,) if run_id is not None else ()) + (now,),
            )
            if row is None:
                return None
            self.db.query(
                "UPDATE extraction_jobs SET state = 'running', worker_pid = ?, started_at = ?, heartbeat_at = ? "
                "WHERE run_id = ?",
                (worker_pid, now, now, row[0]),
            )
        return self.get(row[0])

    def requeue_orphans(self, *, now: int, is_alive: Callable[[int], bool]) -> int:
        """Put back in the queue the jobs marked running by a worker that no longer exists, or whose lease ran out
        (its worker is hung, or its pid now belongs to another process); how many."""
        requeued = 0
        with self.db.transaction():
            rows = self.db.query("SELECT run_id, worker_pid, heartbeat_at FROM extraction_jobs WHERE state = 'running'")
            for run_id, pid, heartbeat in rows:
                expired = heartbeat is None or int(heartbeat) < now - JOB_LEASE_MS
                if pid is None or expired or not is_alive(int(pid)):
                    self.db.query(
                        "UPDATE extraction_jobs SET state = 'queued', worker_pid = NULL, started_at = NULL "
                        "WHERE run_id = ?",
                        (run_id,),
                    )
                    requeued += 1
        return requeued

    def set_through(self, run_id: str, through_seq: int) -> None:
        """Record which events this job distils."""
        with self.db.transaction():
            self.db.query("UPDATE extraction_jobs SET through_seq = ? WHERE run_id = ?", (through_seq, run_id))

    def holds(self, run_id: str, worker_pid: int | None) -> bool:
        """Whether the job is still running under `worker_pid` (its lease was not given to another worker)."""
        row = self.db.query_one(
            "SELECT 1 FROM extraction_jobs WHERE run_id = ? AND state = 'running' AND worker_pid IS ?",
            (run_id, worker_pid),
        )
        return row is not None

    def finish(
        self, run_id: str, state: str, *, error: str | None, written: int, now: int, worker_pid: int | None = None
    ) -> None:
        """End a job as done, failed or skipped (the error is redacted); with `worker_pid`, only if that worker
        still holds it."""
        if state not in JOB_STATES:
            raise ValidationError(f"unknown job state {state!r}")
        mine = "" if worker_pid is None else " AND worker_pid = ?"
        with self.db.transaction():
            self.db.query(
                "UPDATE extraction_jobs SET state = ?, error = ?, memories_written = ?, finished_at = ?, "
                f"worker_pid = NULL WHERE run_id = ?{mine}",
                (state, redact_text(error).text if error else None, written, now, run_id)
                + (() if worker_pid is None else (worker_pid,)),
            )

    def release(self, run_id: str, worker_pid: int | None) -> None:
        """Put a running job back in the queue (its worker was stopped), if that worker still holds it."""
        with self.db.transaction():
            self.db.query(
                "UPDATE extraction_jobs SET state = 'queued', worker_pid = NULL, started_at = NULL "
                "WHERE run_id = ? AND state = 'running' AND worker_pid IS ?",
                (run_id, worker_pid),
            )

    def defer(self, run_id: str, worker_pid: int | None, *, not_before: int, reason: str) -> None:
        """Put a running job back in the queue until `not_before` (a rate limit refused its call), if that worker
        still holds it; it counts one more attempt."""
        with self.db.transaction():
            self.db.query(
                "UPDATE extraction_jobs SET state = 'queued', worker_pid = NULL, started_at = NULL, error = ?, "
                "not_before = ?, attempts = attempts + 1 WHERE run_id = ? AND state = 'running' AND worker_pid IS ?",
                (reason, not_before, run_id, worker_pid),
            )

    def claimable(self, now: int) -> int:
        """How many queued jobs may be claimed now (not waiting out a rate limit)."""
        row = self.db.query_one(
            "SELECT count(*) FROM extraction_jobs WHERE state = 'queued' AND (not_before IS NULL OR not_before <= ?)",
            (now,),
        )
        return int(row[0]) if row else 0

    def next_not_before(self, now: int) -> int | None:
        """When the next queued job waiting out a rate limit may be claimed (ms), or None."""
        row = self.db.query_one(
            "SELECT MIN(not_before) FROM extraction_jobs WHERE state = 'queued' AND not_before > ?", (now,)
        )
        return int(row[0]) if row and row[0] is not None else None

    def skip_waiting(self, reason: str, now: int) -> int:
        """Skip every queued job with `reason` (memory or extraction was turned off)."""
        with self.db.transaction():
            rows = self.db.query("SELECT run_id FROM extraction_jobs WHERE state = 'queued'")
            self.db.query(
                "UPDATE extraction_jobs SET state = 'skipped', error = ?, finished_at = ? WHERE state = 'queued'",
                (reason, now),
            )
        return len(rows)

    def list(self, project_id: str | None, limit: int = 50) -> list[tuple[Job, Run]]:
        """Jobs with their runs, newest first."""
        cols = ", ".join("j." + c.strip() for c in _JOB_COLUMNS.split(","))
        run_cols = ", ".join("r." + c.strip() for c in RUN_COLUMNS.split(","))
        where = "WHERE r.project_id = ?" if project_id else ""
        params: Row = (project_id, limit) if project_id else (limit,)
        rows = self.db.query(
            f"SELECT {cols}, {run_cols} FROM extraction_jobs j JOIN runs r ON r.id = j.run_id {where} "
            "ORDER BY j.queued_at DESC LIMIT ?",
            params,
        )
        width = len(_JOB_COLUMNS.split(","))
        return [(Job(*row[:width]), Run(*row[width:])) for row in rows]

    def durations_ms(self, limit: int) -> builtins.list[int]:
        """How long the newest `limit` jobs that ended done took, claim to finish, in milliseconds."""
        rows = self.db.query(
            "SELECT finished_at - started_at FROM extraction_jobs WHERE state = 'done' AND started_at IS NOT NULL "
            "AND finished_at >= started_at ORDER BY finished_at DESC LIMIT ?",
            (limit,),
        )
        return [int(row[0]) for row in rows]

    def counts(self) -> dict[str, int]:
        """How many jobs are in each state."""
        return {
            str(state): int(n)
            for state, n in self.db.query("SELECT state, count(*) FROM extraction_jobs GROUP BY state")
        }
