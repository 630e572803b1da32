"""The audit repository: who did what to which memory, and what was decided."""

from __future__ import annotations

import json

from orcmem.models.data_shapes import JsonObject
from orcmem.store.connection import Repository


class AuditRepository(Repository):
    """Append-only audit rows."""

    def add(
        self,
        *,
        at: int,
        actor: str,
        action: str,
        resource_type: str | None = None,
        resource_id: str | None = None,
        project_id: str | None = None,
        decision: str | None = None,
        metadata: JsonObject | None = None,
    ) -> None:
        """Append one row."""
        with self.db.transaction():
            self.db.query(
                "INSERT INTO audit (at, actor, action, resource_type, resource_id, project_id, decision, metadata) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    at,
                    actor,
                    action,
                    resource_type,
                    resource_id,
                    project_id,
                    decision,
                    json.dumps(metadata or {}),
                ),
            )

    def recent(self, limit: int = 50) -> list[JsonObject]:
        """The newest rows first."""
        rows = self.db.query(
            "SELECT at, actor, action, resource_type, resource_id, project_id, decision, metadata "
            "FROM audit ORDER BY pk DESC LIMIT ?",
            (limit,),
        )
        keys = ("at", "actor", "action", "resource_type", "resource_id", "project_id", "decision", "metadata")
        return [{**dict(zip(keys, row, strict=True)), "metadata": json.loads(row[7])} for row in rows]
