"""Tasks of a project, which runs can belong to."""

from __future__ import annotations

import builtins
import secrets
from dataclasses import dataclass

from orcmem.models.data_shapes import SqlValue
from orcmem.models.errors import ValidationError
from orcmem.models.vocabulary import TaskStatus, values
from orcmem.store.connection import Repository
from orcmem.text.redact import redact_text


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


TASK_STATUSES = values(TaskStatus)
_TASK_COLUMNS = "id, project_id, title, spec, status, created_at, updated_at"


class TaskRepository(Repository):
    """Tasks of a project."""

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
            raise ValidationError(f"unknown task status {status!r}")
        with self.db.transaction():
            self.db.query("UPDATE tasks SET status = ?, updated_at = ? WHERE id = ?", (status, now, task_id))

    def list(self, project_id: str, statuses: tuple[str, ...] = ()) -> builtins.list[Task]:
        """A project's tasks, most recently changed first."""
        where = "project_id = ?"
        params: builtins.list[SqlValue] = [project_id]
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

    def open_titles(self, project_id: str, limit: int = 8) -> builtins.list[str]:
        """Titles of a project's tasks in progress or in review, newest first."""
        return [task.title for task in self.list(project_id, (TaskStatus.IN_PROGRESS, TaskStatus.REVIEW))[:limit]]
