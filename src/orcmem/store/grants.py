"""The grants repository: "allow for this session / workspace" answers that spare the user the next question."""

from __future__ import annotations

from dataclasses import dataclass

from orcmem.models.data_shapes import Row, SqlValue
from orcmem.models.errors import ValidationError
from orcmem.models.vocabulary import Answer
from orcmem.store.connection import Repository

GRANT_SCOPES = (Answer.SESSION.value, Answer.WORKSPACE.value)  # the answers that last beyond one call


@dataclass(frozen=True, slots=True)
class Grant:
    """One stored permission: `action` is allowed in a project, for one session or for every session."""

    pk: int
    project_id: str
    session_id: str | None
    action: str
    scope: str
    created_at: int


_COLUMNS = "pk, project_id, session_id, action, scope, created_at"


def _to_grant(row: Row) -> Grant:
    pk, project_id, session_id, action, scope, created_at = row
    return Grant(int(pk), str(project_id), session_id, str(action), str(scope), int(created_at))


class GrantRepository(Repository):
    """Grants in the `grants` table; a workspace grant covers every session of its project."""

    def add(self, action: str, project_id: str, scope: str, session_id: str | None, now: int) -> Grant:
        """Store a grant (an identical one already stored is returned instead of a second row).

        Raises:
            ValidationError: the scope is unknown, or a session grant has no session id.
        """
        if scope not in GRANT_SCOPES:
            raise ValidationError(f"Unknown grant scope {scope!r}; choose one of: {', '.join(GRANT_SCOPES)}.")
        if scope == "session" and not session_id:
            raise ValidationError("A session grant needs the session's id.")
        stored_session = session_id if scope == "session" else None
        with self.db.transaction():
            row = self.db.query_one(
                f"SELECT {_COLUMNS} FROM grants WHERE action = ? AND project_id = ? AND scope = ? "
                "AND session_id IS ? LIMIT 1",
                (action, project_id, scope, stored_session),
            )
            if row is not None:
                return _to_grant(row)
            self.db.query(
                "INSERT INTO grants (project_id, session_id, action, scope, created_at) VALUES (?, ?, ?, ?, ?)",
                (project_id, stored_session, action, scope, now),
            )
            pk = self.db.query_one("SELECT last_insert_rowid()")
        assert pk is not None
        return Grant(int(pk[0]), project_id, stored_session, action, scope, now)

    def covers(self, action: str, project_id: str, session_id: str | None) -> bool:
        """Whether a workspace grant of the project, or a grant of this session, allows `action`."""
        row = self.db.query_one(
            "SELECT 1 FROM grants WHERE action = ? AND project_id = ? "
            "AND (scope = 'workspace' OR (scope = 'session' AND session_id = ?)) LIMIT 1",
            (action, project_id, session_id),
        )
        return row is not None

    def list(self, project_id: str | None = None) -> list[Grant]:
        """Stored grants, oldest first; only the project's when `project_id` is given."""
        if project_id is None:
            rows = self.db.query(f"SELECT {_COLUMNS} FROM grants ORDER BY pk")
        else:
            rows = self.db.query(f"SELECT {_COLUMNS} FROM grants WHERE project_id = ? ORDER BY pk", (project_id,))
        return [_to_grant(row) for row in rows]

    def remove(self, pk: int) -> bool:
        """Delete one grant; False when there was none with that key."""
        with self.db.transaction():
            found = self.db.query_one("SELECT 1 FROM grants WHERE pk = ?", (pk,)) is not None
            self.db.query("DELETE FROM grants WHERE pk = ?", (pk,))
        return found

    def clear(self, project_id: str | None = None, *, session_id: str | None = None) -> int:
        """Delete grants: all of them, a project's, or (with `session_id`) one session's; returns how many."""
        clauses: list[str] = []
        params: list[SqlValue] = []
        if project_id is not None:
            clauses.append("project_id = ?")
            params.append(project_id)
        if session_id is not None:
            clauses.append("scope = 'session' AND session_id = ?")
            params.append(session_id)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        with self.db.transaction():
            count = self.db.query_one(f"SELECT count(*) FROM grants{where}", params)
            self.db.query(f"DELETE FROM grants{where}", params)
        return int(count[0]) if count else 0
