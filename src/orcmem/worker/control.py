"""Whether a background `orcmem worker` runs on a profile, and starting and stopping one: what hooks and commands
need of the worker, without the learning machinery it runs."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

LOCK_NAME = "worker.lock"
LOG_NAME = "worker.log"


def is_alive(pid: int) -> bool:
    """Whether a process with this id exists on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """Whether the process has exited and waits to be reaped (Linux's /proc; elsewhere never known)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] == b"Z"  # the state follows the command's name


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
