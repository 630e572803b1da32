"""Runs, their events (redacted as they are stored), extraction jobs and run summaries."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from orcmem.models import EventKind, LedgerEvent
from orcmem.models.constants import GENERATOR_TIMEOUT_S, OPENING_REQUEST_SCAN
from orcmem.models.ledger import NO_PENDING_TURN, TurnState
from orcmem.redact import redact_label, redact_text
from orcmem.store.connection import Database

JOB_STATES = ("queued", "running", "done", "failed", "skipped")
# A job makes one distillation call (bounded by GENERATOR_TIMEOUT_S) and one save: a claim older than four calls
# belongs to a hung worker, or to a dead one whose pid was reused, and goes back to the queue.
JOB_LEASE_MS = int(4 * GENERATOR_TIMEOUT_S * 1000)
DIGEST_KINDS = (EventKind.MESSAGE, EventKind.TOOL_STARTED, EventKind.TOOL_COMPLETED, EventKind.FILE_CHANGED)


@dataclass(frozen=True, slots=True)
class Run:
    """One agent session (or one task run) in a project."""

    id: str
    project_id: str
    task_id: str | None
    agent: str
    session_id: str | None
    kind: str  # conversation | task | discussion
    title: str | None
    model: str | None
    cwd: str | None
    transcript_path: str | None
    transcript_offset: int
    turns: int
    skipped_lines: int
    state: str  # open | ended
    started_at: int
    last_turn_at: int | None
    ended_at: int | None
    pending_prompts: int = 0  # main-chain prompts not answered yet when the last ingest ended
    pending_sidechain_prompts: int = 0
    distilled_seq: int = 0  # the newest event a finished pass distilled; the next pass reads only what follows
    agent_command: str | None = None  # JSON argv of the agent CLI seen running the session's hooks

    @property
    def turn_state(self) -> TurnState:
        """The prompts this run still waits to see answered."""
        return TurnState(self.pending_prompts, self.pending_sidechain_prompts)


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


@dataclass(frozen=True, slots=True)
class Summary:
    """What a run was asked, what it did, how it ended, and what it left open."""

    run_id: str
    task_id: str | None
    project_id: str
    request: str
    work_done: str
    outcome: str
    open_items: tuple[str, ...]
    model: str | None
    created_at: int


_RUN_COLUMNS = (
    "id, project_id, task_id, agent, session_id, kind, title, model, cwd, transcript_path, transcript_offset, "
    "turns, skipped_lines, state, started_at, last_turn_at, ended_at, pending_prompts, pending_sidechain_prompts, "
    "distilled_seq, agent_command"
)
_JOB_COLUMNS = (
    "run_id, state, error, memories_written, through_seq, policy_revision, worker_pid, queued_at, started_at, "
    "finished_at"
)
_SUMMARY_COLUMNS = "run_id, task_id, project_id, request, work_done, outcome, open_items, model, created_at"


def _summary(row: Sequence[Any]) -> Summary:
    return Summary(*row[:6], tuple(json.loads(row[6] or "[]")), row[7], row[8])


class RunRepository:
    """Runs and their events."""

    def __init__(self, db: Database) -> None:
        """Wrap an open database."""
        self.db = db

    def get(self, run_id: str) -> Run | None:
        """The run with this id, or None."""
        row = self.db.query_one(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", (run_id,))
        return Run(*row) if row else None

    def for_session(
        self, *, project_id: str, agent: str, session_id: str, transcript_path: str | None, cwd: str | None, now: int
    ) -> Run:
        """The run of an agent session, created on first sight."""
        with self.db.transaction():
            self.db.query(
                "INSERT INTO runs (id, project_id, agent, session_id, cwd, transcript_path, started_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(agent, session_id) DO UPDATE SET "
                "transcript_path = COALESCE(excluded.transcript_path, runs.transcript_path), "
                "cwd = COALESCE(excluded.cwd, runs.cwd)",
                ("run_" + secrets.token_hex(12), project_id, agent, session_id, cwd, transcript_path, now),
            )
            row = self.db.query_one(
                f"SELECT {_RUN_COLUMNS} FROM runs WHERE agent = ? AND session_id = ?", (agent, session_id)
            )
        assert row is not None
        return Run(*row)

    def append(
        self,
        run_id: str,
        events: Sequence[LedgerEvent],
        *,
        offset: int,
        turns: int,
        skipped: int,
        model: str | None,
        title: str | None,
        now: int,
        pending: TurnState = NO_PENDING_TURN,
        from_offset: int | None = None,
        from_pending: TurnState | None = None,
    ) -> bool:
        """Store new events (redacted), move the transcript offset from `from_offset` and keep the turn count and
        the prompts still unanswered; False (nothing written) when another ingest changed either first."""
        with self.db.transaction():
            row = self.db.query_one(
                "SELECT transcript_offset, pending_prompts, pending_sidechain_prompts FROM runs WHERE id = ?", (run_id,)
            )
            if row is None or (from_offset is not None and int(row[0]) != from_offset):
                return False
            if from_pending is not None and TurnState(int(row[1]), int(row[2])) != from_pending:
                return False
            last = self.max_seq(run_id)
            self.db.query_many(
                "INSERT INTO events (run_id, seq, kind, role, message_id, tool_call_id, name, text, is_error, "
                "redacted, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (_event_row(run_id, seq, event, now) for seq, event in enumerate(events, start=last + 1)),
            )
            self.db.query(
                "UPDATE runs SET transcript_offset = ?, turns = turns + ?, skipped_lines = skipped_lines + ?, "
                "pending_prompts = ?, pending_sidechain_prompts = ?, "
                "model = COALESCE(?, model), title = COALESCE(?, title), "
                "last_turn_at = CASE WHEN ? > 0 THEN ? ELSE last_turn_at END WHERE id = ?",
                (
                    offset,
                    turns,
                    skipped,
                    pending.pending,
                    pending.pending_sidechain,
                    model,
                    redact_text(title).text if title else None,
                    turns,
                    now,
                    run_id,
                ),
            )
            return True

    def touch(self, run_id: str, now: int) -> None:
        """Record that the run just finished a turn."""
        with self.db.transaction():
            self.db.query("UPDATE runs SET last_turn_at = ? WHERE id = ?", (now, run_id))

    def end(self, run_id: str, now: int) -> None:
        """Mark the run's session as ended."""
        with self.db.transaction():
            self.db.query(
                "UPDATE runs SET state = 'ended', ended_at = COALESCE(ended_at, ?) WHERE id = ?", (now, run_id)
            )

    def reopen(self, run_id: str) -> None:
        """A session resumed after it ended is open again, and waits to go idle or end like any open one."""
        with self.db.transaction():
            self.db.query("UPDATE runs SET state = 'open', ended_at = NULL WHERE id = ? AND state = 'ended'", (run_id,))

    def link_task(self, run_id: str, task_id: str, kind: str) -> None:
        """Attach a run to the task it works on, as a task run or a task discussion."""
        with self.db.transaction():
            self.db.query("UPDATE runs SET task_id = ?, kind = ? WHERE id = ?", (task_id, kind, run_id))

    def set_agent_command(self, run_id: str, command: str) -> None:
        """Remember the agent CLI (a JSON argv) that ran the session's hooks."""
        with self.db.transaction():
            self.db.query("UPDATE runs SET agent_command = ? WHERE id = ?", (command, run_id))

    def mark_distilled(self, run_id: str, through_seq: int) -> None:
        """Record that every event up to `through_seq` has been distilled."""
        with self.db.transaction():
            self.db.query("UPDATE runs SET distilled_seq = MAX(distilled_seq, ?) WHERE id = ?", (through_seq, run_id))

    def max_seq(self, run_id: str) -> int:
        """The seq of the run's newest event (0 when it has none)."""
        row = self.db.query_one("SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = ?", (run_id,))
        return int(row[0]) if row else 0

    def events(
        self, run_id: str, *, newest: int, through_seq: int | None = None, after_seq: int = 0
    ) -> list[LedgerEvent]:
        """The newest `newest` digest events of a run after `after_seq` (up to `through_seq`), oldest first."""
        marks = ", ".join("?" * len(DIGEST_KINDS))
        rows = self.db.query(
            "SELECT kind, at, role, text, message_id, tool_call_id, name, is_error FROM events "
            f"WHERE run_id = ? AND kind IN ({marks}) AND seq > ? AND seq <= ? ORDER BY seq DESC LIMIT ?",
            (
                run_id,
                *[str(k) for k in DIGEST_KINDS],
                after_seq,
                through_seq if through_seq is not None else 2**62,
                newest,
            ),
        )
        return [_event(row) for row in reversed(rows)]

    def opening_request(self, run_id: str) -> LedgerEvent | None:
        """The run's first user message among its first messages (OPENING_REQUEST_SCAN of them)."""
        row = self.db.query_one(
            "SELECT kind, at, role, text, message_id, tool_call_id, name, is_error FROM "
            "(SELECT * FROM events WHERE run_id = ? AND kind = ? ORDER BY seq LIMIT ?) WHERE role = 'user' "
            "ORDER BY seq LIMIT 1",
            (run_id, str(EventKind.MESSAGE), OPENING_REQUEST_SCAN),
        )
        return _event(row) if row else None

    def waiting(self, idle_before: int) -> list[Run]:
        """Runs with events not yet distilled whose last turn is older than `idle_before` (or that ended)."""
        rows = self.db.query(
            f"SELECT {', '.join('r.' + c.strip() for c in _RUN_COLUMNS.split(','))} FROM runs r "
            "LEFT JOIN extraction_jobs j ON j.run_id = r.id "
            "WHERE (r.turns > 0 OR r.kind = 'task') AND r.kind != 'discussion' "
            "AND (r.state = 'ended' OR COALESCE(r.last_turn_at, r.started_at) <= ?) "
            "AND (SELECT COALESCE(MAX(seq), 0) FROM events e WHERE e.run_id = r.id) > COALESCE(j.through_seq, 0) "
            "AND COALESCE(j.state, '') NOT IN ('queued', 'running')",
            (idle_before,),
        )
        return [Run(*row) for row in rows]

    def next_idle_deadline(self, idle_ms: int) -> int | None:
        """When the next open run with undistilled events becomes idle, or None."""
        row = self.db.query_one(
            "SELECT MIN(COALESCE(r.last_turn_at, r.started_at)) FROM runs r "
            "LEFT JOIN extraction_jobs j ON j.run_id = r.id "
            "WHERE r.state = 'open' AND (r.turns > 0 OR r.kind = 'task') AND r.kind != 'discussion' "
            "AND (SELECT COALESCE(MAX(seq), 0) FROM events e WHERE e.run_id = r.id) > COALESCE(j.through_seq, 0) "
            "AND COALESCE(j.state, '') NOT IN ('queued', 'running')"
        )
        return int(row[0]) + idle_ms if row and row[0] is not None else None

    def list(self, project_id: str | None, limit: int = 50) -> list[Run]:
        """Runs of a project (or all), newest first."""
        if project_id is None:
            rows = self.db.query(f"SELECT {_RUN_COLUMNS} FROM runs ORDER BY started_at DESC LIMIT ?", (limit,))
        else:
            rows = self.db.query(
                f"SELECT {_RUN_COLUMNS} FROM runs WHERE project_id = ? ORDER BY started_at DESC LIMIT ?",
                (project_id, limit),
            )
        return [Run(*row) for row in rows]

    def delete(self, run_id: str) -> None:
        """Delete a run and its events, job and summary (its memories stay, unlinked)."""
        with self.db.transaction():
            self.db.query("DELETE FROM runs WHERE id = ?", (run_id,))


