"""Learning: the durable queue, its rules, and how every job ends (with honest fake generators)."""

from __future__ import annotations

import json

import pytest

from orcmem.extract.generator import GeneratorResult
from orcmem.extract.resolve import GeneratorChoice
from orcmem.models.ledger import EventKind, LedgerEvent
from orcmem.models.types import Project, Source
from orcmem.service.learning import Learning
from orcmem.service.memory_service import MemoryService
from orcmem.service.tasks import Tasks
from orcmem.store.jobs import JOB_LEASE_MS
from orcmem.store.runs import Run
from tests.helpers import user_memory

ANSWER = {
    "summary": {
        "request": "Fix the flaky pool",
        "workDone": "Switched vitest to forks",
        "outcome": "tests pass",
        "openItems": ["remove the retry wrapper"],
    },
    "memories": [
        {
            "type": "lesson",
            "title": "Use the forks pool",
            "body": "threads crash on CI",
            "topicKey": "test/pool",
            "files": ["vitest.config.ts"],
            "confidence": 0.8,
        },
        {
            "type": "command",
            "title": "Run one test",
            "body": "npx vitest run -t NAME",
            "topicKey": None,
            "files": [],
            "confidence": 0.7,  # over the review policy's 0.6: these tests are about the queue, not the inbox
        },
    ],
}


Answer = GeneratorResult  # what every generator returns: the text, or the error, and what the call cost


class FakeGenerator:
    """Returns a canned answer and records the prompts it got."""

    provider, model = "claude", None

    def __init__(self, text: str | None = json.dumps(ANSWER), error: str | None = None, on_call=None) -> None:
        self.text, self.error, self.on_call = text, error, on_call
        self.prompts: list[str] = []

    def generate(self, prompt: str, schema: object = None) -> Answer:
        self.prompts.append(prompt)
        if self.on_call:
            self.on_call()
        return Answer(self.text, self.error)


def events(turns: int = 1) -> list[LedgerEvent]:
    out = []
    for i in range(turns):
        out += [
            LedgerEvent(EventKind.MESSAGE, at=1, role="user", text=f"please fix the pool {i}"),
            LedgerEvent(EventKind.TOOL_STARTED, at=2, name="Bash", tool_call_id=f"t{i}"),
            LedgerEvent(EventKind.TOOL_COMPLETED, at=3, name="Bash", tool_call_id=f"t{i}", text="ok", is_error=False),
            LedgerEvent(EventKind.MESSAGE, at=4, role="assistant", text="done"),
        ]
    return out


def add_run(service: MemoryService, project: Project, session: str = "s1", turns: int = 1, ended=True) -> Run:
    run = service.store.runs.for_session(
        project_id=project.id, agent="claude", session_id=session, transcript_path=None, cwd=None, now=service.clock()
    )
    service.store.runs.append(
        run.id, events(turns), offset=10, turns=turns, skipped=0, model="m", title=None, now=service.clock()
    )
    if ended:
        service.store.runs.end(run.id, service.clock())
    return service.store.runs.get(run.id)


def run_all(learning: Learning, generator) -> list:
    outcomes = []
    while (job := learning.claim(1, lambda pid: True)) is not None:
        outcomes.append(learning.run_job(job, lambda run: GeneratorChoice(generator, None, "fake")))
    return outcomes


@pytest.fixture
def learning(service: MemoryService) -> Learning:
    return Learning(service)


def test_a_run_is_distilled_into_a_summary_and_memories(service, project, learning) -> None:
    run = add_run(service, project)
    assert learning.queue(run)
    generator = FakeGenerator()
    [outcome] = run_all(learning, generator)
    assert (outcome.state, outcome.written, outcome.error) == ("done", 2, None)
    summary = service.store.summaries.get(run.id)
    assert summary.request == "Fix the flaky pool" and summary.open_items == ("remove the retry wrapper",)
    memories = service.list(project)
    assert {m.source for m in memories} == {Source.EXTRACTION}
    assert {m.source_run_id for m in memories} == {run.id}
    lesson = next(m for m in memories if m.topic_key == "test/pool")
    assert lesson.files == ("vitest.config.ts",) and lesson.confidence == pytest.approx(0.8)
    job = service.store.jobs.get(run.id)
    assert (job.state, job.memories_written) == ("done", 2)
    assert "## User asked\nplease fix the pool 0" in generator.prompts[0]
    assert generator.prompts[0].startswith("You distill a finished coding-agent run")


def test_a_topic_the_user_wrote_is_left_alone_and_the_rest_is_saved(service, project, learning) -> None:
    mine = service.record(project, user_memory("My pool rule", "always threads", topic_key="test/pool")).memory
    learning.queue(add_run(service, project))
    [outcome] = run_all(learning, FakeGenerator())
    assert (outcome.state, outcome.written, outcome.left_to_user) == ("done", 1, 1)
    assert service.get(project, mine.id).body == "always threads"


