"""SIGKILL of the real `orcmem worker` in the middle of saving a run's memories.

A worker killed while the model call is still running is covered by
tests/test_learning_e2e.py::test_a_worker_killed_mid_job_loses_no_job (jobs go back to the queue, a new worker
finishes them, the merged memory counts each run once). This file kills the worker inside the save itself: after
the stand-in `claude` has answered, while the summary and six memories are being written.

To make the save last long enough to be caught, the test adds an AFTER INSERT trigger on `memories` to the test's
own database that runs a slow query (the worker's code is untouched). The worker holds the write lock for the
whole save, so "the stand-in has answered and the write lock has been held for a while" means "mid-save".
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest

from orcmem.host.workspace import locate
from orcmem.models.types import Memory, MemoryFilter
from orcmem.service.learning import Learning
from orcmem.service.memory_service import MemoryService
from orcmem.store.summaries import Summary
from tests.fakes import standin_claude_env
from tests.faults.support import DB_NAME, integrity, write_lock_held
from tests.helpers import wait_for

FIXTURES = Path(__file__).parent.parent / "fixtures"
TOPICS = [f"faults/topic-{i}" for i in range(6)]  # six is the most one extraction keeps
ANSWER = {
    "summary": {"request": "Harden the build", "workDone": "Six fixes", "outcome": "green", "openItems": []},
    "memories": [
        {
            "type": "lesson",
            "title": f"Build lesson {i}",
            "body": f"Lesson number {i} from the run that was killed while saving",
            "topicKey": topic,
            "files": [f"src/module_{i}.py", f"tests/test_module_{i}.py"],
            "confidence": 0.7,
        }
        for i, topic in enumerate(TOPICS)
    ],
}
STANDIN = """#!{python}
import json, os, sys
sys.stdin.read()
with open(os.environ["STANDIN_CALLS"], "a") as f:
    f.write(str(os.getpid()) + "\\n")
envelope = json.loads({envelope!r})
envelope["result"] = "```json\\n" + {answer!r} + "\\n```"
print(json.dumps(envelope), flush=True)
open(os.environ["STANDIN_ANSWERED"], "w").close()
"""
SLOW_TRIGGER = (
    "CREATE TRIGGER fault_slow_save AFTER INSERT ON memories BEGIN "
    "SELECT count(*) FROM fault_slow a, fault_slow b WHERE a.n + b.n >= 0; END"
)
COUNT_TO = (
    "WITH RECURSIVE c(n) AS (SELECT ?1 UNION ALL SELECT n + 1 FROM c WHERE n < ?2) "
    "INSERT INTO fault_slow SELECT n FROM c"
)
SECONDS_PER_MEMORY = 1.0  # six memories: a save of about six seconds, caught after half a second


@pytest.fixture
def agent_env(tmp_path: Path, orcmem_home: Path) -> dict[str, str]:
    """An environment whose PATH starts with a stand-in `claude` that answers at once with six memories."""
    return {
        **standin_claude_env(tmp_path / "bin", STANDIN, ANSWER),
        "ORCMEM_HOME": str(orcmem_home),
        "STANDIN_CALLS": str(tmp_path / "calls.txt"),
        "STANDIN_ANSWERED": str(tmp_path / "answered"),
    }


def queue_one_run(home: Path, project_dir: Path) -> str:
    """Memory on, one ended Claude Code run ingested from the sample transcript and queued; returns its id."""
    service = MemoryService.open(home, vectors=False)
    try:
        service.settings.set_enabled(True)
        transcript = project_dir / "session.jsonl"
        shutil.copy(FIXTURES / "agents" / "claude_transcript_sample.jsonl", transcript)
        learning = Learning(service)
        run = learning.ingest(service.project(locate(project_dir)), transcript, session_id="killed", ended=True).run
        assert learning.queue(run)
        return run.id
    finally:
        service.close()


def slow_down_saves(path: Path) -> None:
    """Add the slow trigger, sized so that one memory insert takes about SECONDS_PER_MEMORY on this machine."""
    conn = apsw.Connection(str(path))
    try:
        conn.execute("CREATE TABLE fault_slow (n INTEGER)")
        conn.execute(COUNT_TO, (1, 1000))
        started = time.perf_counter()
        conn.execute("SELECT count(*) FROM fault_slow a, fault_slow b WHERE a.n + b.n >= 0").fetchall()
        per_row_pair = (time.perf_counter() - started) / 1_000_000
        rows = int(min(20_000, max(1_000, (SECONDS_PER_MEMORY / per_row_pair) ** 0.5)))
        conn.execute(COUNT_TO, (1001, rows))
        conn.execute(SLOW_TRIGGER)
    finally:
        conn.close()


def remove_slow_down(path: Path) -> None:
    """Drop the trigger and its table again."""
    conn = apsw.Connection(str(path))
    try:
        conn.execute("DROP TRIGGER fault_slow_save")
        conn.execute("DROP TABLE fault_slow")
    finally:
        conn.close()


def lock_held_for(path: Path, seconds: float, timeout: float = 60.0) -> None:
    """Wait until the database's write lock has been held without a break for `seconds`."""
    deadline = time.monotonic() + timeout
    since: float | None = None
    while time.monotonic() < deadline:
        if write_lock_held(path):
            since = since or time.monotonic()
            if time.monotonic() - since >= seconds:
                return
        else:
            since = None
        time.sleep(0.02)
    raise AssertionError("the worker never held the write lock that long")


