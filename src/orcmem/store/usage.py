"""What distillation cost: one row per call (tokens, dollars, time, rate-limit headroom), and its sums."""

from __future__ import annotations

from orcmem.models.data_shapes import Row, SqlValue
from orcmem.models.usage import DailySpend, RateLimit, Usage, UsageRow, UsageTotal
from orcmem.models.vocabulary import UsageCall
from orcmem.store.connection import Repository

_COLUMNS = (
    "id, run_id, project_id, provider, model, input_tokens, output_tokens, cache_read_tokens, "
    "cache_creation_tokens, cost_usd, wall_ms, started_at, finished_at, status, headroom, rate_limit_low, resets_at, "
    "call"
)
_TOKENS = "input_tokens + output_tokens + cache_read_tokens + cache_creation_tokens"
_JUDGED = f"call = '{UsageCall.JUDGEMENT}'"
_SUMS = (
    f"COALESCE(SUM(NOT {_JUDGED}), 0), COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), "
    "COALESCE(SUM(cache_read_tokens), 0), COALESCE(SUM(cache_creation_tokens), 0), COALESCE(SUM(cost_usd), 0), "
    f"COALESCE(SUM(wall_ms), 0), COALESCE(SUM({_JUDGED}), 0), "
    f"COALESCE(SUM(CASE WHEN {_JUDGED} THEN {_TOKENS} END), 0), COALESCE(SUM(CASE WHEN {_JUDGED} THEN cost_usd END), 0)"
)


def _total(sums: Row, project_id: str | None = None) -> UsageTotal:
    """A UsageTotal from the _SUMS columns."""
    runs, inputs, outputs, reads, writes, dollars, wall, judgements, judged_tokens, judged_dollars = sums
    return UsageTotal(
        int(runs),
        int(inputs),
        int(outputs),
        int(reads),
        int(writes),
        float(dollars),
        int(wall),
        project_id,
        int(judgements),
        int(judged_tokens),
        float(judged_dollars),
    )


def _row(row: Row) -> UsageRow:
    values = list(row)
    values[15] = bool(values[15])
    return UsageRow(*values)


class UsageRepository(Repository):
    """The distillation calls' costs (`distill_usage`)."""

    def add(
        self,
        *,
        run_id: str,
        project_id: str,
        provider: str,
        usage: Usage | None,
        rate_limit: RateLimit | None,
        status: str,
        started_at: int,
        finished_at: int,
        call: str = UsageCall.DISTILL,
    ) -> int:
        """Record one call (the distillation, or its contradiction judgement); its id."""
        usage = usage or Usage()
        limit = rate_limit or RateLimit()
        with self.db.transaction():
            self.db.query(
                "INSERT INTO distill_usage (run_id, project_id, provider, model, input_tokens, output_tokens, "
                "cache_read_tokens, cache_creation_tokens, cost_usd, wall_ms, started_at, finished_at, status, "
                "headroom, rate_limit_low, resets_at, call) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    project_id,
                    provider,
                    usage.model,
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cache_read_tokens,
                    usage.cache_creation_tokens,
                    usage.cost_usd,
                    max(0, finished_at - started_at),
                    started_at,
                    finished_at,
                    status,
                    limit.headroom,
                    int(limit.low or limit.limited),
                    limit.resets_at,
                    str(call),
                ),
            )
            row = self.db.query_one("SELECT last_insert_rowid()")
        return int(row[0]) if row else 0

    def spent_since(self, since: int) -> DailySpend:
        """Distillation calls, and every call's tokens and dollars (the judgement's too), started at or after
        `since` (ms)."""
        row = self.db.query_one(
            f"SELECT COALESCE(SUM(NOT {_JUDGED}), 0), COALESCE(SUM({_TOKENS}), 0), COALESCE(SUM(cost_usd), 0) "
            "FROM distill_usage WHERE started_at >= ?",
            (since,),
        )
        return DailySpend(int(row[0]), int(row[1]), float(row[2])) if row else DailySpend()

    def latest_rate_report(self) -> UsageRow | None:
        """The newest call that said something of its rate limits (a headroom, a warning or a refusal)."""
        row = self.db.query_one(
            f"SELECT {_COLUMNS} FROM distill_usage WHERE headroom IS NOT NULL OR rate_limit_low = 1 "
            "ORDER BY finished_at DESC, id DESC LIMIT 1"
        )
        return _row(row) if row else None

    def recent(self, project_id: str | None, limit: int) -> list[UsageRow]:
        """The newest calls (of one project when `project_id` is set), newest first."""
        where = "WHERE project_id = ?" if project_id else ""
        params: tuple[SqlValue, ...] = (project_id, limit) if project_id else (limit,)
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM distill_usage {where} ORDER BY started_at DESC, id DESC LIMIT ?", params
        )
        return [_row(row) for row in rows]

    def for_runs(self, run_ids: list[str]) -> dict[str, UsageTotal]:
        """Each run's calls summed (every pass and retry), by run id."""
        if not run_ids:
            return {}
        marks = ", ".join("?" for _ in run_ids)
        rows = self.db.query(
            f"SELECT run_id, {_SUMS} FROM distill_usage WHERE run_id IN ({marks}) GROUP BY run_id", tuple(run_ids)
        )
        return {str(row[0]): _total(tuple(row[1:]), str(row[0])) for row in rows}

    def total(self, since: int, project_id: str | None = None) -> UsageTotal:
        """The calls started at or after `since`, summed (of one project when `project_id` is set)."""
        where = " AND project_id = ?" if project_id else ""
        params: tuple[SqlValue, ...] = (since, project_id) if project_id else (since,)
        row = self.db.query_one(f"SELECT {_SUMS} FROM distill_usage WHERE started_at >= ?{where}", params)
        assert row is not None
        return _total(tuple(row), project_id)

    def by_project(self, since: int) -> list[UsageTotal]:
        """The calls started at or after `since`, summed per project, the costliest first."""
        rows = self.db.query(
            f"SELECT project_id, {_SUMS} FROM distill_usage WHERE started_at >= ? GROUP BY project_id "
            "ORDER BY SUM(cost_usd) DESC, SUM(input_tokens + output_tokens) DESC",
            (since,),
        )
        return [_total(tuple(row[1:]), str(row[0])) for row in rows]
