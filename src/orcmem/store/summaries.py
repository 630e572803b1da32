"""Run summaries: what was asked, done, how it ended and what is left open, one per run."""

from __future__ import annotations

import json
from dataclasses import dataclass

from orcmem.models.data_shapes import Row
from orcmem.store.connection import Repository
from orcmem.text.redact import redact_text


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


_SUMMARY_COLUMNS = "run_id, task_id, project_id, request, work_done, outcome, open_items, model, created_at"


def _summary(row: Row) -> Summary:
    run_id, task_id, project_id, request, work_done, outcome, open_items, model, created_at = row
    items = tuple(json.loads(open_items or "[]"))
    return Summary(run_id, task_id, project_id, request, work_done, outcome, items, model, created_at)


class SummaryRepository(Repository):
    """Run summaries, one per run."""

    def upsert(self, summary: Summary) -> None:
        """Store a run's summary (redacted), replacing an earlier one of the same run (a later pass grows it)."""

        def clean(text: str) -> str:
            return redact_text(text).text

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

    def for_task(self, task_id: str) -> list[Summary]:
        """Summaries of the runs on a task, oldest first."""
        rows = self.db.query(
            f"SELECT {_SUMMARY_COLUMNS} FROM session_summaries WHERE task_id = ? ORDER BY created_at, rowid",
            (task_id,),
        )
        return [_summary(row) for row in rows]
