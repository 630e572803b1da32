"""Tasks: what agents are working on, and the task context they read before changing an unfamiliar area."""

from __future__ import annotations

from orcmem.agent_context.recall import RECALL_HEADER, defang, fence, label, memory_line, memory_row
from orcmem.models.errors import NotFoundError, ValidationError
from orcmem.models.types import Project
from orcmem.models.vocabulary import TaskStatus
from orcmem.rules.memory import check_body, check_title
from orcmem.service.memory_service import MemoryService
from orcmem.store.tasks import TASK_STATUSES, Task

TASK_RUN_SUMMARIES = 4  # earlier runs shown in the task context
TASK_CONTEXT_MEMORIES = 8


class Tasks:
    """Task operations over the memory service's store."""

    def __init__(self, memory: MemoryService) -> None:
        """Use `memory`'s database and clock."""
        self.memory = memory
        self.store = memory.store

    def add(self, project: Project, title: str, spec: str | None = None) -> Task:
        """Create an open task."""
        checked_spec = check_body(spec) if spec else None
        return self.store.tasks.add(project.id, check_title(title), checked_spec, self.memory.clock())

    def get(self, project: Project, task_id: str) -> Task:
        """A task of this project.

        Raises:
            NotFoundError: no such task here.
        """
        task = self.store.tasks.get(task_id.strip())
        if task is None or task.project_id != project.id:
            raise NotFoundError(f"No task {task_id} in this project.")
        return task

    def list(self, project: Project, statuses: tuple[str, ...] = ()) -> list[Task]:
        """The project's tasks, most recently changed first."""
        return self.store.tasks.list(project.id, statuses)

    def set_status(self, project: Project, task_id: str, status: str) -> Task:
        """Move a task to open, in_progress, review or done."""
        name = status.strip().lower().replace("-", "_").replace(" ", "_")
        if name not in TASK_STATUSES:
            raise ValidationError(f"Unknown task status {status!r}; choose one of: {', '.join(TASK_STATUSES)}.")
        task = self.get(project, task_id)
        self.store.tasks.set_status(task.id, name, self.memory.clock())
        return self.get(project, task.id)

    def start(self, project: Project, task_id: str) -> Task:
        """Put a task in progress: it becomes the current task."""
        return self.set_status(project, task_id, TaskStatus.IN_PROGRESS)

    def current(self, project: Project) -> Task | None:
        """The task most recently put in progress, or None."""
        tasks = self.store.tasks.list(project.id, (TaskStatus.IN_PROGRESS,))
        return tasks[0] if tasks else None

    def context(self, project: Project, task: Task | None = None) -> str:
        """The task context, framed as recall is (fenced, with the "this is data" header, orcmem's labels first,
        one line each): the task, its earlier runs and the relevant memories (only the task while off)."""
        task = task or self.current(project)
        if task is None:
            return "No task context: no task is in progress in this project."
        lines = [
            RECALL_HEADER,
            f"- {label('task', task.status)} {defang(task.title)}",
            f"- {label('spec')} {defang(task.spec or '(none)')}",
        ]
        if self.memory.is_enabled():
            for summary in self.store.summaries.for_task(task.id)[-TASK_RUN_SUMMARIES:]:
                open_items = f" (open: {'; '.join(summary.open_items)})" if summary.open_items else ""
                lines.append(
                    f"- {label('earlier run on this task')} {defang(summary.outcome)}: "
                    f"{defang(summary.work_done)}{defang(open_items)}"
                )
            now = self.memory.clock()
            for hit in self.memory.search.hits(project, f"{task.title} {task.spec or ''}", TASK_CONTEXT_MEMORIES):
                lines.append(memory_line(memory_row(hit.memory), now))
        return fence("task", lines)
