"""The projects repository."""

from __future__ import annotations

import secrets

from orcmem.models.types import Project
from orcmem.store.connection import Repository

_COLUMNS = "id, canonical_root, root_path, name, created_at, last_seen_at"


class ProjectRepository(Repository):
    """Projects keyed by canonical root."""

    def by_root(self, canonical_root: str) -> Project | None:
        """The project with this canonical root, or None."""
        row = self.db.query_one(f"SELECT {_COLUMNS} FROM projects WHERE canonical_root = ?", (canonical_root,))
        return Project(*row) if row else None

    def get(self, project_id: str) -> Project | None:
        """The project with this id, or None."""
        row = self.db.query_one(f"SELECT {_COLUMNS} FROM projects WHERE id = ?", (project_id,))
        return Project(*row) if row else None

    def ensure(self, canonical_root: str, root_path: str, name: str, now: int) -> Project:
        """Return the project for `canonical_root`, creating it or refreshing its path and last use."""
        with self.db.transaction():
            self.db.query(
                "INSERT INTO projects (id, canonical_root, root_path, name, created_at, last_seen_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(canonical_root) DO UPDATE SET "
                "root_path = excluded.root_path, name = excluded.name, last_seen_at = excluded.last_seen_at",
                ("prj_" + secrets.token_hex(8), canonical_root, root_path, name, now, now),
            )
            project = self.by_root(canonical_root)
        assert project is not None
        return project

    def restore(self, project: Project) -> Project:
        """The project as a backup holds it: kept with its id when neither its id nor its root is known here, else
        the project already stored for its root (or its id)."""
        with self.db.transaction():
            self.db.query(
                "INSERT OR IGNORE INTO projects (id, canonical_root, root_path, name, created_at, last_seen_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    project.id,
                    project.canonical_root,
                    project.root_path,
                    project.name,
                    project.created_at,
                    project.last_seen_at,
                ),
            )
            stored = self.by_root(project.canonical_root) or self.get(project.id)
        assert stored is not None
        return stored

    def all(self) -> list[tuple[Project, int]]:
        """Every project with its number of memories, most recently used first."""
        rows = self.db.query(
            f"SELECT {', '.join('p.' + c.strip() for c in _COLUMNS.split(','))}, "
            "(SELECT count(*) FROM memories m WHERE m.project_id = p.id) "
            "FROM projects p ORDER BY p.last_seen_at DESC"
        )
        return [(Project(*row[:-1]), int(row[-1])) for row in rows]
