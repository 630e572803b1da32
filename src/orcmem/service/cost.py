"""The cost of learning (`service.cost`): each distillation call's tokens, dollars and time recorded; the daily
budget, and the rate limits, that hold the queue back; the totals per day, week and month."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from orcmem.models.constants import (
    RATE_LIMIT_BACKOFF_MAX_S,
    RATE_LIMIT_BACKOFF_S,
    RATE_LIMIT_YIELD_S,
    SETTING_LEARNING_BUDGET,
)
from orcmem.models.usage import DailySpend, RateLimit, Usage, UsageRow, UsageTotal
from orcmem.models.vocabulary import JobState, UsageCall
from orcmem.rules.budget import (
    Budget,
    budget_reached,
    check_budget,
    day_start,
    next_day_start,
    period_start,
)
from orcmem.service.core import ServiceCore

if TYPE_CHECKING:
    from orcmem.store.runs import Run

PERIODS = ("day", "week", "month", "all")


@dataclass(frozen=True, slots=True)
class Hold:
    """Why learning waits now, and until when (ms since the epoch): the budget or a rate limit."""

    kind: str  # "budget" or "rate_limit"
    reason: str  # the sentence `jobs`, `memory status`, `doctor` and the page show
    until: int


def _clock_text(ms: int) -> str:
    return time.strftime("%H:%M", time.localtime(ms / 1000))


class LearningCost:
    """What distillation spends and what may be spent: over the service's store, clock and audit log."""

    def __init__(self, core: ServiceCore) -> None:
        """The cost of learning over the service's store and clock."""
        self.core = core
        self.store = core.store

    # --- the budget ----------------------------------------------------------------------------------------------
    def budget(self) -> Budget:
        """The daily budget: 50 runs, 2,000,000 tokens and $5 until the user sets another."""
        return Budget.from_json(self.store.settings.get(SETTING_LEARNING_BUDGET))

    def set_budget(
        self, *, runs: int | None = None, tokens: int | None = None, dollars: float | None = None, off: bool = False
    ) -> Budget:
        """Change the caps given (the others stay); `off` lifts every cap. Audited.

        Raises:
            ValidationError: a negative or non-finite cap.
        """
        check_budget(runs, tokens, dollars)
        current = self.budget()
        if off:
            budget = Budget(current.runs, current.tokens, current.dollars, enabled=False)
        else:
            budget = Budget(
                current.runs if runs is None else runs,
                current.tokens if tokens is None else tokens,
                current.dollars if dollars is None else dollars,
                enabled=True,
            )
        with self.store.db.transaction():
            self.store.settings.set(SETTING_LEARNING_BUDGET, budget.to_json())
            self.core.audit(
                "user",
                "settings.budget",
                metadata={
                    "runs": budget.runs,
                    "tokens": budget.tokens,
                    "dollars": budget.dollars,
                    "on": budget.enabled,
                },
            )
        return budget

    def spent_today(self) -> DailySpend:
        """What distillation spent since the local day began."""
        return self.store.usage.spent_since(day_start(self.core.clock()))

    def hold(self) -> Hold | None:
        """Why no job may start now (the day's budget is spent, or a rate limit runs low), or None."""
        now = self.core.clock()
        running = self.store.jobs.counts().get(JobState.RUNNING, 0)
        reached = budget_reached(self.budget(), self.spent_today(), running)
        if reached is not None:
            if running and not budget_reached(self.budget(), self.spent_today()):
                # Only the runs in flight fill the cap: wait for them, not for tomorrow.
                return Hold("budget", f"budget: {reached}, the last of them still running", now)
            return Hold(
                "budget",
                f"budget reached: {reached}; queued runs resume after midnight",
                next_day_start(now),
            )
        report = self.store.usage.latest_rate_report()
        if report is not None and report.rate_limit_low:
            until = report.resets_at or report.finished_at + int(RATE_LIMIT_YIELD_S * 1000)
            if now < until:
                left = "" if report.headroom is None else f" ({report.headroom:.0%} left)"
                state = "was reached" if report.status == "rate_limited" else f"runs low{left}"
                return Hold(
                    "rate_limit",
                    f"the {report.provider} rate limit {state}; learning waits until {_clock_text(until)}",
                    until,
                )
        return None

    # --- recording -----------------------------------------------------------------------------------------------
    def record(
        self,
        run: Run,
        provider: str,
        usage: Usage | None,
        rate_limit: RateLimit | None,
        *,
        status: str,
        started_at: int,
        call: str = UsageCall.DISTILL,
    ) -> int:
        """Record one call of `run`'s distillation, the distillation itself or its contradiction judgement
        (whatever its outcome: a failed call is billed too); its id."""
        return self.store.usage.add(
            run_id=run.id,
            project_id=run.project_id,
            provider=provider,
            usage=usage,
            rate_limit=rate_limit,
            status=status,
            started_at=started_at,
            finished_at=self.core.clock(),
            call=call,
        )

    def backoff_until(self, rate_limit: RateLimit | None, attempts: int) -> int:
        """When a job refused for a rate limit may be tried again (ms): its retry-after or reset when given, else
        RATE_LIMIT_BACKOFF_S doubled for each refusal before, at most RATE_LIMIT_BACKOFF_MAX_S."""
        now = self.core.clock()
        if rate_limit is not None and rate_limit.retry_after_s is not None:
            return now + int(rate_limit.retry_after_s * 1000)
        if rate_limit is not None and rate_limit.resets_at is not None and rate_limit.resets_at > now:
            return rate_limit.resets_at
        wait = min(RATE_LIMIT_BACKOFF_MAX_S, RATE_LIMIT_BACKOFF_S * (2 ** min(attempts, 16)))
        return now + int(wait * 1000)

    # --- reading -------------------------------------------------------------------------------------------------
    def recent(self, project_id: str | None, limit: int) -> list[UsageRow]:
        """The newest calls (of one project, or of all), newest first."""
        return self.store.usage.recent(project_id, limit)

    def for_runs(self, run_ids: list[str]) -> dict[str, UsageTotal]:
        """Each run's calls summed, by run id (runs never distilled are absent)."""
        return self.store.usage.for_runs(run_ids)

    def total(self, period: str, project_id: str | None = None) -> UsageTotal:
        """The calls of this local day, week (from Monday), month or of all time, summed."""
        return self.store.usage.total(period_start(self.core.clock(), period), project_id)

    def by_project(self, period: str) -> list[UsageTotal]:
        """The calls of the period summed per project, the costliest first."""
        return self.store.usage.by_project(period_start(self.core.clock(), period))
