"""run_process: separate output, stdin that need not be read, and a timeout that stops the whole group."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from orcmem.extract.runner import run_process
from tests.extract.support import alive, group_alive


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_stdout_and_stderr_are_separate_and_stdin_arrives(tmp_path: Path) -> None:
    code = "import sys; data = sys.stdin.read(); print(data.upper()); sys.stderr.write('warn'); sys.exit(3)"
    outcome = run_process(python(code), "héllo", cwd=str(tmp_path), env={}, timeout=10)
    assert outcome.returncode == 3
    assert outcome.stdout == "HÉLLO\n"
    assert outcome.stderr == "warn"
    assert not outcome.timed_out and outcome.start_error is None
    assert outcome.describe() == "it exited with code 3"


def test_a_process_that_never_reads_a_large_stdin_does_not_block(tmp_path: Path) -> None:
    started = time.monotonic()
    outcome = run_process(python("print('done')"), "x" * 5_000_000, cwd=str(tmp_path), env={}, timeout=10)
    assert outcome.stdout == "done\n"
    assert time.monotonic() - started < 10


def test_output_is_capped(tmp_path: Path) -> None:
    code = "import sys; sys.stdout.write('a' * 100_000)"
    outcome = run_process(python(code), "", cwd=str(tmp_path), env={}, timeout=10, max_output_bytes=1000)
    assert outcome.stdout == "a" * 1000


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    code = (
        "import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f"open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    )
    started = time.monotonic()
    outcome = run_process(python(code), "", cwd=str(tmp_path), env={}, timeout=1, kill_grace=0.5)
    assert outcome.timed_out and outcome.returncode is None
    assert outcome.describe() == "it timed out and was stopped"
    assert time.monotonic() - started < 8
    pid = int(pid_file.read_text())
    assert not alive(pid)
    assert not group_alive(pid)


def test_a_missing_program(tmp_path: Path) -> None:
    outcome = run_process([str(tmp_path / "nope")], "", cwd=str(tmp_path), env={}, timeout=1)
    assert outcome.returncode is None
    assert outcome.start_error is not None and outcome.start_error.startswith("it could not be started")


def test_once_stopping_a_call_that_starts_anyway_is_ended_at_once() -> None:
    import subprocess
    import sys
    import time

    code = (
        "from orcmem.extract.runner import run_process, stop_all_processes\n"
        "stop_all_processes(grace=0)\n"
        "outcome = run_process(['sleep', '30'], '', cwd='/', env={'PATH': '/usr/bin:/bin'}, timeout=60)\n"
        "print(outcome.returncode)\n"
    )
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) < 0  # killed by a signal, not left to run its 30 seconds
    assert time.monotonic() - started < 25
