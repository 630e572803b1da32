"""The local side of the team pool: shared projects, the outbox the triggers fill, and applying the team's changes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from orcmem.models.constants import SETTING_PERSON
from orcmem.models.data_shapes import JsonObject
from orcmem.models.types import provenance_seen_by
from orcmem.store.connection import Database, Repository
from orcmem.store.memories import MemoryRepository
from orcmem.store.vectors import VectorRepository, embedded_text
from orcmem.text.duplicates import same_text_digest


def same_pool(project: str) -> str:
    """SQL selecting the local projects shared under the same key as `project` (a parameter mark or a column): it,
    and any other clone of the repository."""
    return (
        f"SELECT {project} UNION SELECT s.project_id FROM team_projects s JOIN team_projects o "
        f"ON o.team_key = s.team_key WHERE o.project_id = {project}"
    )


@dataclass(frozen=True, slots=True)
class SharedProject:
    """A project shared with the team: its local id, its team-wide key, and how far its changes were pulled."""

    project_id: str
    team_key: str
    pulled_through: int
    root_path: str
    links_pulled_through: int = 0  # the team's links are pulled by their own cursor (store/team_links.py)


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One queued change: the memory as it is now (None when it was forgotten) and when it was queued."""

    memory_id: str
    project_id: str
    queued_at: int
    row: JsonObject | None  # the shared fields, files, vector and the revision it was based on


@dataclass(frozen=True, slots=True)
class Incoming:
    """One change from the team, as the server holds it."""

    seq: int
    id: str
    revision: int
    forgotten: bool
    fields: JsonObject  # the shared columns (empty for a tombstone)
    files: list[str]
    model_id: str | None
    embedding: list[float] | None


# The columns a memory shares with the team, in the order the server takes them.
SHARED_COLUMNS = (
    "type",
    "topic_key",
    "title",
    "body",
    "confidence",
    "status",
    "source",
    "evidence_count",
    "flagged",
    "created_at",
    "updated_at",
    "last_confirmed_at",
    "author",
    "author_agent",
    "provenance",
)


