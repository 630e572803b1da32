"""Learning from finished runs: ingest transcripts into the ledger, queue durable jobs, and distil runs."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from orcmem.host.workspace import Location
from orcmem.models.constants import EXTRACTION_EVENT_LIMIT, MAX_CONCURRENT_EXTRACTIONS, MS_PER_MINUTE
from orcmem.models.errors import NotFoundError, OwnershipError, ValidationError
from orcmem.models.ledger import LedgerEvent, TurnState
from orcmem.models.types import Memory, NewMemory, Project, Relation, Source, Status
from orcmem.models.vocabulary import Agent, JobState, TaskStatus, UsageCall
from orcmem.rules.contradictions import day
from orcmem.service.memory_service import MemoryService
from orcmem.store.jobs import Job
from orcmem.store.runs import Run
from orcmem.store.summaries import Summary
from orcmem.text.redact import redact

if TYPE_CHECKING:  # the hooks import this module; the generators load only when a job runs
    from orcmem.extract.generator import GeneratorResult
    from orcmem.extract.parse import ExtractedSummary, Extraction
    from orcmem.extract.provenance import ProvenanceCheck
    from orcmem.extract.resolve import GeneratorChoice

log = logging.getLogger("orcmem.learning")

MEMORY_OFF_REASON = "memory learning was turned off"
CANCELLED_REASON = "the worker was stopped; the run waits in the queue"
SUMMARY_WORK_MAX_CHARS = 2000  # a summary's "work done" grows with each pass up to this, keeping the newest
RUN_KIND_TASK = "task"
RUN_KIND_DISCUSSION = "discussion"


GeneratorFactory = Callable[[Run], "GeneratorChoice"]
Vector = Sequence[float]


@dataclass(frozen=True, slots=True)
class IngestResult:
    """What one ingest added to a run."""

    run: Run
    new_events: int
    new_turns: int
    skipped_lines: int


@dataclass(frozen=True, slots=True)
class TaskLink:
    """The task a run works on, and whether it works on it (a task run) or only discusses it (never distilled)."""

    task_id: str  # "" for the project's task in progress
    kind: str = "task"


@dataclass(slots=True)
class JobOutcome:
    """How a job ended."""

    run_id: str
    state: str
    error: str | None = None
    written: int = 0
    left_to_user: int = 0
    memory_ids: list[str] = field(default_factory=list)
    not_before: int | None = None  # a rate limit refused the call: the job waits in the queue until then (ms)


class Learning:
    """The learning half of the service: it shares the memory service's store, rules and clock."""

    def __init__(self, memory: MemoryService) -> None:
        """Learn into `memory`'s database."""
        self.memory = memory
        self.store = memory.store
        self.cancelled = threading.Event()  # set on Ctrl-C or SIGTERM: jobs in flight go back to the queue

    # --- ingest ------------------------------------------------------------------------------------------------
    def ingest(
        self,
        project: Project | Location,
        transcript: Path,
        *,
        agent: Agent | None = None,
        session_id: str | None = None,
        cwd: str | None = None,
        ended: bool = False,
        answered: bool = False,
        link: TaskLink | None = None,
        agent_command: str | None = None,
        link_task: bool = True,
    ) -> IngestResult:
        """Add what is new in a transcript to its run's ledger (redacted); create the project and run on first sight.

        `answered` says the agent reported the turn's final answer (Claude Code's `Stop` payload carries it before
        the transcript does), so the prompts still waiting count as answered turns. An ingest that is not the
        session's end reopens a run that had ended: the session was resumed. `link` ties a new run to a task;
        without `link_task` a new run is tied to none (a past session imported has nothing to do with today's task).

        Raises:
            ValidationError: the file is missing or is not a transcript orcmem can read; nothing is registered.
        """
        agent = agent or _agent_of(transcript)
        now = self.memory.clock()
        key = session_id or _session_from(transcript)
        with self.store.db.transaction():  # the project is registered only for a transcript orcmem can read
            if not isinstance(project, Project):
                located = self.memory.project(project)
                assert located is not None
                project = located
            run = self.store.runs.for_session(
                project_id=project.id,
                agent=str(agent),
                session_id=key,
                transcript_path=str(transcript),
                cwd=cwd,
                now=now,
            )
            if link_task:
                self._link(run, project, link)
            if agent_command is not None and agent_command != run.agent_command:
                self.store.runs.set_agent_command(run.id, agent_command)
        new_events, new_turns, skipped = self._catch_up(run.id, transcript, agent, answered=answered)
        if ended:
            self.store.runs.end(run.id, now)
        else:  # a turn just finished: the idle wait starts again
            if new_events:  # a resumed session wrote more: it is open again (a late hook of an ended one is not)
                self.store.runs.reopen(run.id)
            self.store.runs.touch(run.id, self.memory.clock())
        updated = self.store.runs.get(run.id)
        assert updated is not None
        return IngestResult(updated, new_events, new_turns, skipped)

    def _catch_up(self, run_id: str, transcript: Path, agent: Agent, *, answered: bool = False) -> tuple[int, int, int]:
        """Read the transcript from where the run left off, a slice at a time; (events, turns, skipped lines) added.

        Two ingests of one session may race (a `Stop` and a `SessionEnd` a moment apart): the one that finds the
        offset or the waiting prompts changed under it reads again from the new offset, so no line is stored twice.
        """
        totals = [0, 0, 0]
        more, conflicts = True, 0
        while more and conflicts < 3:
            stored, more, added = self._catch_up_slice(run_id, transcript, agent)
            if not stored:
                conflicts += 1
                more = True
                continue
            totals = [total + part for total, part in zip(totals, added, strict=True)]
        if answered:
            totals[1] += self._answer_waiting(run_id)
        return totals[0], totals[1], totals[2]

    def _catch_up_slice(self, run_id: str, transcript: Path, agent: Agent) -> tuple[bool, bool, tuple[int, int, int]]:
        """Read and store one slice: (stored, more to read, (events, turns, skipped lines))."""
        from orcmem.ingest.common import advance_turns
        from orcmem.ingest.transcript import parse_transcript

        run = self.store.runs.get(run_id)
        if run is None:
            return True, False, (0, 0, 0)
        chunk = parse_transcript(transcript, run.transcript_offset, agent, session_id=run.session_id)
        turns, pending = advance_turns(chunk.events, run.turn_state)
        stored = self.store.runs.append(
            run.id,
            chunk.events,
            from_offset=run.transcript_offset,
            offset=chunk.end_offset,
            turns=turns,
            pending=pending,
            from_pending=run.turn_state,
            skipped=chunk.skipped_lines,
            model=chunk.model,
            title=chunk.title,
            now=self.memory.clock(),
        )
        return stored, chunk.more, (len(chunk.events), turns, chunk.skipped_lines)

    def _answer_waiting(self, run_id: str) -> int:
        """Count the main-chain prompts still waiting as answered (the agent reported the turn's answer)."""
        run = self.store.runs.get(run_id)
        if run is None or not run.pending_prompts:
            return 0
        waiting = run.pending_prompts
        answered_state = TurnState(0, run.pending_sidechain_prompts)
        stored = self.store.runs.append(
            run.id,
            [],
            from_offset=run.transcript_offset,
            offset=run.transcript_offset,
            turns=waiting,
            pending=answered_state,
            from_pending=run.turn_state,
            skipped=0,
            model=None,
            title=None,
            now=self.memory.clock(),
        )
        return waiting if stored else 0

    def catch_up(self, run: Run) -> Run:
        """Read what the run's transcript gained since the last hook (the worker does this before distilling)."""
        if run.transcript_path is None:
            return run
        path = Path(run.transcript_path)
        try:
            if path.is_file():
                self._catch_up(run.id, path, Agent(run.agent))
        except (NotFoundError, ValueError) as exc:  # a transcript gone or unreadable: distil what was stored
            log.info("could not read the transcript of run %s again: %s", run.id, exc)
        return self.store.runs.get(run.id) or run

    def _link(self, run: Run, project: Project, link: TaskLink | None) -> None:
        """Tie a run to a task: the one the agent was started for, else the project's task in progress (as a task
        run, or as a discussion when the link names only that kind)."""
        if run.task_id is not None:
            return
        kind = link.kind if link is not None else None
        if link is not None and link.task_id:
            task = self.store.tasks.get(link.task_id)
            if task is None or task.project_id != project.id:
                log.warning("run %s names task %s, which this project does not have", run.id, link.task_id)
                return
            self.store.runs.link_task(run.id, task.id, link.kind)
            return
        if self.store.runs.max_seq(run.id) > 0:
            return  # a run seen before it was linked stays a conversation
        current = self.store.tasks.list(project.id, (TaskStatus.IN_PROGRESS,))
        if current:
            self.store.runs.link_task(run.id, current[0].id, kind or RUN_KIND_TASK)

    # --- queue -------------------------------------------------------------------------------------------------
    def extraction_allowed(self) -> str | None:
        """None when runs may be distilled now, else why not."""
        if not self.memory.is_enabled():
            return "memory is off"
        if self.memory.settings.current().provider == "off":
            return "extraction is off"
        return None

    def queue(self, run: Run) -> bool:
        """Queue a run for distillation when the rules allow it; returns whether it was queued."""
        # A conversation must have finished a turn; a task's runs are queued either way; discussions never are.
        no_turn = run.turns == 0 and run.kind != RUN_KIND_TASK
        if self.extraction_allowed() is not None or no_turn or run.kind == RUN_KIND_DISCUSSION:
            return False
        job = self.store.jobs.get(run.id)
        already_distilled = (
            job is not None
            and job.state not in (JobState.QUEUED, JobState.RUNNING)
            and self.store.runs.max_seq(run.id) <= job.through_seq
        )
        if already_distilled:
            return False
        return self.store.jobs.enqueue(
            run.id, policy_revision=self.memory.settings.policy_revision(), now=self.memory.clock()
        )

    def jobs(self, project: Project | None, limit: int) -> list[tuple[Job, Run]]:
        """The project's extraction jobs with their runs, newest first."""
        return self.store.jobs.list(project.id if project else "", limit)

    def job(self, run_id: str) -> Job | None:
        """A run's extraction job, or None."""
        return self.store.jobs.get(run_id)

    def summaries(self, project: Project | None, limit: int) -> list[Summary]:
        """The project's run summaries, newest first."""
        return self.store.summaries.recent(project.id, limit) if project else []

    def summary(self, run_id: str) -> Summary | None:
        """A run's summary, if a pass wrote one."""
        return self.store.summaries.get(run_id)

    def idle_ms(self) -> int:
        """How long a session must be idle before it is distilled, in milliseconds."""
        return int(self.memory.settings.idle_minutes() * MS_PER_MINUTE)

    def untaken_jobs(self) -> bool:
        """Whether queued jobs wait that no running worker will take next (fewer than the maximum run), and that
        may start now (neither the day's budget nor a rate limit holds them back)."""
        counts = self.store.jobs.counts()
        if counts.get(JobState.RUNNING, 0) >= MAX_CONCURRENT_EXTRACTIONS:
            return False
        return self.store.jobs.claimable(self.memory.clock()) > 0 and self.memory.cost.hold() is None

    def next_retry(self) -> int | None:
        """When a job held back for a rate limit may start (ms), or None; a spent budget waits for the next day,
        which a later hook's worker sees, so no worker lingers for it."""
        hold = self.memory.cost.hold()
        if hold is not None:
            return hold.until if hold.kind == "rate_limit" else None
        return self.store.jobs.next_not_before(self.memory.clock())

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
        self.store.jobs.enqueue(run.id, policy_revision=self.memory.settings.policy_revision(), now=self.memory.clock())
        return run

    def delete_run(self, run_id: str) -> Run:
        """Delete a run's ledger: its events (the transcript as read, a secret no rule knew included), job and summary;
        the memories it taught stay. Erased from the file and its WAL as a forgotten memory is.

        Raises:
            NotFoundError: no such run.
        """
        run = self.store.runs.get(run_id.strip())
        if run is None:
            raise NotFoundError(f"No run {run_id}; `orcmem jobs` lists them.")
        with self.store.db.transaction():
            self.store.runs.delete(run.id)
            self.memory.audit("user", "run.delete", None, run.project_id, metadata={"run": run.id})
        self.store.db.erase_old_pages()
        return run

    # --- run jobs ----------------------------------------------------------------------------------------------
    def claim(self, worker_pid: int, is_alive: Callable[[int], bool]) -> Job | None:
        """Take the next queued job, if fewer than two run across every process (none once cancelled)."""
        if self.cancelled.is_set() or self.memory.cost.hold() is not None:
            return None  # past the day's budget, or a rate limit runs low: the jobs stay queued, never lost
        return self.store.jobs.claim(
            max_running=MAX_CONCURRENT_EXTRACTIONS, worker_pid=worker_pid, now=self.memory.clock(), is_alive=is_alive
        )

    def requeue_orphans(self, is_alive: Callable[[int], bool]) -> int:
        """Put back in the queue the runs of workers that are gone (a stopped worker that had no time to, or a killed
        one); how many."""
        return self.store.jobs.requeue_orphans(now=self.memory.clock(), is_alive=is_alive)

    def run_job(self, job: Job, generators: GeneratorFactory) -> JobOutcome:
        """Distil a claimed job's run; every path ends the job as done, failed or skipped, never raising."""
        try:
            outcome = self._distil(job, generators)
        except Exception as exc:  # a job must end with a state, whatever went wrong
            log.exception("extraction of %s failed", job.run_id)
            outcome = JobOutcome(job.run_id, JobState.FAILED, f"{type(exc).__name__}: {exc}")
        if outcome.state == JobState.QUEUED and outcome.not_before is not None:  # refused for a rate limit: it waits
            self.store.jobs.defer(
                job.run_id, job.worker_pid, not_before=outcome.not_before, reason=outcome.error or "rate limited"
            )
            return outcome
        if outcome.state == JobState.QUEUED:  # stopped mid-call: the next worker distils it again from the same events
            self.store.jobs.release(job.run_id, job.worker_pid)
            return outcome
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
        return self.extraction_allowed() is not None or self.memory.settings.policy_revision() != job.policy_revision

    def _distil(self, job: Job, generators: GeneratorFactory) -> JobOutcome:
        from orcmem.extract.digest import build_digest, is_empty, render_digest
        from orcmem.extract.parse import parse_extraction, parse_judgement
        from orcmem.extract.prompt import build_judgement_prompt, build_prompt, judge_schema
        from orcmem.extract.provenance import ProvenanceCheck

        if self._policy_changed(job):
            return JobOutcome(job.run_id, JobState.SKIPPED, MEMORY_OFF_REASON)
        run = self.store.runs.get(job.run_id)
        if run is None:
            return JobOutcome(job.run_id, JobState.SKIPPED, "the run was deleted")
        if run.kind == RUN_KIND_DISCUSSION:
            return JobOutcome(job.run_id, JobState.SKIPPED, "discussion runs are never distilled")
        run = self.catch_up(run)  # what the agent wrote after its last hook, such as the turn's final answer
        through = self.store.runs.max_seq(run.id)
        self.store.jobs.set_through(run.id, through)
        events = self._new_events(run, through)
        digest = build_digest(events)
        if is_empty(digest):
            self.store.runs.mark_distilled(run.id, through)
            return JobOutcome(run.id, JobState.SKIPPED)
        choice = generators(run)
        if choice.generator is None:
            return JobOutcome(run.id, JobState.SKIPPED, f"no distillation provider available: {choice.reason}")
        if self.cancelled.is_set():  # stopped while the run was read: no paid call starts now
            return JobOutcome(run.id, JobState.QUEUED, CANCELLED_REASON)
        task_title, spec = self._task_of(run)
        prompt = build_prompt(
            task_title or run.title or "conversation", spec, render_digest(digest), earlier=self._earlier(run)
        )
        started = self.memory.clock()
        answer = choice.generator.generate(prompt)
        provider = choice.generator.provider
        if self.cancelled.is_set() and answer.usage is None:  # a call ended by the stop: its run goes back at once
            return JobOutcome(run.id, JobState.QUEUED, CANCELLED_REASON)
        limit, until = answer.rate_limit, None
        if answer.rate_limited and limit is not None:  # the whole queue waits with the job: the limit is the account's
            until = self.memory.cost.backoff_until(limit, job.attempts)
            limit = replace(limit, resets_at=until)
        self.memory.cost.record(run, provider, answer.usage, limit, status=_call_status(answer), started_at=started)
        if self._policy_changed(job):
            return JobOutcome(run.id, JobState.SKIPPED, MEMORY_OFF_REASON)
        if self.cancelled.is_set():
            return JobOutcome(run.id, JobState.QUEUED, CANCELLED_REASON)
        if until is not None:  # not a failure: the job waits out the limit in the queue, with a growing backoff
            reason = f"rate limited, tried again after {time.strftime('%H:%M', time.localtime(until / 1000))}"
            return JobOutcome(run.id, JobState.QUEUED, f"{reason}: {answer.error}", not_before=until)
        if answer.text is None:
            return JobOutcome(run.id, JobState.FAILED, answer.error or "the model gave no answer")
        extraction = parse_extraction(answer.text)
        if extraction is None:
            return JobOutcome(run.id, JobState.FAILED, "the model's answer was not the JSON asked for")
        checked = ProvenanceCheck(digest)
        # Embedding waits for the model to load: done before the transaction, which hooks must never wait behind.
        meanings = self.memory.meanings([(item.title, item.body) for item in extraction.memories])
        # A second short call: does each new memory replace, refine or conflict with an older one it may contradict?
        shown = self._candidates(run, extraction, meanings)
        short = _short_ids(shown)
        relations: dict[int, tuple[Relation, str]] = {}
        if short:  # no call when no memory has a candidate
            judged_at = self.memory.clock()
            judgement = choice.generator.generate(
                build_judgement_prompt(
                    [(item.type, item.title, item.body) for item in extraction.memories],
                    [[(short[m.id], str(m.type), m.title, m.body, _written(m)) for m in found] for found in shown],
                ),
                schema=judge_schema(),
            )
            # billed and counted against the budget like the distillation, marked apart; a refusal for a rate limit
            # is recorded (the hold reads it) but does not requeue the run: its memories stay unrelated
            self.memory.cost.record(
                run,
                provider,
                judgement.usage,
                judgement.rate_limit,
                status=_call_status(judgement),
                started_at=judged_at,
                call=UsageCall.JUDGEMENT,
            )
            if judgement.text is None:  # every memory stays unrelated, none is lost
                log.warning("the contradiction judgement of run %s failed: %s", run.id, judgement.error)
            else:
                offered = {index: {short[m.id] for m in found} for index, found in enumerate(shown)}
                by_short = {value: key for key, value in short.items()}
                relations = {
                    judged.memory: (Relation(judged.relation), by_short[judged.candidate])
                    for judged in parse_judgement(judgement.text, len(shown), offered)
                }
        if self._policy_changed(job):
            return JobOutcome(run.id, JobState.SKIPPED, MEMORY_OFF_REASON)
        if self.cancelled.is_set():
            return JobOutcome(run.id, JobState.QUEUED, CANCELLED_REASON)
        return self._save(
            run,
            extraction,
            checked,
            meanings,
            relations,
            model=run.model,
            worker_pid=job.worker_pid,
            through=through,
        )

    def _candidates(self, run: Run, extraction: Extraction, meanings: Sequence[Vector | None]) -> list[list[Memory]]:
        """For each new memory, the older memories it may contradict (`Contradictions.candidates`), which the
        judgement shows the model."""
        embedder = self.memory.embedder
        model = embedder.model_id if embedder is not None else None
        return [
            self.memory.contradictions.candidates(run.project_id, item.title, item.body, item.topic_key, meaning, model)
            for item, meaning in zip(extraction.memories, meanings, strict=True)
        ]

    def _new_events(self, run: Run, through: int) -> list[LedgerEvent]:
        """The events this pass distils: those after the last finished pass, the newest EXTRACTION_EVENT_LIMIT of
        them, with the opening request put back first on a first pass whose window lost it."""
        events = self.store.runs.events(
            run.id, newest=EXTRACTION_EVENT_LIMIT, through_seq=through, after_seq=run.distilled_seq
        )
        if run.distilled_seq == 0 and len(events) >= EXTRACTION_EVENT_LIMIT:
            opening = self.store.runs.opening_request(run.id)
            if opening is not None and opening not in events:
                events = [opening, *events]
        return events

    def _earlier(self, run: Run) -> str | None:
        """What a later pass is told of the passes before it: the opening request, the summary so far and the
        memories already saved from the run; None on a first pass."""
        from orcmem.extract.prompt import render_earlier

        if run.distilled_seq == 0:
            return None
        opening = self.store.runs.opening_request(run.id)
        summary = self.store.summaries.get(run.id)
        return render_earlier(
            opening=opening.text if opening is not None else None,
            work_done=summary.work_done if summary else "",
            outcome=summary.outcome if summary else "",
            open_items=summary.open_items if summary else (),
            saved_titles=self.store.memories.titles_from_run(run.id),
        )

    def _task_of(self, run: Run) -> tuple[str | None, str | None]:
        return self.store.tasks.title_and_spec(run.task_id) if run.task_id else (None, None)

    def _save(
        self,
        run: Run,
        extraction: Extraction,
        checked: ProvenanceCheck,
        meanings: Sequence[Vector | None],
        relations: Mapping[int, tuple[Relation, str]],
        *,
        model: str | None,
        worker_pid: int | None,
        through: int,
    ) -> JobOutcome:
        """The summary (grown from the earlier passes') and every memory in one transaction; a memory that repeats
        one already stored confirms it instead, and topics the user wrote are left alone. Each memory's provenance
        is the model's claim as far as the digest bears it out (`checked`); `relations` are what the judgement said of
        older memories (an older one a memory before it in this pass already replaced is left alone).

        Nothing is saved when the job's lease went to another worker meanwhile: that worker saves its own answer.
        """
        project = self.store.projects.get(run.project_id)
        if project is None:
            return JobOutcome(run.id, JobState.SKIPPED, "the project was deleted")
        outcome = JobOutcome(run.id, JobState.DONE)
        imported = self.store.runs.imported_at(run.id) is not None  # what it creates, undoing the import erases
        with self.store.db.transaction():
            if not self.store.jobs.holds(run.id, worker_pid):
                return JobOutcome(run.id, JobState.SKIPPED, "another worker took this job over")
            self.store.summaries.upsert(self._grown_summary(run, extraction.summary, model))
            for index, (item, meaning) in enumerate(zip(extraction.memories, meanings, strict=True)):
                relation, related_id = relations.get(index, (None, None))
                older = self.store.memories.get(related_id) if related_id is not None else None
                if older is None or older.status is not Status.ACTIVE:
                    relation, related_id = None, None
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
                    provenance=checked.provenance(item.title, item.body, item.source),
                )
                try:
                    result = self.memory.record(
                        project,
                        new,
                        embed=False,
                        meaning=meaning,
                        look_up_meaning=False,
                        relation=relation,
                        related_id=related_id,
                    )
                except OwnershipError:
                    outcome.left_to_user += 1
                    continue
                except ValidationError as exc:  # e.g. a topic key over 80 characters: drop that memory only
                    log.warning("dropped an extracted memory of run %s: %s", run.id, exc)
                    continue
                outcome.written += 1
                outcome.memory_ids.append(result.memory.id)
                if imported and not result.merged:
                    self.store.runs.note_imported_memory(result.memory.id, run.id)
            self.store.runs.mark_distilled(run.id, through)
        log.info(
            "extracted %d memory item(s) from run %s; left %d topic(s) the user wrote unchanged",
            outcome.written,
            run.id,
            outcome.left_to_user,
        )
        return outcome

    def _grown_summary(self, run: Run, new: ExtractedSummary, model: str | None) -> Summary:
        """This pass's summary added to the run's earlier one: the first request stays, the work done grows, the
        outcome and the open items are this pass's (it was shown the earlier ones)."""
        earlier = self.store.summaries.get(run.id)
        # Redacted before they are flattened: a multi-line secret (a key block) is only recognised with its lines.
        flat = (one_line(redact(item)) for item in new.open_items)
        open_items = tuple(dict.fromkeys(item for item in flat if item))
        return Summary(
            run_id=run.id,
            task_id=run.task_id,
            project_id=run.project_id,
            request=(earlier.request if earlier else "") or new.request or run.title or "conversation",
            # Redacted before the cut, which could fall inside a secret and leave a part no rule recognises.
            work_done=grow_text(earlier.work_done if earlier else "", redact(new.work_done)),
            outcome=new.outcome or (earlier.outcome if earlier else ""),
            open_items=open_items,
            model=model,
            created_at=self.memory.clock(),
        )


