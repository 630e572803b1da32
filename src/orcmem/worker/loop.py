"""`orcmem worker`: drain the extraction queue, distil idle sessions, embed what commands left, finish the re-flag an
upgraded instruction detector left, then exit.

Whether one runs, and starting and stopping one, is worker_control's (light enough for hooks and commands)."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

from orcmem.extract.runner import stop_all_processes
from orcmem.models.constants import MAX_CONCURRENT_EXTRACTIONS
from orcmem.models.errors import OrcmemError, StoreError
from orcmem.service.learning import GeneratorFactory, JobOutcome, Learning
from orcmem.service.memory_service import MemoryService
from orcmem.service.reflag import ReflagLoop
from orcmem.team.sync import sync_now
from orcmem.worker.control import is_alive

log = logging.getLogger("orcmem.worker.loop")

MAX_SLEEP_S = 60.0  # wake at least this often while waiting for idle sessions
WAKE_POLL_S = 0.25  # while it waits, a run queued by another process (a session's end) is taken within this
EMBED_WAIT_S = 120.0
PREPARE_PAUSE_S = 0.02  # between two batches of the store audit's preparation: others' writes get the lock
STOP_WAIT_S = 10.0  # after Ctrl-C, how long the job threads get to put their jobs back


def drain(learning: Learning, generators: GeneratorFactory, *, pid: int | None = None) -> list[JobOutcome]:
    """Run queued jobs, two at a time at most (across processes), until none is left to claim."""
    me = pid or os.getpid()
    outcomes: list[JobOutcome] = []
    lock = threading.Lock()

    def alive(other: int) -> bool:
        return other == me or is_alive(other)

    def slot() -> None:
        while True:
            job = learning.claim(me, alive)
            if job is None:
                return
            outcome = learning.run_job(job, generators)
            with lock:
                outcomes.append(outcome)

    slots = [JobThread(slot, f"orcmem-job-{i}") for i in range(MAX_CONCURRENT_EXTRACTIONS)]
    try:
        for each in slots:
            each.start()
        for each in slots:
            each.wait()
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM through interrupt_on_sigterm: no paid call outlives the worker
        stop(learning)
        for each in slots:
            each.wait(STOP_WAIT_S)  # each puts its job back in the queue before the worker lets go of its lock
        raise
    return outcomes


class JobThread:
    """A thread whose end is told by an event, waited on instead of `Thread.join`.

    On Python 3.11 a `join` that Ctrl-C interrupts marks the thread as ended while it still runs: every later join
    returns at once and the interpreter's exit no longer waits for it, so a stopped worker could leave before its
    job thread put the job back in the queue (left `running`).
    """

    def __init__(self, work: Callable[[], None], name: str, *, daemon: bool = False) -> None:
        self.ended = threading.Event()
        self._work = work
        self.thread = threading.Thread(target=self._run, name=name, daemon=daemon)

    def _run(self) -> None:
        try:
            self._work()
        finally:
            self.ended.set()

    def start(self) -> None:
        """Start the thread."""
        self.thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the work ended (up to `timeout` seconds); whether it did (a thread never started: at once)."""
        if self.thread.ident is None:
            return False
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.ended.wait(WAKE_POLL_S):  # short waits: a signal is handled even if a job thread caught it
            if deadline is not None and time.monotonic() >= deadline:
                return False
        return True


def stop(learning: Learning) -> None:
    """Claim nothing more and end every model call in flight (their jobs go back to the queue)."""
    learning.cancelled.set()
    stop_all_processes()


