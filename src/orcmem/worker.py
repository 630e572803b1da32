"""`orcmem worker`: drain the extraction queue, distil idle sessions, then exit."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from orcmem.extract.runner import stop_all_processes
from orcmem.models.constants import MAX_CONCURRENT_EXTRACTIONS
from orcmem.service.learning import GeneratorFactory, JobOutcome, Learning
from orcmem.service.memory_service import MemoryService

log = logging.getLogger("orcmem.worker")

LOCK_NAME = "worker.lock"
LOG_NAME = "worker.log"
MAX_SLEEP_S = 60.0  # wake at least this often while waiting for idle sessions
WAKE_POLL_S = 0.25  # while it waits, a run queued by another process (a session's end) is taken within this
EMBED_WAIT_S = 120.0
STOP_WAIT_S = 10.0  # after Ctrl-C, how long the job threads get to put their jobs back


def is_alive(pid: int) -> bool:
    """Whether a process with this id exists on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def worker_lock(home: Path) -> Iterator[None]:
    """Hold a shared lock while this worker runs, so hooks can tell that one is running."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(home / LOCK_NAME, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def worker_running(home: Path) -> bool:
    """True when some worker holds the lock (an exclusive lock cannot be taken)."""
    path = home / LOCK_NAME
    if not path.exists():
        return False
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def worker_pids(home: Path, proc: Path = Path("/proc")) -> list[int]:
    """The processes running `orcmem worker` on this profile (Linux's /proc; elsewhere none are found)."""
    wanted = f"ORCMEM_HOME={home}".encode()
    pids = []
    for entry in proc.iterdir() if proc.is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        is_worker = b"worker" in command and any(b"orcmem" in part for part in command)
        if is_worker and wanted in environ:
            pids.append(int(entry.name))
    return pids


def stop_workers(home: Path, timeout: float = 15.0) -> int:
    """SIGTERM the profile's workers (each puts its jobs back), wait until none holds the lock; how many."""
    pids = [pid for pid in worker_pids(home) if pid != os.getpid()]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while worker_running(home) and time.monotonic() < deadline:
        time.sleep(0.05)
    return len(pids)


def spawn_worker(home: Path) -> None:
    """Start `orcmem worker` in the background, detached from the caller (a hook returns at once)."""
    logs = home / "logs"
    logs.mkdir(parents=True, exist_ok=True, mode=0o700)
    with os.fdopen(os.open(logs / LOG_NAME, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "ab") as out:
        subprocess.Popen(
            [sys.executable, "-m", "orcmem", "worker"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
            close_fds=True,
            env={**os.environ, "ORCMEM_HOME": str(home)},
        )


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

    threads = [threading.Thread(target=slot, name=f"orcmem-job-{i}") for i in range(MAX_CONCURRENT_EXTRACTIONS)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM through interrupt_on_sigterm: no paid call outlives the worker
        stop(learning)
        for thread in threads:
            if thread.ident is not None:
                thread.join(timeout=STOP_WAIT_S)  # each puts its job back in the queue
        raise
    return outcomes


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
    while True:
        wait = learning.idle_ms()
        learning.sweep_idle(wait)
        done = drain(learning, generators)
        outcomes.extend(done)
        if done:
            continue
        deadline = learning.next_idle_deadline(wait) if linger else None
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
            break
        _wait_for_work(learning, min(MAX_SLEEP_S, max(0.5, (deadline - service.clock()) / 1000)), clock_sleep)
    return outcomes


def _still_missing(service: MemoryService) -> int:
    """How many memories lack a vector that this worker could make (0 without a working model or with memory off)."""
    pump = service.pump
    if pump is None or pump.last_error is not None or not service.is_enabled():
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