def test_the_same_topic_merges_across_runs(service, project, learning) -> None:
    learning.queue(add_run(service, project, "s1"))
    learning.queue(add_run(service, project, "s2"))
    run_all(learning, FakeGenerator())
    lesson = [m for m in service.list(project) if m.topic_key == "test/pool"]
    assert len(lesson) == 1 and lesson[0].evidence_count == 2


@pytest.mark.parametrize(
    ("generator", "state", "error"),
    [
        (FakeGenerator(text=None, error="Not logged in"), "failed", "Not logged in"),
        (FakeGenerator(text="I could not do that, sorry."), "failed", "not the JSON"),
        (FakeGenerator(text="```json\n" + json.dumps(ANSWER) + "\n```\nHope that helps"), "done", None),
    ],
)
def test_every_answer_ends_in_the_right_state(service, project, learning, generator, state, error) -> None:
    learning.queue(add_run(service, project))
    [outcome] = run_all(learning, generator)
    assert outcome.state == state
    assert (error is None and outcome.error is None) or error in outcome.error
    assert service.store.jobs.get(outcome.run_id).state == state


def test_no_provider_skips_with_the_reason(service, project, learning) -> None:
    learning.queue(add_run(service, project))
    job = learning.claim(1, lambda pid: True)
    outcome = learning.run_job(job, lambda run: GeneratorChoice(None, "Claude Code is not installed.", None))
    assert outcome.state == "skipped" and "Claude Code is not installed." in outcome.error


def test_a_run_with_nothing_to_distil_is_skipped_without_error(service, project, learning) -> None:
    run = service.store.runs.for_session(
        project_id=project.id, agent="claude", session_id="x", transcript_path=None, cwd=None, now=0
    )
    service.store.runs.append(
        run.id,
        [LedgerEvent(EventKind.MESSAGE, at=1, role="assistant", text="hi")],
        offset=1,
        turns=1,
        skipped=0,
        model=None,
        title=None,
        now=0,
    )
    learning.queue(service.store.runs.get(run.id))
    [outcome] = run_all(learning, FakeGenerator())
    assert (outcome.state, outcome.error) == ("skipped", None)


def test_queue_rules(service, project, learning) -> None:
    assert not learning.queue(add_run(service, project, "no-turns", turns=0))
    task = Tasks(service).add(project, "Speed up the tests")
    discussion = add_run(service, project, "talk")
    service.store.runs.link_task(discussion.id, task.id, "discussion")
    assert not learning.queue(service.store.runs.get(discussion.id))
    task_run = add_run(service, project, "assignment", turns=0)
    service.store.runs.link_task(task_run.id, task.id, "task")
    assert learning.queue(service.store.runs.get(task_run.id))  # a task's runs are queued even without a turn
    run = add_run(service, project, "s1")
    assert learning.queue(run)
    assert not learning.queue(run)  # already queued
    run_all(learning, FakeGenerator())
    assert not learning.queue(run)  # distilled for these events already
    service.store.runs.append(run.id, events(1), offset=20, turns=1, skipped=0, model=None, title=None, now=5)
    assert learning.queue(service.store.runs.get(run.id))  # new events: distilled again


@pytest.mark.parametrize("switch", ["memory", "provider"])
def test_nothing_is_queued_while_off(service, project, learning, switch) -> None:
    service.settings.set_enabled(False) if switch == "memory" else service.settings.set_provider("off")
    assert not learning.queue(add_run(service, project))
    assert learning.sweep_idle(0) == []


@pytest.mark.parametrize(
    ("switch", "reason"), [("memory", "memory was turned off"), ("provider", "extraction was turned off")]
)
def test_turning_off_skips_waiting_jobs(service, project, learning, switch, reason) -> None:
    run = add_run(service, project)
    learning.queue(run)
    service.settings.set_enabled(False) if switch == "memory" else service.settings.set_provider("off")
    job = service.store.jobs.get(run.id)
    assert (job.state, job.error) == ("skipped", reason)


def test_turning_off_during_the_model_call_skips_the_job(service, project, learning) -> None:
    learning.queue(add_run(service, project))
    [outcome] = run_all(learning, FakeGenerator(on_call=lambda: service.settings.set_enabled(False)))
    assert outcome.state == "skipped" and "turned off" in outcome.error
    assert service.list(project) == []


def test_at_most_two_jobs_run_at_once_across_workers(service, project, learning) -> None:
    for i in range(4):
        learning.queue(add_run(service, project, f"s{i}"))
    assert learning.claim(101, lambda pid: True) is not None
    assert learning.claim(102, lambda pid: True) is not None
    assert learning.claim(103, lambda pid: True) is None


def test_a_dead_workers_job_goes_back_to_the_queue(service, project, learning) -> None:
    run = add_run(service, project)
    learning.queue(run)
    assert learning.claim(4242, lambda pid: True).run_id == run.id
    assert learning.claim(5000, lambda pid: pid != 4242).run_id == run.id  # 4242 died: its job is taken again


