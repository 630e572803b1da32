"""The Runs page shows what learning cost: each job's tokens and dollars, the period totals, the budget, a hold."""

from __future__ import annotations

from starlette.testclient import TestClient

from orcmem.models.types import Project
from orcmem.models.usage import Usage
from orcmem.models.vocabulary import UsageCall
from orcmem.service.memory_service import MemoryService
from orcmem.store.runs import Run


def finished_run(service: MemoryService, project: Project, written: int) -> Run:
    """A run whose extraction job is done, having written `written` memories."""
    run = service.store.runs.for_session(
        project_id=project.id, agent="claude", session_id="s", transcript_path=None, cwd=None, now=service.clock()
    )
    service.store.jobs.enqueue(run.id, policy_revision=0, now=service.clock())
    service.store.jobs.finish(run.id, "done", error=None, written=written, now=service.clock())
    return run


def test_runs_page_shows_the_cost_of_each_job_the_totals_and_a_reached_budget(
    client: TestClient, service: MemoryService, project: Project
) -> None:
    run = finished_run(service, project, written=2)
    usage = Usage(1843, 175, 34324, 7314, 0.0189534, "claude-haiku-4-5-20251001")
    service.cost.record(run, "claude", usage, None, status="ok", started_at=service.clock())
    text = client.get("/runs").text
    assert "Cost of learning" in text and "43,656 tokens, $0.0190" in text
    assert '<th scope="row">Today</th>' in text and "Learning waits" not in text
    service.cost.set_budget(runs=1)
    text = client.get("/runs").text
    assert "Learning waits: budget reached: 1/1 runs today; queued runs resume after midnight" in text
    assert "Daily budget: 1 run, 2,000,000 tokens, $5.00 a day" in text


def test_runs_page_gives_the_judgement_apart_within_the_run(
    client: TestClient, service: MemoryService, project: Project
) -> None:
    run = finished_run(service, project, written=1)
    service.cost.record(run, "claude", Usage(1000, 100), None, status="ok", started_at=service.clock())
    judged = Usage(300, 20)
    service.cost.record(run, "claude", judged, None, status="ok", started_at=service.clock(), call=UsageCall.JUDGEMENT)
    text = client.get("/runs").text
    assert "1,420 tokens (judgement 320 tokens)" in text  # the job's cost: both calls summed, the judgement apart
    assert "1,420 (judgement 320)" in text  # today's total
