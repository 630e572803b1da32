"""Read-only statistics for the Overview page: what a project remembers, and since when."""

from __future__ import annotations

from orcmem.models.constants import MS_PER_DAY
from orcmem.store.connection import Repository
from orcmem.store.visibility import VISIBLE


class StatsRepository(Repository):
    """Counts over memories and extraction jobs; never writes."""

    def breakdown(self, project_id: str | None) -> list[tuple[str, str, str, int]]:
        """(type, source, status, count) for every combination present among the memories a project sees."""
        rows = self.db.query(
            f"SELECT m.type, m.source, m.status, count(*) FROM memories m WHERE {VISIBLE} "
            "GROUP BY m.type, m.source, m.status ORDER BY m.type, m.source, m.status",
            {"project": project_id or ""},
        )
        return [(str(t), str(src), str(st), int(n)) for t, src, st, n in rows]

    def stale_marks(self, project_id: str | None) -> list[tuple[str, str | None, int]]:
        """(status, a stale reason or None, count) of the memories a project sees: rules.freshness.possibly_stale
        counts them (one reason stands for all its group's)."""
        rows = self.db.query(
            "SELECT status, max(reason), count(*) FROM (SELECT m.status AS status, (SELECT fr.reason FROM freshness "
            f"fr WHERE fr.memory_pk = m.pk AND fr.state = 'stale') AS reason FROM memories m WHERE {VISIBLE}) "
            "GROUP BY status, reason IS NOT NULL ORDER BY status",
            {"project": project_id or ""},
        )
        return [(str(status), None if reason is None else str(reason), int(n)) for status, reason, n in rows]

    def created_per_day(self, project_id: str | None, *, utc_offset_ms: int = 0) -> list[tuple[int, int]]:
        """(day number since the epoch in local time, memories created that day), oldest day first.

        `utc_offset_ms` shifts the day boundary to the viewer's time zone. Deleted memories are gone, so this is
        the history of what is kept now.
        """
        rows = self.db.query(
            f"SELECT (m.created_at + :offset) / {MS_PER_DAY} AS day, count(*) FROM memories m "
            f"WHERE {VISIBLE} GROUP BY day ORDER BY day",
            {"project": project_id or "", "offset": utc_offset_ms},
        )
        return [(int(day), int(n)) for day, n in rows]

    def job_states(self, project_id: str | None) -> dict[str, int]:
        """How many extraction jobs of a project's runs are in each state (every project's when None)."""
        if project_id is None:
            rows = self.db.query("SELECT state, count(*) FROM extraction_jobs GROUP BY state")
        else:
            rows = self.db.query(
                "SELECT j.state, count(*) FROM extraction_jobs j JOIN runs r ON r.id = j.run_id "
                "WHERE r.project_id = ? GROUP BY j.state",
                (project_id,),
            )
        return {str(state): int(n) for state, n in rows}
