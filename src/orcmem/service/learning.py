"""Learning from finished runs: ingest transcripts into the ledger, queue durable jobs, and distil runs."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from orcmem.errors import NotFoundError, OwnershipError, ValidationError
from orcmem.models import Agent, NewMemory, Project, Source
from orcmem.models.constants import EXTRACTION_EVENT_LIMIT, MAX_CONCURRENT_EXTRACTIONS
from orcmem.service.memory_service import MemoryService
from orcmem.store import Job, Run, Summary

if TYPE_CHECKING:  # the hooks import this module; the generators load only when a job runs
    from orcmem.extract import GeneratorChoice

log = logging.getLogger("orcmem.learning")

MEMORY_OFF_REASON = "memory learning was turned off"


GeneratorFactory = Callable[[Run], "GeneratorChoice"]


@dataclass(frozen=True, slots=True)
class IngestResult:
    """What one ingest added to a run."""

    run: Run
    new_events: int
    new_turns: int
    skipped_lines: int


@dataclass(slots=True)
class JobOutcome:
    """How a job ended."""

    run_id: str
    state: str
    error: str | None = None
    written: int = 0
    left_to_user: int = 0
    memory_ids: list[str] = field(default_factory=list)


class Learning:
    """The learning half of the service: it shares the memory service's store, rules and clock."""

    def __init__(self, memory: MemoryService) -> None:
        """Learn into `memory`'s database."""
        self.memory = memory
        self.store = memory.store

    # --- ingest ------------------------------------------------------------------------------------------------
    def ingest(
        self,
        project: Project,
        transcript: Path,
        *,
        agent: Agent | None = None,
        session_id: str | None = None,
        cwd: str | None = None,
        ended: bool = False,
    ) -> IngestResult:
        """Add what is new in a transcript to its run's ledger (redacted); create the run on first sight.

        Raises:
            ValidationError: the file is missing or is not a transcript orcmem can read.
        """
        from orcmem.ingest import detect_agent, parse_transcript

        if not transcript.is_file():
            raise ValidationError(f"No transcript at {transcript}.")
        if agent is None:
            with transcript.open("rb") as handle:
                agent = detect_agent(handle.read(64 * 1024))
            if agent is None:
                raise ValidationError(f"{transcript} is neither a Claude Code nor a Codex transcript.")
        now = self.memory.clock()
        key = session_id or _session_from(transcript)
        run = self.store.runs.for_session(
            project_id=project.id, agent=str(agent), session_id=key, transcript_path=str(transcript), cwd=cwd, now=now
        )
        chunk = parse_transcript(transcript, run.transcript_offset, agent)
        self.store.runs.append(
            run.id,
            chunk.events,
            offset=chunk.end_offset,
            turns=chunk.turns,
            skipped=chunk.skipped_lines,
            model=chunk.model,
            title=chunk.title,
            now=now,
        )
        if ended:
            self.store.runs.end(run.id, now)
        updated = self.store.runs.get(run.id)
        assert updated is not None
        return IngestResult(updated, len(chunk.events), chunk.turns, chunk.skipped_lines)

    # --- queue -------------------------------------------------------------------------------------------------
    def extraction_allowed(self) -> str | None:
        """None when runs may be distilled now, else why not."""
        if not self.memory.is_enabled():
            return "memory is off"
        if self.memory.settings().provider == "off":
            return "extraction is off"
        return None

    def queue(self, run: Run) -> bool:
        """Queue a run for distillation when the rules allow it; returns whether it was queued."""
        if self.extraction_allowed() is not None or run.turns == 0 or run.kind == "discussion":
            return False
        job = self.store.jobs.get(run.id)
        already_distilled = (
            job is not None
            and job.state not in ("queued", "running")
            and self.store.runs.max_seq(run.id) <= job.through_seq
        )
        if already_distilled:
            return False
        return self.store.jobs.enqueue(run.id, policy_revision=self.memory.policy_revision(), now=self.memory.clock())

    def sweep_idle(self, idle_ms: int) -> list[str]:
        """Queue every run that ended, or has been idle `idle_ms` since its last turn, with undistilled events."""
        if self.extraction_allowed() is not None:
            return []
        queued = []
        for run in self.store.runs.waiting(self.memory.clock() - idle_ms):
            if self.queue(run):
                queued.append(run.id)
        return queued

    def next_idle_deadline(self, idle_ms: int) -> int | None:
        """When the next open run will have been idle long enough to distil (ms since the epoch), or None."""
        return self.store.runs.next_idle_deadline(idle_ms)

    def retry(self, run_id: str) -> Run:
        """Queue a run again on demand, whatever its last job's state (a failed job is never retried by itself)."""
        run = self.store.runs.get(run_id)
        if run is None:
            raise NotFoundError(f"No run {run_id}.")
        reason = self.extraction_allowed()
        if reason is not None:
            raise ValidationError(f"Runs are not distilled while {reason}.")
        self.store.jobs.enqueue(run.id, policy_revision=self.memory.policy_revision(), now=self.memory.clock())
        return run

    # --- run jobs ----------------------------------------------------------------------------------------------
    def claim(self, worker_pid: int, is_alive: Callable[[int], bool]) -> Job | None:
        """Take the next queued job, if fewer than two run across every process."""
        return self.store.jobs.claim(
            max_running=MAX_CONCURRENT_EXTRACTIONS, worker_pid=worker_pid, now=self.memory.clock(), is_alive=is_alive
        )

    def run_job(self, job: Job, generators: GeneratorFactory) -> JobOutcome:
        """Distil a claimed job's run; every path ends the job as done, failed or skipped, never raising."""
        try:
            outcome = self._distil(job, generators)
        except Exception as exc:  # a job must end with a state, whatever went wrong
            log.exception("extraction of %s failed", job.run_id)
            outcome = JobOutcome(job.run_id, "failed", f"{type(exc).__name__}: {exc}")
        self.store.jobs.finish(
            job.run_id,
            outcome.state,
            error=outcome.error,
            written=outcome.written,
            now=self.memory.clock(),
            worker_pid=job.worker_pid,
        )
        if outcome.written:
            self.memory.vectors_changed(outcome.memory_ids)  # embedding happens outside the job's slot
        return outcome

    def _policy_changed(self, job: Job) -> bool:
        return self.extraction_allowed() is not None or self.memory.policy_revision() != job.policy_revision

    def _distil(self, job: Job, generators: GeneratorFactory) -> JobOutcome:
        from orcmem.extract import build_digest, build_prompt, is_empty, parse_extraction, render_digest

        if self._policy_changed(job):
            return JobOutcome(job.run_id, "skipped", MEMORY_OFF_REASON)
        run = self.store.runs.get(job.run_id)
        if run is None:
            return JobOutcome(job.run_id, "skipped", "the run was deleted")
        if run.kind == "discussion":
            return JobOutcome(job.run_id, "skipped", "discussion runs are never distilled")
        through = self.store.runs.max_seq(run.id)
        self.store.jobs.set_through(run.id, through)
        events = self.store.runs.events(run.id, newest=EXTRACTION_EVENT_LIMIT, through_seq=through)
        if len(events) >= EXTRACTION_EVENT_LIMIT:
            opening = self.store.runs.opening_request(run.id)
            if opening is not None and opening not in events:
                events = [opening, *events]
        digest = build_digest(events)
        if is_empty(digest):
            return JobOutcome(run.id, "skipped")
        choice = generators(run)
        if choice.generator is None:
            return JobOutcome(run.id, "skipped", f"no distillation provider available: {choice.reason}")
        task_title, spec = self._task_of(run)
        prompt = build_prompt(task_title or run.title or "conversation", spec, render_digest(digest))
        answer = choice.generator.generate(prompt)
        if self._policy_changed(job):
            return JobOutcome(run.id, "skipped", MEMORY_OFF_REASON)
        if answer.text is None:
            return JobOutcome(run.id, "failed", answer.error or "the model gave no answer")
        extraction = parse_extraction(answer.text)
        if extraction is None:
            return JobOutcome(run.id, "failed", "the model's answer was not the JSON asked for")
        return self._save(run, extraction, model=run.model, worker_pid=job.worker_pid)

    def _task_of(self, run: Run) -> tuple[str | None, str | None]:
        return self.store.tasks.title_and_spec(run.task_id) if run.task_id else (None, None)

    def _save(self, run: Run, extraction, *, model: str | None, worker_pid: int | None) -> JobOutcome:
        """The summary and every memory in one transaction; topics the user wrote are left alone.

        Nothing is saved when the job's lease went to another worker meanwhile: that worker saves its own answer.
        """
        project = self.store.projects.get(run.project_id)
        if project is None:
            return JobOutcome(run.id, "skipped", "the project was deleted")
        outcome = JobOutcome(run.id, "done")
        summary = extraction.summary
        with self.store.db.transaction():
            if not self.store.jobs.holds(run.id, worker_pid):
                return JobOutcome(run.id, "skipped", "another worker took this job over")
            self.store.summaries.upsert(
                Summary(
                    run_id=run.id,
                    task_id=run.task_id,
                    project_id=run.project_id,
                    request=summary.request or run.title or "conversation",
                    work_done=summary.work_done,
                    outcome=summary.outcome,
                    open_items=tuple(summary.open_items),
                    model=model,
                    created_at=self.memory.clock(),
                )
            )
            for item in extraction.memories:
                new = NewMemory(
                    type=item.type,
                    title=item.title,
                    body=item.body,
                    source=Source.EXTRACTION,
                    topic_key=item.topic_key,
                    confidence=item.confidence,
                    files=tuple(item.files),
                    source_run_id=run.id,
                    source_task_id=run.task_id,
                )
                try:
                    result = self.memory.record(project, new, embed=False)
                except OwnershipError:
                    outcome.left_to_user += 1
                    continue
                except ValidationError as exc:  # e.g. a topic key over 80 characters: drop that memory only
                    log.warning("dropped an extracted memory of run %s: %s", run.id, exc)
                    continue
                outcome.written += 1
                outcome.memory_ids.append(result.memory.id)
        log.info(
            "extracted %d memory item(s) from run %s; left %d topic(s) the user wrote unchanged",
            outcome.written,
            run.id,
            outcome.left_to_user,
        )
        return outcome


def _session_from(transcript: Path) -> str:
    """A session key when the hook gave none: the transcript's file name (Claude and Codex name them by session)."""
    return transcript.stem
