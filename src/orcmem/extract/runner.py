"""Run a CLI once: prompt on stdin, output captured apart, in its own process group that a timeout kills whole."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from orcmem.extract.constants import GENERATOR_KILL_GRACE_S, GENERATOR_OUTPUT_MAX_BYTES


@dataclass(frozen=True, slots=True)
class ProcessOutcome:
    """How a run ended: its exit code (None when it could not start or was killed), stdout and stderr apart."""

    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    start_error: str | None = None

    def describe(self) -> str:
        """A short account of how the process ended, for error messages."""
        if self.start_error is not None:
            return self.start_error
        if self.timed_out:
            return "it timed out and was stopped"
        if self.returncode is not None and self.returncode < 0:
            return f"it was killed by signal {-self.returncode}"
        return f"it exited with code {self.returncode}"


# Process groups of the generator calls in flight, so that Ctrl-C or SIGTERM on the worker can end them all: a
# call runs on a job thread, which no signal reaches. Once stopping, a call that starts afterwards is ended at once.
_LIVE_GROUPS: set[int] = set()
_LIVE_LOCK = threading.Lock()
_STOPPING = threading.Event()


def stop_all_processes(grace: float = GENERATOR_KILL_GRACE_S) -> int:
    """SIGTERM every generator process group in flight, then SIGKILL what is left after `grace`; how many.

    From then on, this process starts no generator call that lives: one that starts anyway is killed at once.
    """
    with _LIVE_LOCK:
        _STOPPING.set()
        groups = list(_LIVE_GROUPS)
    for pgid in groups:
        _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while groups and time.monotonic() < deadline:
        with _LIVE_LOCK:
            if not _LIVE_GROUPS & set(groups):
                break
        time.sleep(0.05)
    for pgid in groups:
        _signal_group(pgid, signal.SIGKILL)
    return len(groups)


def _read_back(handle: IO[bytes], limit: int) -> str:
    handle.seek(0)
    data = handle.read(limit)
    return data.decode("utf-8", errors="replace")


def _signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to a process group; False when the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False
    return True


def _stop_group(process: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM the whole group, then SIGKILL it after `grace` seconds if its leader is still there."""
    pgid = process.pid  # the leader of a new session is its group's id
    _signal_group(pgid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=grace)
    _signal_group(pgid, signal.SIGKILL)  # children that outlived the leader go too
    process.wait()


def run_process(
    argv: Sequence[str],
    stdin_text: str,
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout: float,
    max_output_bytes: int = GENERATOR_OUTPUT_MAX_BYTES,
    kill_grace: float = GENERATOR_KILL_GRACE_S,
) -> ProcessOutcome:
    """Run `argv` with `stdin_text` as its standard input; never raises.

    Standard input, output and error are anonymous temporary files rather than pipes, so a child that never reads
    its input or leaves a descendant holding the output open cannot block this call past `timeout`. The process
    starts a new session; on timeout the whole group is stopped, and any descendant left after a normal exit is
    killed with it.
    """
    with (
        tempfile.TemporaryFile() as stdin,
        tempfile.TemporaryFile() as stdout,
        tempfile.TemporaryFile() as stderr,
    ):
        stdin.write(stdin_text.encode("utf-8"))
        stdin.seek(0)
        try:
            process = subprocess.Popen(
                list(argv),
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                cwd=cwd,
                env=dict(env),
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            return ProcessOutcome(None, "", "", start_error=f"it could not be started ({exc.strerror or exc})")
        with _LIVE_LOCK:
            _LIVE_GROUPS.add(process.pid)
            stopping = _STOPPING.is_set()
        if stopping:  # the worker is being stopped: this call must not outlive it
            _stop_group(process, 0)
        timed_out = False
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop_group(process, kill_grace)
        except BaseException:
            _stop_group(process, 0)
            raise
        else:
            # The leader is reaped, but its group id cannot be reused while any member is alive.
            _signal_group(process.pid, signal.SIGKILL)
        finally:
            with _LIVE_LOCK:
                _LIVE_GROUPS.discard(process.pid)
        return ProcessOutcome(
            None if timed_out else process.returncode,
            _read_back(stdout, max_output_bytes),
            _read_back(stderr, max_output_bytes),
            timed_out=timed_out,
        )
