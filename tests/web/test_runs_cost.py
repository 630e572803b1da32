"""The Runs page shows what learning cost: each job's tokens and dollars, the period totals, the budget, a hold."""

from __future__ import annotations

from starlette.testclient import TestClient

from orcmem.models.types import Project
from orcmem.models.usage import Usage
from orcmem.service.memory_service import MemoryService


def test_runs_page_shows_the_cost_of_each_job_the_totals_and_a_reached_budget(
    client: TestClient, service: MemoryService, project: Project
) -> None:
    run = service.store.runs.for_session(
        project_id=project.id, agent="claude", session_id="s", transcript_path=None, cwd=None, now=service.clock()
    )
    service.store.jobs.enqueue(run.id, policy_revision=0, now=service.clock())
    service.store.jobs.finish(run.id, "done", error=None, written=2, now=service.clock())
    usage = Usage(1843, 175, 34324, 7314, 0.0189534, "claude-haiku-4-5-20251001")
    service.cost.record(run, "claude", usage, None, status="ok", started_at=service.clock())
    text = client.get("/runs").text
    assert "Cost of learning" in text and "43,656 tokens, $0.0190" in text
    assert '<th scope="row">Today</th>' in text and "Learning waits" not in text
    service.cost.set_budget(runs=1)
    text = client.get("/runs").text
    assert "Learning waits: budget reached: 1/1 runs today; queued runs resume after midnight" in text
    assert "Daily budget: 1 run, 2,000,000 tokens, $5.00 a day" in text