def interrupt_on_sigterm() -> None:
    """Make SIGTERM stop this process as Ctrl-C does, so the same clean-up runs (call from the main thread)."""

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def run(
    service: MemoryService,
    generators: GeneratorFactory,
    *,
    linger: bool = True,
    clock_sleep: Callable[[float], None] = time.sleep,
    learning: Learning | None = None,
) -> list[JobOutcome]:
    """Drain the queue; while `linger`, also wait for open sessions to go idle and distil them."""
    learning = learning or Learning(service)
    outcomes: list[JobOutcome] = []
    service.vectors_changed()  # what commands wrote and left to a worker (embed_handoff), beside what it learns
    missing_before = -1
    reflag = service.reflag.in_background("orcmem worker")  # flags an upgraded detector left, beside the jobs
    try:
        while True:
            wait = learning.idle_ms()
            learning.sweep_idle(wait)
            done = drain(learning, generators)
            outcomes.extend(done)
            if done:
                continue
            deadline = learning.next_idle_deadline(wait) if linger else None
            retry = learning.next_retry() if linger else None  # a job waiting out a rate limit
            if retry is not None:
                deadline = retry if deadline is None else min(deadline, retry)
            if deadline is None or learning.extraction_allowed() is not None:
                if service.pump is not None:
                    service.pump.wait(EMBED_WAIT_S)  # the vectors of what this worker saved, before it exits
                if learning.untaken_jobs():
                    continue  # queued while this worker ran: their hooks saw it running and started no other worker
                left = _still_missing(service)
                if left and left != missing_before:
                    missing_before = left  # a command wrote while this worker embedded: it saw it running, started none
                    service.vectors_changed()
                    continue
                _send_to_team(service)
                _check_freshness(service)
                if not _prepare_audit(service, learning, clock_sleep):
                    continue  # a run queued meanwhile comes first; the preparation goes on after it
                service.review.expire()  # a long-lived worker also erases what was left unreviewed too long
                _finish_reflag(reflag)
                break
            _wait_for_work(learning, min(MAX_SLEEP_S, max(0.5, (deadline - service.clock()) / 1000)), clock_sleep)
    finally:
        reflag.close()
    return outcomes


def _finish_reflag(reflag: ReflagLoop) -> None:
    """Before the worker exits, let its re-flag finish (short waits: Ctrl-C still stops it; what is done stays)."""
    while not reflag.done.wait(WAKE_POLL_S):
        pass


def _check_freshness(service: MemoryService) -> None:
    """Check the memories of projects used this week against their code before the worker exits (incremental)."""
    week_ago = service.clock() - 7 * 24 * 3600 * 1000
    for project, _count in service.projects():
        if project.last_seen_at < week_ago:
            continue
        try:
            service.check_freshness(project)
        except Exception as exc:  # one project's check failing leaves the others, and the worker, alone
            print(f"orcmem worker: freshness check of {project.name}: {type(exc).__name__}: {exc}", file=sys.stderr)


def _prepare_audit(service: MemoryService, learning: Learning, clock_sleep: Callable[[float], None]) -> bool:
    """Do ahead what the first store audit after an upgrade would do per memory (`StoreAudit.prepare`), a small
    batch at a time with a pause between, so hooks and commands get the write lock; whether it ended (False: a run
    was queued meanwhile and comes first)."""
    if not service.is_enabled():
        return True

    def go_on() -> bool:
        clock_sleep(PREPARE_PAUSE_S)
        return not learning.untaken_jobs()

    try:
        return service.store_audit.prepare_all(go_on)
    except StoreError as exc:  # a busy or read-only store: the next worker, or the MCP server, prepares it
        print(f"orcmem worker: the audit's preparation: {exc}", file=sys.stderr)
        return True


def _send_to_team(service: MemoryService) -> None:
    """Push what this profile wrote to its team before the worker exits (a profile without a team: nothing)."""
    if service.team.link() is None or not service.team.pending():
        return

    try:
        sync_now(service, wait=False)  # an MCP server's syncer may be at it already
    except OrcmemError as exc:  # the team database is away: the outbox keeps it for the next sync
        print(f"orcmem worker: team sync: {exc}", file=sys.stderr)


def _still_missing(service: MemoryService) -> int:
    """How many memories lack a vector that this worker could make (0 without a model or with memory off)."""
    pump = service.pump
    if pump is None or not service.is_enabled():
        return 0
    return pump.pending()


def _wait_for_work(learning: Learning, seconds: float, clock_sleep: Callable[[float], None]) -> None:
    """Sleep up to `seconds`, waking as soon as another process queues a job (a session ended meanwhile)."""
    waited = 0.0
    while waited < seconds:
        step = min(WAKE_POLL_S, seconds - waited)
        clock_sleep(step)
        waited += step
        if learning.untaken_jobs():
            return
