"""`orcmem worker`: drain the extraction queue, distil idle sessions, then exit."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from orcmem.models.constants import IDLE_MINUTES_DEFAULT, MAX_CONCURRENT_EXTRACTIONS, SETTING_IDLE_MINUTES
from orcmem.service import MemoryService
from orcmem.service.learning import GeneratorFactory, JobOutcome, Learning

log = logging.getLogger("orcmem.worker")

LOCK_NAME = "worker.lock"
LOG_NAME = "worker.log"
MAX_SLEEP_S = 60.0  # wake at least this often while waiting for idle sessions
EMBED_WAIT_S = 120.0


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


def spawn_worker(home: Path) -> None:
    """Start `orcmem worker` in the background, detached from the caller (a hook returns at once)."""
    logs = home / "logs"
    logs.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(logs / LOG_NAME, "ab") as out:
        subprocess.Popen(
            [sys.executable, "-m", "orcmem", "worker"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
            close_fds=True,
            env={**os.environ, "ORCMEM_HOME": str(home)},
        )


def idle_ms(service: MemoryService) -> int:
    """How long a session must be idle before it is distilled, in milliseconds."""
    raw = service.store.settings.get(SETTING_IDLE_MINUTES)
    try:
        minutes = float(raw) if raw is not None else IDLE_MINUTES_DEFAULT
    except ValueError:
        minutes = IDLE_MINUTES_DEFAULT
    return int(max(0.0, minutes) * 60_000)


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
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def run(
    service: MemoryService, generators: GeneratorFactory, *, linger: bool = True, clock_sleep=time.sleep
) -> list[JobOutcome]:
    """Drain the queue; while `linger`, also wait for open sessions to go idle and distil them."""
    learning = Learning(service)
    outcomes: list[JobOutcome] = []
    while True:
        wait = idle_ms(service)
        learning.sweep_idle(wait)
        done = drain(learning, generators)
        outcomes.extend(done)
        if done:
            continue
        deadline = learning.next_idle_deadline(wait) if linger else None
        if deadline is None or learning.extraction_allowed() is not None:
            if service.pump is not None:
                service.pump.wait(EMBED_WAIT_S)  # the vectors of what this worker saved, before it exits
            if _jobs_left(service):
                continue  # queued while this worker ran: their hooks saw it running and started no other worker
            break
        clock_sleep(min(MAX_SLEEP_S, max(0.5, (deadline - service.clock()) / 1000)))
    return outcomes


def _jobs_left(service: MemoryService) -> bool:
    """Queued jobs that no running job's worker will take next (fewer than the maximum run)."""
    counts = service.store.jobs.counts()
    return counts.get("queued", 0) > 0 and counts.get("running", 0) < MAX_CONCURRENT_EXTRACTIONS
