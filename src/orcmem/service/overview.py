"""What the Overview and Runs pages show: counts by type, source and status, growth over time, run history."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta

from orcmem.models.constants import MS_PER_DAY
from orcmem.models.types import MemoryType, Project, Source, Status
from orcmem.rules.freshness import possibly_stale
from orcmem.store.facade import Store
from orcmem.store.jobs import Job
from orcmem.store.runs import Run
from orcmem.store.summaries import Summary

DAILY_MAX_DAYS = 62  # up to two months of history is drawn day by day
WEEKLY_MAX_WEEKS = 80  # then week by week (weeks start on Monday), then month by month
_EPOCH = date(1970, 1, 1)


@dataclass(frozen=True, slots=True)
class GrowthBucket:
    """One bar of the growth chart: the first day of the period, memories created in it, and the running total."""

    start: date
    added: int
    total: int


@dataclass(frozen=True, slots=True)
class Overview:
    """How many memories a project sees, broken down, and how that number grew."""

    total: int
    by_type: tuple[tuple[str, int], ...]  # every type, in the vocabulary's order, zeros included
    by_source: tuple[tuple[str, int], ...]
    by_status: tuple[tuple[str, int], ...]
    growth: tuple[GrowthBucket, ...]
    period: str  # "day", "week" or "month": the width of one growth bucket
    job_states: dict[str, int]
    possibly_stale: int = 0  # active memories whose cited code moved on: the cards' "Possibly stale" badges


@dataclass(frozen=True, slots=True)
class RunSummaryView:
    """A run summary with the run it came from (None when the run was deleted)."""

    summary: Summary
    run: Run | None


@dataclass(frozen=True, slots=True)
class RunsOverview:
    """A project's run summaries and extraction jobs, newest first."""

    summaries: tuple[RunSummaryView, ...]
    jobs: tuple[tuple[Job, Run], ...]


def _period_start(day: date, period: str) -> date:
    if period == "week":
        return day - timedelta(days=day.weekday())
    if period == "month":
        return day.replace(day=1)
    return day


def _next_period(start: date, period: str) -> date:
    if period == "week":
        return start + timedelta(days=7)
    if period == "month":
        return date(start.year + start.month // 12, start.month % 12 + 1, 1)
    return start + timedelta(days=1)


def growth_buckets(per_day: list[tuple[int, int]], today: int) -> tuple[tuple[GrowthBucket, ...], str]:
    """Bucket (day number, count) pairs into days, weeks or months from the first day up to `today`.

    The period is the finest that keeps the chart readable; empty periods are kept so time runs evenly.
    """
    if not per_day:
        return (), "day"
    first = min(day for day, _ in per_day)
    last = max(today, max(day for day, _ in per_day))
    span = last - first + 1
    period = "day" if span <= DAILY_MAX_DAYS else "week" if span <= WEEKLY_MAX_WEEKS * 7 else "month"
    added: Counter[date] = Counter()
    for day, count in per_day:
        added[_period_start(_EPOCH + timedelta(days=day), period)] += count
    buckets = []
    total = 0
    start = _period_start(_EPOCH + timedelta(days=first), period)
    end = _EPOCH + timedelta(days=last)
    while start <= end:
        total += added[start]
        buckets.append(GrowthBucket(start, added[start], total))
        start = _next_period(start, period)
    return tuple(buckets), period


def build_overview(store: Store, project: Project | None, now: int, *, utc_offset_ms: int = 0) -> Overview:
    """Counts and growth of the memories a project sees (its own and global ones)."""
    stats = store.stats
    project_id = project.id if project else None
    types: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    for memory_type, source, status, count in stats.breakdown(project_id):
        types[memory_type] += count
        sources[source] += count
        statuses[status] += count
    growth, period = growth_buckets(
        stats.created_per_day(project_id, utc_offset_ms=utc_offset_ms), (now + utc_offset_ms) // MS_PER_DAY
    )
    return Overview(
        total=sum(types.values()),
        by_type=tuple((str(t), types[str(t)]) for t in MemoryType),
        by_source=tuple((str(s), sources[str(s)]) for s in Source),
        by_status=tuple((str(s), statuses[str(s)]) for s in Status),
        growth=growth,
        period=period,
        job_states=stats.job_states(project_id) if project_id else {},
        possibly_stale=sum(n for status, reason, n in stats.stale_marks(project_id) if possibly_stale(status, reason)),
    )


def build_runs(store: Store, project: Project, *, limit: int = 50) -> RunsOverview:
    """The newest run summaries and extraction jobs of a project."""
    summaries = tuple(
        RunSummaryView(summary, store.runs.get(summary.run_id)) for summary in store.summaries.recent(project.id, limit)
    )
    return RunsOverview(summaries=summaries, jobs=tuple(store.jobs.list(project.id, limit)))