class TeamRepository(Repository):
    """Every SQL statement about the team pool's local state."""

    def __init__(self, db: Database, memories: MemoryRepository, vectors: VectorRepository) -> None:
        """Wrap an open database and the repositories that delete memories and store vectors."""
        self.db = db
        self.memories = memories
        self.vectors = vectors

    # --- shared projects -----------------------------------------------------------------------------------------
    def shared(self) -> list[SharedProject]:
        """Every shared project, oldest share first."""
        rows = self.db.query(
            "SELECT t.project_id, t.team_key, t.pulled_through, p.root_path, t.links_pulled_through "
            "FROM team_projects t JOIN projects p ON p.id = t.project_id ORDER BY t.shared_at, t.project_id"
        )
        return [SharedProject(*row) for row in rows]

    def share(self, project_id: str, team_key: str, now: int) -> None:
        """Share a project: every memory it holds (but those waiting for review) is queued, and the team's are pulled
        from the start."""
        with self.db.transaction():
            before = self.db.query_one("SELECT team_key FROM team_projects WHERE project_id = ?", (project_id,))
            if before is not None and before[0] != team_key:
                self.restart([project_id])  # another key is another pool: read it from its start
            self.db.query(
                "INSERT INTO team_projects (project_id, team_key, pulled_through, shared_at) VALUES (?, ?, 0, ?) "
                "ON CONFLICT (project_id) DO UPDATE SET team_key = excluded.team_key",
                (project_id, team_key, now),
            )
            self.db.query(
                "INSERT INTO team_outbox (memory_id, project_id, queued_at, forgotten) "
                "SELECT id, project_id, ?, 0 FROM memories WHERE project_id = ? AND status != 'pending' "
                "ON CONFLICT (memory_id) DO NOTHING",
                (now, project_id),
            )

    def restart(self, project_ids: Sequence[str] | None = None) -> None:
        """Forget how far these shared projects (every one when None) were pulled and which server revisions their
        memories match: for a new pool (another key, another team or database)."""
        with self.db.transaction():
            for project_id in project_ids if project_ids is not None else [p.project_id for p in self.shared()]:
                self.db.query(
                    "UPDATE team_projects SET pulled_through = 0, links_pulled_through = 0 WHERE project_id = ?",
                    (project_id,),
                )
                self.db.query(
                    "UPDATE memory_links SET team_state = 0 WHERE person IS NULL AND from_pk IN "
                    "(SELECT pk FROM memories WHERE project_id = ?)",  # our own word, to state in the new pool
                    (project_id,),
                )
                self.db.query("DELETE FROM team_links_waiting WHERE project_id = ?", (project_id,))  # the old pool's
                self.db.query("UPDATE memories SET team_revision = 0 WHERE project_id = ?", (project_id,))
                self.db.query(
                    "INSERT INTO team_outbox (memory_id, project_id, queued_at, forgotten) "
                    "SELECT id, project_id, (SELECT COALESCE(MAX(queued_at), 0) + 1 FROM team_outbox), 0 "
                    "FROM memories WHERE project_id = ? AND status != 'pending' ON CONFLICT (memory_id) DO NOTHING",
                    (project_id,),
                )

    def clear_outbox(self) -> int:
        """Drop every queued change (a read-only role can never send them); how many."""
        with self.db.transaction():
            count = self.pending()
            self.db.query("DELETE FROM team_outbox")
        return count

    def unshare(self, project_id: str | None = None) -> int:
        """Stop sharing one project (every one when None); its queued changes are dropped. How many stopped."""
        with self.db.transaction():
            where, args = ("WHERE project_id = ?", (project_id,)) if project_id else ("", ())
            stopped = len(self.db.query(f"SELECT project_id FROM team_projects {where}", args))
            self.db.query(f"DELETE FROM team_outbox {where}", args)
            self.db.query(f"DELETE FROM team_links_waiting {where}", args)
            self.db.query(f"DELETE FROM team_projects {where}", args)
            self.db.query(f"UPDATE memories SET team_revision = 0 {where}", args)
        return stopped

    # --- the outbox ----------------------------------------------------------------------------------------------
    def pending(self) -> int:
        """How many changes wait to be pushed."""
        row = self.db.query_one("SELECT count(*) FROM team_outbox")
        return int(row[0]) if row else 0

    def outgoing(self, limit: int, model: str | None) -> list[Outgoing]:
        """The oldest queued changes, each with the memory as it is now and its vector from `model`."""
        queued = self.db.query(
            "SELECT memory_id, project_id, queued_at, forgotten FROM team_outbox ORDER BY queued_at, memory_id LIMIT ?",
            (limit,),
        )
        result = []
        for memory_id, project_id, queued_at, forgotten in queued:
            row = None if forgotten else self._row(memory_id, model)
            result.append(Outgoing(memory_id, project_id, int(queued_at), row))
        return result

    def _row(self, memory_id: str, model: str | None) -> JsonObject | None:
        columns = ", ".join(f"m.{column}" for column in SHARED_COLUMNS)
        found = self.db.query_one(
            f"SELECT {columns}, m.team_revision, "
            "(SELECT json_group_array(path_glob) FROM (SELECT path_glob FROM memory_files f "
            "WHERE f.memory_pk = m.pk ORDER BY position)) FROM memories m WHERE m.id = ?",
            (memory_id,),
        )
        if found is None:
            return None  # deleted since it was queued: its delete trigger queued a tombstone over this entry
        row = dict(zip(SHARED_COLUMNS, found[: len(SHARED_COLUMNS)], strict=True))
        row["flagged"] = bool(row["flagged"])
        row["base_revision"] = int(found[len(SHARED_COLUMNS)])
        row["files"] = json.loads(found[len(SHARED_COLUMNS) + 1] or "[]")
        vector = self.vectors.vector_of(memory_id, model) if model is not None else None
        row["model_id"], row["embedding"] = (model, vector) if vector is not None else (None, None)
        return row

    def pushed(self, done: Sequence[tuple[str, int, int | None]]) -> None:
        """Changes reached the team, each as (memory id, when it was queued, the server's revision or None for a
        tombstone), in one transaction: each leaves the outbox unless it changed again meanwhile, and the memory
        remembers the server's revision."""
        with self.db.transaction():
            for memory_id, queued_at, revision in done:
                self.db.query("DELETE FROM team_outbox WHERE memory_id = ? AND queued_at = ?", (memory_id, queued_at))
                if revision is not None:
                    self.db.query("UPDATE memories SET team_revision = ? WHERE id = ?", (revision, memory_id))

    # --- applying the team's changes -----------------------------------------------------------------------------
    def apply(
        self, project: SharedProject, changes: Sequence[Incoming], model: str | None, now: int, *, advance: bool = True
    ) -> tuple[int, int]:
        """Apply the team's changes in order, in one transaction that the outbox triggers ignore; returns the last
        change applied (the cursor to keep) and how many changed something here.

        Without `advance` (a push's answer, not numbered) the cursor stays. A change this profile already holds
        (its own push coming back) is passed over, unless it is a push's answer. A memory changed here and not yet
        pushed keeps its local change (the push that follows settles it with the server). Application stops before
        a change whose topic key a memory not yet pushed holds, so the next round pushes that one first and the
        server merges the two.
        """
        cursor, changed = project.pulled_through, 0
        with self.db.transaction():
            self.db.query("UPDATE team_applying SET applying = 1")
            try:
                for change in changes:
                    if self._queued(change.id) or (advance and self._held(change)) or self._elsewhere(project, change):
                        cursor = change.seq
                        continue
                    if change.forgotten:
                        changed += self.memories.delete(change.id)
                    elif self._upsert(project, change, model, now):
                        changed += 1
                    else:
                        if not advance and change.seq:  # a push's answer that must wait: pull it again later
                            self.db.query(
                                "UPDATE team_projects SET pulled_through = MIN(pulled_through, ?) WHERE project_id = ?",
                                (change.seq - 1, project.project_id),
                            )
                        break
                    cursor = change.seq
                if advance:
                    self.db.query(
                        "UPDATE team_projects SET pulled_through = ? WHERE project_id = ?",
                        (cursor, project.project_id),
                    )
            finally:
                self.db.query("UPDATE team_applying SET applying = 0")
        return cursor, changed

    def _held(self, change: Incoming) -> bool:
        """Whether this profile already holds the change (it pushed it, or applied it before)."""
        if change.forgotten:
            return False
        row = self.db.query_one("SELECT team_revision FROM memories WHERE id = ?", (change.id,))
        return row is not None and row[0] == change.revision

    def _elsewhere(self, project: SharedProject, change: Incoming) -> bool:
        """Whether the change's id names a memory here that is not the pool's: one of a project not shared under the
        same key (another clone of the repository is), or one waiting for review (never sent). A member's raw SQL
        can reuse any id the pool lacks; the change must neither rewrite nor erase that memory."""
        row = self.db.query_one(
            "SELECT 1 FROM memories WHERE id = ? AND (status = 'pending' OR project_id IS NULL OR "
            f"project_id NOT IN ({same_pool('?')}))",
            (change.id, project.project_id, project.project_id),
        )
        return row is not None

    def _queued(self, memory_id: str) -> bool:
        return self.db.query_one("SELECT 1 FROM team_outbox WHERE memory_id = ?", (memory_id,)) is not None

    def _upsert(self, project: SharedProject, change: Incoming, model: str | None, now: int) -> bool:
        fields = change.fields
        topic = fields.get("topic_key")
        if topic is not None and fields.get("status") == "active":
            holder = self.db.query_one(
                "SELECT id FROM memories WHERE project_id = ? AND topic_key = ? AND status = 'active' AND id != ?",
                (project.project_id, topic, change.id),
            )
            if holder is not None:
                if self._queued(holder[0]):
                    return False  # ours is not pushed yet: push it first, and the server merges the two
                self.memories.delete(holder[0])  # an older copy the team already merged away
        person = self.db.query_one("SELECT value FROM settings WHERE key = ?", (SETTING_PERSON,))
        seen = provenance_seen_by(
            fields.get("provenance"), fields["source"], fields["author"], str(person[0]) if person else None
        )
        values = [str(seen) if column == "provenance" else fields[column] for column in SHARED_COLUMNS]
        digest = same_text_digest(fields["title"], fields["body"])
        exists = self.db.query_one("SELECT pk FROM memories WHERE id = ?", (change.id,))
        if exists is None:
            self.db.query(
                f"INSERT INTO memories (id, scope, project_id, origin_root, {', '.join(SHARED_COLUMNS)}, "
                "text_digest, team_revision) VALUES (?, 'project', ?, ?, "
                f"{', '.join('?' * len(SHARED_COLUMNS))}, ?, ?)",
                (change.id, project.project_id, project.root_path, *values, digest, change.revision),
            )
        else:
            assignments = ", ".join(f"{column} = ?" for column in SHARED_COLUMNS)
            self.db.query(
                f"UPDATE memories SET {assignments}, text_digest = ?, team_revision = ? WHERE id = ?",
                (*values, digest, change.revision, change.id),
            )
        pk = self.db.query_one("SELECT pk FROM memories WHERE id = ?", (change.id,))
        assert pk is not None
        self.db.query("DELETE FROM memory_files WHERE memory_pk = ?", (pk[0],))
        for position, path in enumerate(change.files):
            self.db.query(
                "INSERT INTO memory_files (memory_pk, position, path_glob) VALUES (?, ?, ?)", (pk[0], position, path)
            )
        if model is not None and change.model_id == model and change.embedding is not None:
            text = embedded_text(str(fields["title"]), str(fields["body"]))  # the pool's vector is of this text
            self.vectors.put(change.id, change.embedding, model, now, text=text)
        return True
