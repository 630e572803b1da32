"""The Overview and Runs pages, the statistics queries behind them, and the SVG chart."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import date
from typing import Any

from starlette.testclient import TestClient

from orcmem.models.types import NewMemory, Project, Scope, Source
from orcmem.service.memory_service import MemoryService
from orcmem.service.overview import GrowthBucket, build_overview, build_runs, growth_buckets
from orcmem.store.stats import MS_PER_DAY, StatsRepository
from orcmem.store.summaries import Summary
from orcmem.web.chart import growth_chart, period_label
from tests.web.support import seed

# --- statistics --------------------------------------------------------------------------------------------------


def test_breakdown_counts_what_the_project_sees(service: MemoryService, project: Project, tmp_path: Any) -> None:
    from orcmem.host.workspace import locate

    ids = seed(service, project, 6)
    service.feedback(project, ids[0], "wrong")
    service.record(
        project, NewMemory(type="fact", title="Global", body="Everywhere.", source=Source.USER, scope=Scope.GLOBAL)
    )
    other_dir = tmp_path / "elsewhere"
    other_dir.mkdir()
    other = service.project(locate(other_dir))
    service.record(other, NewMemory(type="fact", title="Other", body="Not here.", source=Source.USER))
    stats = StatsRepository(service.store.db)
    rows = stats.breakdown(project.id)
    assert sum(n for *_, n in rows) == 7
    assert ("lesson", "agent", "retracted", 1) in rows
    overview = build_overview(service.store, project, service.clock())
    assert overview.total == 7
    assert dict(overview.by_type)["fact"] == 1 and dict(overview.by_type)["workflow"] == 0
    assert [t for t, _ in overview.by_type][:2] == ["decision", "spec"]  # the vocabulary's order
    assert dict(overview.by_source) == {"user": 2, "agent": 2, "extraction": 2, "tool": 1}
    assert dict(overview.by_status) == {"active": 6, "stale": 0, "retracted": 1, "pending": 0, "superseded": 0}


def test_created_per_day_follows_the_local_day(service: MemoryService, project: Project, clock: Any) -> None:
    clock.now = 10 * MS_PER_DAY + 23 * 3_600_000  # 23:00 UTC on day 10
    seed(service, project, 2, days=0.5)
    stats = StatsRepository(service.store.db)
    assert stats.created_per_day(project.id) == [(10, 1), (11, 1)]
    assert stats.created_per_day(project.id, utc_offset_ms=2 * 3_600_000) == [(11, 2)]


def test_growth_buckets_fill_gaps_and_widen_with_time() -> None:
    assert growth_buckets([], 100) == ((), "day")
    days, period = growth_buckets([(100, 2), (103, 1)], 104)
    assert period == "day" and [(b.added, b.total) for b in days] == [(2, 2), (0, 2), (0, 2), (1, 3), (0, 3)]
    weeks, period = growth_buckets([(0, 1), (100, 1)], 100)
    assert period == "week" and weeks[0].start == date(1969, 12, 29)  # weeks start on Monday
    assert sum(b.added for b in weeks) == 2 and weeks[-1].total == 2
    months, period = growth_buckets([(0, 1), (1000, 4)], 1000)
    assert period == "month" and months[0].start == date(1970, 1, 1) and months[-1].total == 5
    assert all(b.start.day == 1 for b in months)


def test_job_states_per_project(service: MemoryService, project: Project) -> None:
    run = _run(service, project, "s1")
    service.store.jobs.enqueue(run.id, policy_revision=0, now=service.clock())
    assert StatsRepository(service.store.db).job_states(project.id) == {"queued": 1}
    assert StatsRepository(service.store.db).job_states(None) == {"queued": 1}


# --- the chart ---------------------------------------------------------------------------------------------------


def test_the_chart_is_valid_svg_with_a_title_and_a_bar_per_busy_period() -> None:
    buckets = [GrowthBucket(date(2027, 1, d), added, total) for d, added, total in [(1, 2, 2), (2, 0, 2), (3, 5, 7)]]
    svg = str(growth_chart(buckets, "day"))
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg" and root.get("role") == "img"
    assert root.find(f"{ns}title").text == "Memories over time, per day"
    assert len(root.findall(f"{ns}rect")) == 2
    assert root.find(f"{ns}polyline") is not None
    assert "3 Jan: 5 added, 7 in total" in svg
    assert root.find(f"{ns}desc").text == "7 memories in all, counted per day from 1 Jan 2027 to 3 Jan 2027."
    one = ET.fromstring(str(growth_chart(buckets[:1], "day")))
    assert one.find(f"{ns}circle") is not None
    assert str(growth_chart([], "day")) == ""


def test_period_labels() -> None:
    assert period_label(date(2027, 1, 11), "day") == "11 Jan"
    assert period_label(date(2027, 1, 11), "week") == "week of 11 Jan"
    assert period_label(date(2027, 1, 1), "month") == "Jan 2027"


# --- the Overview page -----------------------------------------------------------------------------------------------


def test_overview_page(client: TestClient, service: MemoryService, project: Project) -> None:
    seed(service, project, 9, days=2)
    text = client.get("/overview").text
    assert "9 memories in this project" in text
    assert text.count('<svg class="chart"') == 1 and "Memories over time, per day" in text
    assert re.search(r'<th scope="row">Lesson</th><td class="num">2</td>', text)
    assert re.search(r'<th scope="row">Saved by an agent</th><td class="num">3</td>', text)
    assert "Show the numbers" in text


def test_overview_of_an_empty_project(client: TestClient, project: Project) -> None:
    text = client.get("/overview").text
    assert "Nothing to count yet" in text and '<svg class="chart"' not in text


# --- the Runs page ---------------------------------------------------------------------------------------------------


def _run(service: MemoryService, project: Project, session: str) -> Any:
    return service.store.runs.for_session(
        project_id=project.id, agent="claude", session_id=session, transcript_path=None, cwd=None, now=service.clock()
    )


def test_runs_page_lists_summaries_and_jobs_newest_first(
    client: TestClient, service: MemoryService, project: Project, clock: Any
) -> None:
    older = _run(service, project, "s-old")
    service.store.jobs.enqueue(older.id, policy_revision=0, now=clock())
    service.store.jobs.finish(
        older.id, "failed", error="claude exited with status 1: <b>boom</b>", written=0, now=clock()
    )
    service.store.summaries.upsert(
        Summary(
            older.id,
            None,
            project.id,
            "Fix the flaky test",
            "Pinned the pool",
            "partial",
            ("CI still red",),
            None,
            clock(),
        )
    )
    clock.advance_days(1)
    newer = _run(service, project, "s-new")
    service.store.jobs.enqueue(newer.id, policy_revision=0, now=clock())
    service.store.jobs.finish(newer.id, "done", error=None, written=3, now=clock())
    service.store.summaries.upsert(
        Summary(newer.id, None, project.id, "Add <script>export</script>", "Wrote it", "success", (), "haiku", clock())
    )
    text = client.get("/runs").text
    assert text.index("Add &lt;script&gt;export&lt;/script&gt;") < text.index("Fix the flaky test")
    assert "Pinned the pool" in text and "CI still red" in text and "summarized by haiku" in text
    assert text.index("badge-job-done") < text.index("badge-job-failed")
    assert "claude exited with status 1: &lt;b&gt;boom&lt;/b&gt;" in text
    assert "<script>export" not in text
    runs = build_runs(service.store, project)
    assert [view.summary.run_id for view in runs.summaries] == [newer.id, older.id]


def test_runs_page_without_runs(client: TestClient, project: Project) -> None:
    text = client.get("/runs").text
    assert "No run has been summarized in this project yet" in text and "No extraction jobs yet" in text


def test_unknown_pages_are_not_found(client: TestClient) -> None:
    response = client.get("/nowhere")
    assert response.status_code == 404 and "There is no page at this address." in response.text
