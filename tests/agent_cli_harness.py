"""What the tests of the real agent CLIs share: where npm put them, skipping cleanly without them, running orcmem
beside them, and waiting for a queued run's job to end."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orcmem.host.workspace import locate
from orcmem.service.memory_service import MemoryService

CLIS = Path(os.environ.get("ORCMEM_AGENT_CLIS") or Path(__file__).parent / "agent_clis" / "node_modules" / ".bin")


def cli(name: str) -> Path:
    """The real CLI's program, or a skip: ORCMEM_SKIP_AGENT_CLIS is set, or npm did not install it."""
    path = CLIS / name
    if os.environ.get("ORCMEM_SKIP_AGENT_CLIS"):
        pytest.skip("ORCMEM_SKIP_AGENT_CLIS is set")
    if not path.exists():
        pytest.skip(f"the real {name} CLI is not installed in {CLIS} (scripts/check installs it with npm)")
    return path


def cli_path() -> str:
    """PATH with the CLIs and this orcmem first."""
    return f"{CLIS}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"


def agent_env(tmp_path: Path, orcmem_home: Path, *, drop: tuple[str, ...] = (), **extra: str) -> dict[str, str]:
    """This environment with a HOME of its own (tmp_path/home), the test's profile, the CLIs and this orcmem first
    on PATH and no colour; `extra` on top, the `drop` variables taken out."""
    home = tmp_path / "home"
    home.mkdir()
    values = {
        **os.environ,
        "HOME": str(home),
        "ORCMEM_HOME": str(orcmem_home),
        "PATH": cli_path(),
        "NO_COLOR": "1",
        **extra,
    }
    return {name: value for name, value in values.items() if name not in drop}


def orcmem(env: dict[str, str], cwd: Path, *args: str) -> str:
    """Run this orcmem as the person would, in `cwd`; its stdout (a failure fails the test with its stderr)."""
    result = subprocess.run(
        [sys.executable, "-m", "orcmem", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def learned(home: Path, project_dir: Path, timeout: float = 90.0) -> tuple[int, str, list[str]]:
    """(turns, job state, memory titles) of the project's one run, once its job has ended."""
    deadline = time.monotonic() + timeout
    while True:
        service = MemoryService.open(home, vectors=False)
        try:
            jobs = service.store.jobs.list(None)
            project = service.project(locate(project_dir), create=False)
            titles = [memory.title for memory in service.list(project)] if project else []
        finally:
            service.close()
        if jobs and jobs[0][0].state not in ("queued", "running"):
            job, run = jobs[0]
            return run.turns, job.state + (f": {job.error}" if job.error else ""), titles
        if time.monotonic() > deadline:
            raise AssertionError(f"no job ended within {timeout:.0f} s: {jobs}")
        time.sleep(0.2)


def mcp_list_line(program: Path, cwd: Path, env: dict[str, str]) -> str:
    """The line of the CLI's `mcp list` that names orcmem (all it said when none does)."""
    listed = subprocess.run(
        [str(program), "mcp", "list"], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert listed.returncode == 0, listed.stderr
    said = listed.stdout + listed.stderr  # the list goes to stdout or stderr depending on the terminal
    return next((line for line in said.splitlines() if "orcmem" in line), said)