def _event_row(run_id: str, seq: int, event: LedgerEvent, now: int) -> tuple[Any, ...]:
    """An event's row in `events`, its text and tool name redacted."""
    cleaned = redact_text(event.text)
    return (
        run_id,
        seq,
        str(event.kind),
        event.role,
        event.message_id,
        event.tool_call_id,
        redact_label(event.name) if event.name else None,
        cleaned.text,
        int(event.is_error),
        int(cleaned.changed),
        event.at or now,
    )


def _event(row: Sequence[Any]) -> LedgerEvent:
    return LedgerEvent(
        kind=EventKind(row[0]),
        at=int(row[1]),
        role=row[2],
        text=row[3] or "",
        message_id=row[4],
        tool_call_id=row[5],
        name=row[6],
        is_error=bool(row[7]),
    )


@dataclass(frozen=True, slots=True)
class Task:
    """A unit of work runs may belong to: its title, spec and status."""

    id: str
    project_id: str
    title: str
    spec: str | None
    status: str  # open | in_progress | review | done
    created_at: int
    updated_at: int


TASK_STATUSES = ("open", "in_progress", "review", "done")
_TASK_COLUMNS = "id, project_id, title, spec, status, created_at, updated_at"


class TaskRepository:
    """Tasks of a project."""

    def __init__(self, db: Database) -> None:
        """Wrap an open database."""
        self.db = db

    def add(self, project_id: str, title: str, spec: str | None, now: int) -> Task:
        """Create an open task (title and spec redacted)."""
        task_id = "task_" + secrets.token_hex(8)
        title = redact_text(title).text
        spec = redact_text(spec).text if spec else spec
        with self.db.transaction():
            self.db.query(
                "INSERT INTO tasks (id, project_id, title, spec, status, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, 'open', ?, ?)",
                (task_id, project_id, title, spec, now, now),
            )
        task = self.get(task_id)
        assert task is not None
        return task

    def get(self, task_id: str) -> Task | None:
        """The task with this id, or None."""
        row = self.db.query_one(f"SELECT {_TASK_COLUMNS} FROM tasks WHERE id = ?", (task_id,))
        return Task(*row) if row else None

    def set_status(self, task_id: str, status: str, now: int) -> None:
        """Move a task to another status."""
        if status not in TASK_STATUSES:
            raise ValueError(f"unknown task status {status!r}")
        with self.db.transaction():
            self.db.query("UPDATE tasks SET status = ?, updated_at = ? WHERE id = ?", (status, now, task_id))

    def list(self, project_id: str, statuses: tuple[str, ...] = ()) -> list[Task]:
        """A project's tasks, most recently changed first."""
        where = "project_id = ?"
        params: list[Any] = [project_id]
        if statuses:
            where += f" AND status IN ({', '.join('?' * len(statuses))})"
            params += list(statuses)
        rows = self.db.query(
            f"SELECT {_TASK_COLUMNS} FROM tasks WHERE {where} ORDER BY updated_at DESC, rowid DESC", params
        )
        return [Task(*row) for row in rows]

    def title_and_spec(self, task_id: str) -> tuple[str | None, str | None]:
        """A task's title and spec, or (None, None) when it is gone."""
        task = self.get(task_id)
        return (task.title, task.spec) if task else (None, None)

    def open_titles(self, project_id: str, limit: int = 8) -> list[str]:
        """Titles of a project's tasks in progress or in review, newest first."""
        return [task.title for task in self.list(project_id, ("in_progress", "review"))[:limit]]

    def summaries(self, task_id: str) -> list[Summary]:
        """Summaries of the runs on a task, oldest first."""
        rows = self.db.query(
            f"SELECT {_SUMMARY_COLUMNS} FROM session_summaries WHERE task_id = ? ORDER BY created_at, rowid",
            (task_id,),
        )
        return [_summary(row) for row in rows]