def run_state(home: Path, project_dir: Path, run_id: str) -> tuple[str, int | None, list[Memory], Summary | None]:
    """(job state, worker pid, every memory of the project, the run's summary or None)."""
    service = MemoryService.open(home, vectors=False)
    try:
        job = service.store.jobs.get(run_id)
        assert job is not None
        memories = service.list(service.project(locate(project_dir), create=False), MemoryFilter(limit=500))
        assert all(m.source_run_id == run_id for m in memories)
        return job.state, job.worker_pid, memories, service.store.summaries.get(run_id)
    finally:
        service.close()


@pytest.mark.long
def test_a_worker_killed_mid_save_leaves_all_or_nothing_and_the_job_finishes(
    agent_env: dict[str, str], tmp_path: Path, project_dir: Path, orcmem_home: Path
) -> None:
    db = orcmem_home / DB_NAME
    run_id = queue_one_run(orcmem_home, project_dir)
    slow_down_saves(db)
    worker = subprocess.Popen(
        [sys.executable, "-m", "orcmem", "worker", "--no-linger"],
        env=agent_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(lambda: Path(agent_env["STANDIN_ANSWERED"]).exists(), what="the stand-in's answer")
        lock_held_for(db, SECONDS_PER_MEMORY / 2)  # inside the save: the summary and a memory are being written
        os.killpg(worker.pid, signal.SIGKILL)
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=10)
    assert worker.returncode == -signal.SIGKILL  # killed, not finished before the kill landed

    assert integrity(db) == ["ok"]
    state, pid, memories, summary = run_state(orcmem_home, project_dir, run_id)
    # Nothing of the run was kept: not one memory, not the summary; the job still names the dead worker.
    assert (state, pid, memories, summary) == ("running", worker.pid, [], None)

    remove_slow_down(db)
    finisher = subprocess.run(
        [sys.executable, "-m", "orcmem", "worker", "--no-linger"],
        env=agent_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finisher.returncode == 0, finisher.stderr
    assert f"{run_id}: done, 6 memories" in finisher.stdout
    state, pid, memories, summary = run_state(orcmem_home, project_dir, run_id)
    assert (state, pid) == ("done", None)
    assert sorted(m.topic_key for m in memories) == TOPICS  # every memory, each once
    assert all(m.evidence_count == 1 and len(m.files) == 2 for m in memories)
    assert summary is not None and summary.request == "Harden the build"
    assert len(Path(agent_env["STANDIN_CALLS"]).read_text().splitlines()) == 2  # the run was distilled again
    assert integrity(db) == ["ok"]
