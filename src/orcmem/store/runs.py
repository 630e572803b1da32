"""Runs and their events (redacted as they are stored): the ledger of each agent session."""

from __future__ import annotations

import builtins
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from orcmem.models.constants import OPENING_REQUEST_SCAN
from orcmem.models.data_shapes import Row
from orcmem.models.ledger import NO_PENDING_TURN, EventKind, LedgerEvent, TurnState
from orcmem.store.connection import Repository
from orcmem.text.redact import redact_label, redact_text

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


RUN_COLUMNS = (
    "id, project_id, task_id, agent, session_id, kind, title, model, cwd, transcript_path, transcript_offset, "
    "turns, skipped_lines, state, started_at, last_turn_at, ended_at, pending_prompts, pending_sidechain_prompts, "
    "distilled_seq, agent_command"
)


class RunRepository(Repository):
    """Runs and their events."""

    def get(self, run_id: str) -> Run | None:
        """The run with this id, or None."""
        row = self.db.query_one(f"SELECT {RUN_COLUMNS} FROM runs WHERE id = ?", (run_id,))
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
                f"SELECT {RUN_COLUMNS} FROM runs WHERE agent = ? AND session_id = ?", (agent, session_id)
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
            f"SELECT {', '.join('r.' + c.strip() for c in RUN_COLUMNS.split(','))} FROM runs r "
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
            rows = self.db.query(f"SELECT {RUN_COLUMNS} FROM runs ORDER BY started_at DESC LIMIT ?", (limit,))
        else:
            rows = self.db.query(
                f"SELECT {RUN_COLUMNS} FROM runs WHERE project_id = ? ORDER BY started_at DESC LIMIT ?",
                (project_id, limit),
            )
        return [Run(*row) for row in rows]

    def find_session(self, agent: str, session_id: str) -> Run | None:
        """The run of an agent's session, or None when orcmem never saw it."""
        row = self.db.query_one(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE agent = ? AND session_id = ?", (agent, session_id)
        )
        return Run(*row) if row else None

    def mark_imported(self, run_id: str, now: int) -> None:
        """Record that a run came from an import of past sessions (kept from the first import on)."""
        with self.db.transaction():
            self.db.query("UPDATE runs SET imported_at = COALESCE(imported_at, ?) WHERE id = ?", (now, run_id))

    def imported_at(self, run_id: str) -> int | None:
        """When a run was imported, or None for a run the hooks saw live."""
        row = self.db.query_one("SELECT imported_at FROM runs WHERE id = ?", (run_id,))
        return int(row[0]) if row and row[0] is not None else None

    def note_imported_memory(self, memory_id: str, run_id: str) -> None:
        """Record that an imported run created this memory (undoing the import erases it)."""
        with self.db.transaction():
            self.db.query(
                "INSERT OR IGNORE INTO imported_memories (memory_id, run_id) VALUES (?, ?)", (memory_id, run_id)
            )

    def imported(self, project_id: str) -> builtins.list[tuple[Run, int]]:
        """A project's imported runs with when each was imported, oldest import first."""
        rows = self.db.query(
            f"SELECT {RUN_COLUMNS}, imported_at FROM runs WHERE project_id = ? AND imported_at IS NOT NULL "
            "ORDER BY imported_at, started_at",
            (project_id,),
        )
        return [(Run(*row[:-1]), int(row[-1])) for row in rows]

    def delete(self, run_id: str) -> None:
        """Delete a run and its events, job and summary (its memories stay, unlinked)."""
        with self.db.transaction():
            self.db.query("DELETE FROM runs WHERE id = ?", (run_id,))
            self.db.query("DELETE FROM imported_memories WHERE run_id = ?", (run_id,))


def _event_row(run_id: str, seq: int, event: LedgerEvent, now: int) -> Row:
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


def _event(row: Row) -> LedgerEvent:
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
