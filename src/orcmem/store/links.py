"""The links repository: every SQL statement about relations between memories (replaces, refines, conflicts)."""

from __future__ import annotations

from collections.abc import Sequence

from orcmem.models.data_shapes import Row
from orcmem.models.types import MemoryLink, Relation
from orcmem.store.connection import Repository
from orcmem.store.recall import REPLACED

_COLUMNS = (
    "f.id, f.title, t.id, t.title, l.relation, l.at, l.by, l.open, l.settled_at, l.settled_by, "
    "COALESCE(f.project_id, t.project_id), l.person"
)
_JOINED = "memory_links l JOIN memories f ON f.pk = l.from_pk JOIN memories t ON t.pk = l.to_pk"


def _open(stated_by_team: bool) -> str:
    """Which links `open_conflicts` takes: open ones of the project `:project` (and global ones)."""
    among = "l.open = 1 AND (f.project_id IS :project OR f.project_id IS NULL OR t.project_id IS :project)"
    return among + (" AND l.person IS NOT NULL" if stated_by_team else "")


def _to_link(row: Row) -> MemoryLink:
    return MemoryLink(
        from_id=row[0],
        from_title=row[1],
        to_id=row[2],
        to_title=row[3],
        relation=Relation(row[4]),
        at=int(row[5]),
        by=row[6],
        open=bool(row[7]),
        settled_at=row[8],
        settled_by=row[9],
        project_id=row[10],
        person=row[11],
    )


class LinkRepository(Repository):
    """Relations from a newer memory to an older one; one per pair, the newest said wins."""

    def add(self, from_id: str, to_id: str, relation: Relation, *, at: int, by: str) -> None:
        """Store (or restate) the relation from `from_id` to `to_id`; a conflict is stored open. This profile's
        person's word from now on (pushed to the team at the next sync)."""
        self.db.query(
            "INSERT INTO memory_links (from_pk, to_pk, relation, at, by, open) "
            "SELECT f.pk, t.pk, :relation, :at, :by, :open FROM memories f, memories t "
            "WHERE f.id = :from_id AND t.id = :to_id "
            "ON CONFLICT (from_pk, to_pk) DO UPDATE SET relation = excluded.relation, at = excluded.at, "
            "by = excluded.by, open = excluded.open, settled_at = NULL, settled_by = NULL, person = NULL, "
            "team_state = 0",
            {
                "relation": str(relation),
                "at": at,
                "by": by,
                "open": int(relation is Relation.CONFLICTS),
                "from_id": from_id,
                "to_id": to_id,
            },
        )

    def of(self, memory_id: str) -> list[MemoryLink]:
        """Every link from or to a memory, oldest first."""
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM {_JOINED} WHERE f.id = :id OR t.id = :id ORDER BY l.at, l.pk", {"id": memory_id}
        )
        return [_to_link(row) for row in rows]

    def replaced_by(self, memory_ids: Sequence[str]) -> dict[str, list[MemoryLink]]:
        """For each of these memories, the links saying what it replaced (to show with it in recall and brief)."""
        if not memory_ids:
            return {}
        marks = ", ".join("?" * len(memory_ids))
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM {_JOINED} WHERE f.id IN ({marks}) AND l.relation = 'replaces' ORDER BY l.at",
            list(memory_ids),
        )
        found: dict[str, list[MemoryLink]] = {}
        for row in rows:
            link = _to_link(row)
            found.setdefault(link.from_id, []).append(link)
        return found

    def replaced_texts(self, memory_ids: Sequence[str]) -> dict[str, str]:
        """For each of these memories that replaced others, what it replaced as recall's rows carry it
        (`store.recall.REPLACED`)."""
        if not memory_ids:
            return {}
        marks = ", ".join("?" * len(memory_ids))
        rows = self.db.query(f"SELECT m.id, {REPLACED} FROM memories m WHERE m.id IN ({marks})", list(memory_ids))
        return {str(memory_id): str(text) for memory_id, text in rows if text}

    def open_conflicts(
        self, project_id: str | None, *, stated_by_team: bool = False, limit: int = -1
    ) -> list[MemoryLink]:
        """Conflicts nobody settled among a project's memories (and global ones), newest first: only those a teammate
        stated (`stated_by_team`), up to `limit` (-1: all)."""
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM {_JOINED} WHERE {_open(stated_by_team)} ORDER BY l.at DESC, l.pk LIMIT :limit",
            {"project": project_id, "limit": limit},
        )
        return [_to_link(row) for row in rows]

    def count_open_conflicts(self, project_id: str | None, *, stated_by_team: bool = False) -> int:
        """How many `open_conflicts` there are, counted without reading them."""
        row = self.db.query_one(
            f"SELECT count(*) FROM {_JOINED} WHERE {_open(stated_by_team)}", {"project": project_id}
        )
        return int(row[0]) if row else 0

    def open_conflict_between(self, one_id: str, other_id: str) -> MemoryLink | None:
        """The open conflict between two memories, whichever is the newer; or None."""
        row = self.db.query_one(
            f"SELECT {_COLUMNS} FROM {_JOINED} WHERE l.open = 1 AND "
            "((f.id = :one AND t.id = :other) OR (f.id = :other AND t.id = :one))",
            {"one": one_id, "other": other_id},
        )
        return _to_link(row) if row is not None else None

    def open_conflicts_of(self, memory_id: str) -> list[MemoryLink]:
        """The open conflicts a memory is on either side of."""
        return [link for link in self.of(memory_id) if link.open]

    def settle(self, from_id: str, to_id: str, relation: Relation, *, at: int, by: str) -> None:
        """Close the link between two memories as `relation` (a settled conflict keeps its record); the settling
        person's word now, for the team too."""
        self.db.query(
            "UPDATE memory_links SET open = 0, relation = :relation, settled_at = :at, settled_by = :by, "
            "person = NULL, team_state = 0 "
            "WHERE from_pk = (SELECT pk FROM memories WHERE id = :from_id) "
            "AND to_pk = (SELECT pk FROM memories WHERE id = :to_id)",
            {"relation": str(relation), "at": at, "by": by, "from_id": from_id, "to_id": to_id},
        )
