"""Where the cost of learning is shown: `orcmem usage`, `orcmem jobs`, `orcmem memory status`, `orcmem memory budget`
and `orcmem doctor`, over calls recorded as the worker records them (real clock, real database)."""

from __future__ import annotations

import json
from pathlib import Path

from orcmem.app.doctor import doctor_checks
from orcmem.host.workspace import locate
from orcmem.models.usage import RateLimit, Usage
from orcmem.service.memory_service import MemoryService

HAIKU = "claude-haiku-4-5-20251001"


def record_calls(home: Path, project_dir: Path, calls: int) -> list[str]:
    """`calls` finished distillation calls of queued-then-done jobs in the project, as the worker records them."""
    service = MemoryService.open(home, vectors=False)
    try:
        service.settings.set_enabled(True)
        project = service.project(locate(project_dir))
        run_ids = []
        for n in range(calls):
            run = service.store.runs.for_session(
                project_id=project.id, agent="claude", session_id=f"s{n}", transcript_path=None, cwd=None,
                now=service.clock(),
            )  # fmt: skip
            service.store.jobs.enqueue(run.id, policy_revision=0, now=service.clock())
            service.store.jobs.finish(run.id, "done", error=None, written=1, now=service.clock())
            usage = Usage(1843, 175, 34324, 7314, 0.0189534, HAIKU, 4264)
            service.cost.record(run, "claude", usage, RateLimit(headroom=0.9), status="ok", started_at=service.clock())
            run_ids.append(run.id)
        return run_ids
    finally:
        service.close()


def test_usage_lists_each_call_and_the_totals_per_period(run, orcmem_home: Path, project_dir: Path) -> None:
    [run_id] = record_calls(orcmem_home, project_dir, 1)
    data = json.loads(run("usage", "--json").output)
    [call] = data["calls"]
    assert (call["run_id"], call["provider"], call["model"], call["status"]) == (run_id, "claude", HAIKU, "ok")
    assert (call["input_tokens"], call["output_tokens"], call["cache_read_tokens"]) == (1843, 175, 34324)
    assert call["tokens"] == 1843 + 175 + 34324 + 7314
    for period in ("day", "week", "month", "all"):
        assert data["totals"][period]["runs"] == 1 and data["overall"][period]["runs"] == 1
    assert data["budget"] == {"runs": 50, "tokens": 2_000_000, "dollars": 5.0, "enabled": True}
    assert data["learning_waits"] is None
    text = run("usage").output
    assert "today      1 run, 43,656 tokens, $0.0190" in text
    assert "in 1,843, out 175 (cache read 34,324, written 7,314), $0.0190" in text
    assert "daily budget: 50 runs, 2,000,000 tokens, $5.00 a day" in text
    every = run("usage", "--all-projects", "--period", "month").output
    assert "month      project: 1 run, 43,656 tokens, $0.0190" in every


def test_a_reached_budget_is_said_by_jobs_status_budget_and_doctor(run, orcmem_home: Path, project_dir: Path) -> None:
    [run_id] = record_calls(orcmem_home, project_dir, 1)
    said = run("memory", "budget", "--runs", "1").output
    reason = "budget reached: 1/1 runs today; queued runs resume after midnight"
    assert "daily budget of learning: 1 run, 2,000,000 tokens, $5.00 a day" in said and reason in said
    jobs = run("jobs").output
    assert jobs.splitlines()[0] == f"learning waits: {reason}"
    assert f"{run_id}  done" in jobs and "43,656 tokens, $0.0190, 0 s" in jobs
    status = run("memory", "status").output
    assert "learning cost today: 1 run, 43,656 tokens, $0.0190 (budget: 1 run," in status
    assert f"learning waits: {reason}" in status
    assert "learning cost this week: 1 run, 43,656 tokens, $0.0190; this month: 1 run" in status
    assert json.loads(run("memory", "status", "--json").output)["learning_waits"] == reason
    refused = run("extract", run_id, ok=False)  # on demand too: it waits in the queue, and says why
    assert refused.exit_code == 1 and f"{run_id} waits in the queue: {reason}" in refused.output
    service = MemoryService.open(orcmem_home, vectors=False)
    try:
        [check] = [
            c for c in doctor_checks(lambda: service, orcmem_home, project_dir) if c["check"] == "learning budget"
        ]
    finally:
        service.close()
    assert (check["ok"], check["required"], check["detail"]) == (False, False, reason)
    lifted = run("memory", "budget", "--off", "--context", "2000").output
    assert "daily budget of learning: off" in lifted and "at most 2,000 tokens" in lifted
    assert "learning waits" not in run("jobs").output


def test_budget_refuses_off_with_caps(run) -> None:
    result = run("memory", "budget", "--off", "--runs", "3", ok=False)
    assert result.exit_code != 0 and "--off lifts every cap" in result.output