class JobRepository:
    """The durable extraction queue: one row per run."""

    def __init__(self, db: Database) -> None:
        """Wrap an open database."""
        self.db = db

    def get(self, run_id: str) -> Job | None:
        """The job of a run, or None."""
        row = self.db.query_one(f"SELECT {_JOB_COLUMNS} FROM extraction_jobs WHERE run_id = ?", (run_id,))
        return Job(*row) if row else None

    def enqueue(self, run_id: str, *, policy_revision: int, now: int) -> bool:
        """Queue a run (again) unless it is queued or running already; returns whether it was queued."""
        with self.db.transaction():
            job = self.get(run_id)
            if job is not None and job.state in ("queued", "running"):
                return False
            self.db.query(
                "INSERT INTO extraction_jobs (run_id, state, policy_revision, queued_at) VALUES (?, 'queued', ?, ?) "
                "ON CONFLICT(run_id) DO UPDATE SET state = 'queued', error = NULL, "
                "policy_revision = excluded.policy_revision, queued_at = excluded.queued_at, "
                "started_at = NULL, finished_at = NULL, worker_pid = NULL",
                (run_id, policy_revision, now),
            )
        return True

    def claim(self, *, max_running: int, worker_pid: int, now: int, is_alive: Callable[[int], bool]) -> Job | None:
        """Take the oldest queued job if fewer than `max_running` run, across every process.

        Jobs marked running by a worker that no longer exists go back to the queue first, so a killed worker
        loses nothing; so do jobs claimed longer than `JOB_LEASE_MS` ago, whose worker is hung or whose pid now
        belongs to another process.
        """
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
            running = self.db.query_one("SELECT count(*) FROM extraction_jobs WHERE state = 'running'")
            if running and int(running[0]) >= max_running:
                return None
            row = self.db.query_one(
                f"SELECT {_JOB_COLUMNS} FROM extraction_jobs WHERE state = 'queued' ORDER BY queued_at, run_id LIMIT 1"
            )
            if row is None:
                return None
            self.db.query(
                "UPDATE extraction_jobs SET state = 'running', worker_pid = ?, started_at = ?, heartbeat_at = ? "
                "WHERE run_id = ?",
                (worker_pid, now, now, row[0]),
            )
        return self.get(row[0])

    def running_pids(self) -> list[int]:
        """Worker pids of running jobs."""
        return [
            int(pid)
            for (pid,) in self.db.query(
                "SELECT DISTINCT worker_pid FROM extraction_jobs WHERE state = 'running' AND worker_pid IS NOT NULL"
            )
        ]

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
            raise ValueError(f"unknown job state {state!r}")
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
        run_cols = ", ".join("r." + c.strip() for c in _RUN_COLUMNS.split(","))
        where = "WHERE r.project_id = ?" if project_id else ""
        params: tuple[Any, ...] = (project_id, limit) if project_id else (limit,)
        rows = self.db.query(
            f"SELECT {cols}, {run_cols} FROM extraction_jobs j JOIN runs r ON r.id = j.run_id {where} "
            "ORDER BY j.queued_at DESC LIMIT ?",
            params,
        )
        width = len(_JOB_COLUMNS.split(","))
        return [(Job(*row[:width]), Run(*row[width:])) for row in rows]

    def counts(self) -> dict[str, int]:
        """How many jobs are in each state."""
        return {
            str(state): int(n)
            for state, n in self.db.query("SELECT state, count(*) FROM extraction_jobs GROUP BY state")
        }