def _call_status(answer: GeneratorResult) -> str:
    """How a distillation call ended, as its usage row says: ok, failed or rate_limited."""
    if answer.rate_limited:
        return "rate_limited"
    return "ok" if answer.ok else "failed"


def _short_ids(shown: Sequence[Sequence[Memory]]) -> dict[str, str]:
    """An older memory's id -> the short id the judgement shows (c1, c2...), in the order they are first shown."""
    short: dict[str, str] = {}
    for found in shown:
        for memory in found:
            short.setdefault(memory.id, f"c{len(short) + 1}")
    return short


def _written(memory: Memory) -> str:
    """Who wrote an older memory and when, as the judgement shows it: a person's memory is only ever put in doubt."""
    who = "written by the person" if memory.source is Source.USER else "learned"
    return f"{who} {day(memory.created_at)}"


def one_line(text: str) -> str:
    """Text on one line: every run of white space (newlines included) becomes one space."""
    return " ".join(text.split())


def grow_text(earlier: str, new: str, limit: int = SUMMARY_WORK_MAX_CHARS) -> str:
    """`earlier` then `new`, keeping the newest `limit` characters when the two grow too long."""
    joined = " ".join(part for part in (earlier.strip(), new.strip()) if part)
    return joined if len(joined) <= limit else "…" + joined[-(limit - 1) :]


def _agent_of(transcript: Path) -> Agent:
    """Which agent wrote a transcript file.

    Raises:
        ValidationError: the file is missing, unreadable, not a regular file (a FIFO would block), or neither
            agent's format.
    """
    from orcmem.ingest.transcript import DETECT_BYTES, detect_agent, open_transcript

    try:
        with open_transcript(transcript) as handle:
            agent = detect_agent(handle.read(DETECT_BYTES))
    except OSError as exc:
        raise ValidationError(f"No transcript at {transcript} ({exc.strerror or exc}).") from exc
    if agent is None:
        raise ValidationError(f"{transcript} is neither a Claude Code nor a Codex transcript.")
    return agent


def _session_from(transcript: Path) -> str:
    """A session key when the hook gave none: the transcript's file name (Claude and Codex name them by session)."""
    return transcript.stem