def test_a_gone_workers_runs_are_put_back_without_a_claim(service, project, learning) -> None:
    run = add_run(service, project)
    learning.queue(run)
    learning.claim(4242, lambda pid: True)
    assert learning.requeue_orphans(lambda pid: True) == 0  # its worker lives: the run stays its own
    assert learning.requeue_orphans(lambda pid: pid != 4242) == 1  # `orcmem worker --stop` after 4242 is gone
    assert service.store.jobs.get(run.id).state == "queued"


def test_an_exited_process_waiting_to_be_reaped_is_not_alive() -> None:
    import subprocess
    import time

    from orcmem.worker.control import is_alive

    child = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while is_alive(child.pid) and time.monotonic() < deadline:  # it exits at once, and is not reaped yet
        time.sleep(0.02)
    assert not is_alive(child.pid)
    child.wait()


def test_a_claim_past_its_lease_goes_back_to_the_queue_and_the_old_worker_saves_nothing(
    service, project, learning, clock
) -> None:
    run = add_run(service, project)
    learning.queue(run)
    hung = learning.claim(4242, lambda pid: True)  # its pid stays "alive": a hung worker, or a reused pid
    assert learning.claim(5000, lambda pid: True) is None
    clock.advance_days(JOB_LEASE_MS / 86_400_000 + 0.001)
    taken = learning.claim(5000, lambda pid: True)
    assert (taken.run_id, taken.worker_pid) == (run.id, 5000)
    late = learning.run_job(hung, lambda r: GeneratorChoice(FakeGenerator(), None, "fake"))
    assert late.state == "skipped" and late.written == 0
    assert service.list(project) == [] and service.store.jobs.get(run.id).state == "running"
    done = learning.run_job(taken, lambda r: GeneratorChoice(FakeGenerator(), None, "fake"))
    assert (done.state, done.written) == ("done", 2)
    assert service.store.jobs.get(run.id).state == "done" and len(service.list(project)) == 2


def test_idle_sessions_are_swept(service, project, learning, clock) -> None:
    open_run = add_run(service, project, "open", ended=False)
    assert learning.sweep_idle(10 * 60_000) == []
    deadline = learning.next_idle_deadline(10 * 60_000)
    assert deadline == open_run.last_turn_at + 10 * 60_000
    clock.advance_days(1)
    assert learning.sweep_idle(10 * 60_000) == [open_run.id]
    assert learning.next_idle_deadline(10 * 60_000) is None


def test_retry_requeues_a_failed_run(service, project, learning) -> None:
    run = add_run(service, project)
    learning.queue(run)
    run_all(learning, FakeGenerator(text=None, error="boom"))
    assert not learning.queue(service.store.runs.get(run.id))  # not retried by itself
    learning.retry(run.id)
    [outcome] = run_all(learning, FakeGenerator())
    assert outcome.state == "done"


def test_events_are_redacted_in_the_ledger(service, project) -> None:
    token = "ghp_" + "x" * 36
    run = service.store.runs.for_session(
        project_id=project.id, agent="claude", session_id="s", transcript_path=None, cwd=None, now=0
    )
    service.store.runs.append(
        run.id,
        [LedgerEvent(EventKind.TOOL_COMPLETED, at=1, name="Bash", text=f"GH={token}")],
        offset=1,
        turns=0,
        skipped=0,
        model=None,
        title=None,
        now=0,
    )
    [event] = service.store.runs.events(run.id, newest=10)
    assert token not in event.text and "[redacted:" in event.text


def test_a_stopped_drain_returns_only_once_its_job_is_back_in_the_queue(
    service, project, learning, monkeypatch
) -> None:
    """Ctrl-C (or SIGTERM) while a job thread is in its model call: drain raises only after the job is queued again.

    On Python 3.11 a Thread.join interrupted by the signal marks the still-running thread as ended, so a worker that
    joined its job threads left (letting go of its lock, exiting) with the job still marked running."""
    import os
    import signal
    import threading

    from orcmem.extract import runner
    from orcmem.worker.loop import drain

    monkeypatch.setattr(runner, "_STOPPING", threading.Event())  # the stop ends this process's calls for good
    run = add_run(service, project)
    assert learning.queue(run)
    drain_left = threading.Event()

    def model_call() -> None:  # the signal reaches the worker's main thread while this call is in flight
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        assert learning.cancelled.wait(30)  # the stop: the real call would now be ended by stop_all_processes
        drain_left.wait(5)  # the ended call still has to come back: a drain that leaves meanwhile lost the job

    generator = FakeGenerator(text=None, error="it was killed by signal 15", on_call=model_call)
    with pytest.raises(KeyboardInterrupt):
        drain(learning, lambda _run: GeneratorChoice(generator, None, "fake"), pid=os.getpid())
    state = service.store.jobs.get(run.id).state
    drain_left.set()
    assert state == "queued"