class SummaryRepository:
    """Run summaries, one per run."""

    def __init__(self, db: Database) -> None:
        """Wrap an open database."""
        self.db = db

    def upsert(self, summary: Summary) -> None:
        """Store a run's summary (redacted), replacing an earlier one of the same run (a later pass grows it)."""
        clean = lambda text: redact_text(text).text  # noqa: E731
        with self.db.transaction():
            self.db.query(
                "INSERT INTO session_summaries (run_id, task_id, project_id, request, work_done, outcome, open_items, "
                "model, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(run_id) DO UPDATE SET "
                "request = excluded.request, work_done = excluded.work_done, outcome = excluded.outcome, "
                "open_items = excluded.open_items, model = excluded.model, created_at = excluded.created_at",
                (
                    summary.run_id,
                    summary.task_id,
                    summary.project_id,
                    clean(summary.request),
                    clean(summary.work_done),
                    clean(summary.outcome),
                    json.dumps([clean(item) for item in summary.open_items]),
                    summary.model,
                    summary.created_at,
                ),
            )

    def get(self, run_id: str) -> Summary | None:
        """The summary of a run, or None."""
        row = self.db.query_one(f"SELECT {_SUMMARY_COLUMNS} FROM session_summaries WHERE run_id = ?", (run_id,))
        return _summary(row) if row else None

    def recent(self, project_id: str, limit: int = 5) -> list[Summary]:
        """The newest summaries of a project."""
        rows = self.db.query(
            f"SELECT {_SUMMARY_COLUMNS} FROM session_summaries WHERE project_id = ? "
            "ORDER BY created_at DESC, rowid DESC LIMIT ?",
            (project_id, limit),
        )
        return [_summary(row) for row in rows]
