"""The memories repository: every SQL statement about memories, their files and their full-text entries."""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from orcmem.models.constants import FILES_MAX_COUNT, FTS_BODY_WEIGHT, FTS_TITLE_WEIGHT
from orcmem.models.data_shapes import Row, SqlValue
from orcmem.models.errors import ValidationError
from orcmem.models.types import Memory, MemoryFilter, MemoryType, Provenance, Scope, Source, Status
from orcmem.store.connection import Repository
from orcmem.store.visibility import VISIBLE, VISIBLE_AT
from orcmem.text.duplicates import same_text_digest, same_text_key

# How many BM25-best matches per wanted memory are read before every match is joined (see `search_words`).
WORD_WINDOW_FACTOR = 8

_FILES = (
    "(SELECT json_group_array(path_glob) FROM "
    "(SELECT path_glob FROM memory_files f WHERE f.memory_pk = m.pk ORDER BY position))"
)
_COLUMNS_WITHOUT = (
    "m.id, m.scope, m.project_id, m.type, m.topic_key, m.title, m.body, m.confidence, m.status, m.source, "
    "m.source_run_id, m.source_task_id, m.evidence_count, {files}, "
    "m.created_at, m.updated_at, m.last_confirmed_at, m.origin_root, m.flagged, m.author, m.author_agent, "
    "(SELECT fr.reason FROM freshness fr WHERE fr.memory_pk = m.pk AND fr.state = 'stale'), m.provenance"
)
_COLUMNS = _COLUMNS_WITHOUT.format(files=_FILES)
# Search candidates skip the files: most are dropped after scoring, and the few kept get theirs from `with_files`.
_CANDIDATE_COLUMNS = _COLUMNS_WITHOUT.format(files="NULL")


# Enum members by value: search reads up to 80 rows per query, and a dict lookup costs a tenth of Enum(value).
_SCOPES = {member.value: member for member in Scope}
_TYPES = {member.value: member for member in MemoryType}
_STATUSES = {member.value: member for member in Status}
_SOURCES = {member.value: member for member in Source}
_PROVENANCES = {member.value: member for member in Provenance}


def _to_memory(row: Row) -> Memory:
    return Memory(
        id=row[0],
        scope=_SCOPES.get(row[1]) or Scope(row[1]),
        project_id=row[2],
        type=_TYPES.get(row[3]) or MemoryType(row[3]),
        topic_key=row[4],
        title=row[5],
        body=row[6],
        confidence=float(row[7]),
        status=_STATUSES.get(row[8]) or Status(row[8]),
        source=_SOURCES.get(row[9]) or Source(row[9]),
        source_run_id=row[10],
        source_task_id=row[11],
        evidence_count=int(row[12]),
        files=tuple(json.loads(row[13])) if row[13] else (),
        created_at=int(row[14]),
        updated_at=int(row[15]),
        last_confirmed_at=int(row[16]),
        origin_root=row[17],
        flagged=bool(row[18]),
        author=row[19],
        author_agent=row[20],
        stale_reason=row[21],
        provenance=_PROVENANCES.get(row[22]) or Provenance(row[22]),
    )


@dataclass(frozen=True, slots=True)
class WordHit:
    """A full-text match: the memory and its BM25 rank (lower is better)."""

    memory: Memory
    rank: float


class MemoryRepository(Repository):
    """Reads and writes memories; callers pass validated, redacted values."""

    # --- reads -------------------------------------------------------------------------------------------------
    def get(self, memory_id: str) -> Memory | None:
        """The memory with this public id, or None."""
        row = self.db.query_one(f"SELECT {_COLUMNS} FROM memories m WHERE m.id = ?", (memory_id,))
        return _to_memory(row) if row else None

    def get_many(self, memory_ids: Sequence[str], *, files: bool = True) -> builtins.list[Memory]:
        """The memories with these ids, in the order given (unknown ids are left out); `files=False` skips files."""
        found: dict[str, Memory] = {}
        columns = _COLUMNS if files else _CANDIDATE_COLUMNS
        for start in range(0, len(memory_ids), 900):  # stay under SQLite's variable limit
            chunk = list(memory_ids[start : start + 900])
            marks = ", ".join("?" * len(chunk))
            for row in self.db.query(f"SELECT {columns} FROM memories m WHERE m.id IN ({marks})", chunk):
                memory = _to_memory(row)
                found[memory.id] = memory
        return [found[memory_id] for memory_id in memory_ids if memory_id in found]

    def titles_from_run(self, run_id: str, limit: int = 20) -> builtins.list[str]:
        """Titles of the active memories a run wrote or last confirmed, and of those waiting for review (saved too:
        a later pass need not say them again), oldest first."""
        rows = self.db.query(
            "SELECT title FROM memories WHERE source_run_id = ? AND status IN ('active', 'pending') "
            "ORDER BY pk LIMIT ?",
            (run_id, limit),
        )
        return [str(row[0]) for row in rows]

    def created_by_imports(self, project_id: str) -> dict[str, list[str]]:
        """The ids of the memories each imported run of a project created, by run: not those it only confirmed
        (they were there before), nor those a live run confirmed since (the live run holds them now)."""
        rows = self.db.query(
            "SELECT i.run_id, m.id FROM imported_memories i JOIN runs r ON r.id = i.run_id "
            "JOIN memories m ON m.id = i.memory_id LEFT JOIN runs s ON s.id = m.source_run_id "
            "WHERE r.project_id = ? AND (m.source_run_id IS NULL OR s.imported_at IS NOT NULL) ORDER BY m.pk",
            (project_id,),
        )
        found: dict[str, list[str]] = {}
        for run_id, memory_id in rows:
            found.setdefault(str(run_id), []).append(str(memory_id))
        return found

    def find_active_topic(self, project_id: str | None, topic_key: str) -> Memory | None:
        """The active memory holding `topic_key` in a project's pool (or the global pool when None)."""
        row = self.db.query_one(
            f"SELECT {_COLUMNS} FROM memories m WHERE COALESCE(m.project_id, '') = ? "
            "AND lower(m.topic_key) = lower(?) AND m.status = 'active'",
            (project_id or "", topic_key),
        )
        return _to_memory(row) if row else None

    def find_pending_topic(self, project_id: str | None, topic_key: str) -> Memory | None:
        """The oldest memory waiting for review with `topic_key` in a project's pool (or the global pool)."""
        row = self.db.query_one(
            f"SELECT {_COLUMNS} FROM memories m WHERE COALESCE(m.project_id, '') = ? "
            "AND lower(m.topic_key) = lower(?) AND m.status = 'pending' ORDER BY m.pk LIMIT 1",
            (project_id or "", topic_key),
        )
        return _to_memory(row) if row else None

    def pending_of_run(self, project_id: str, run_id: str) -> builtins.list[str]:
        """Ids of a run's memories waiting for review in a project (or global ones it wrote), oldest first."""
        rows = self.db.query(
            "SELECT id FROM memories m WHERE m.source_run_id = ? AND m.status = 'pending' "
            f"AND {VISIBLE_AT} ORDER BY m.pk",
            (run_id, project_id),
        )
        return [str(row[0]) for row in rows]

    def pending_created_before(self, before: int) -> builtins.list[str]:
        """Ids of every memory waiting for review since before `before` (the partial index: as cheap as the inbox)."""
        rows = self.db.query(
            "SELECT id FROM memories WHERE status = 'pending' AND created_at < ? ORDER BY created_at", (before,)
        )
        return [str(row[0]) for row in rows]

    def _where(self, project_id: str | None, flt: MemoryFilter) -> tuple[str, dict[str, SqlValue]]:
        clauses = [VISIBLE]
        if not flt.statuses:  # waiting for review is seen only when asked for by name (the inbox)
            clauses.append("m.status != 'pending'")
        params: dict[str, SqlValue] = {"project": project_id or ""}
        for column, values in (
            ("type", flt.types),
            ("source", flt.sources),
            ("provenance", flt.provenances),
            ("status", flt.statuses),
            ("scope", flt.scopes),
        ):
            if values:
                names = [f"{column}{i}" for i in range(len(values))]
                clauses.append(f"m.{column} IN ({', '.join(':' + n for n in names)})")
                params.update(zip(names, values, strict=True))
        return " AND ".join(clauses), params

    def list(self, project_id: str | None, flt: MemoryFilter) -> builtins.list[Memory]:
        """Memories visible to a project, newest update first."""
        where, params = self._where(project_id, flt)
        params.update(limit=flt.limit, offset=flt.offset)
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM memories m WHERE {where} "
            "ORDER BY m.updated_at DESC, m.pk DESC LIMIT :limit OFFSET :offset",
            params,
        )
        return [_to_memory(row) for row in rows]

    def count(self, project_id: str | None, flt: MemoryFilter) -> int:
        """How many memories match the filter (ignoring limit and offset)."""
        where, params = self._where(project_id, flt)
        row = self.db.query_one(f"SELECT count(*) FROM memories m WHERE {where}", params)
        return int(row[0]) if row else 0

    def with_files(self, memories: Sequence[Memory]) -> builtins.list[Memory]:
        """The same memories with their files filled in (search candidates are read without them)."""
        if not memories:
            return []
        marks = ", ".join("?" * len(memories))
        rows = self.db.query(f"SELECT m.id, {_FILES} FROM memories m WHERE m.id IN ({marks})", [m.id for m in memories])
        files = {memory_id: tuple(json.loads(listed or "[]")) for memory_id, listed in rows}
        return [replace(m, files=files.get(m.id, ())) for m in memories]

    def search_words(self, match: str, project_id: str | None, limit: int) -> builtins.list[WordHit]:
        """Active memories matching an FTS5 expression, best BM25 first (title weighted twice), without files.

        The best `limit × WORD_WINDOW_FACTOR` matches are ranked by BM25 alone and only those are read and filtered;
        every match is joined with its memory only when too few of them are the project's active memories.
        """
        window = limit * WORD_WINDOW_FACTOR
        rows = self.db.query(
            "WITH top AS MATERIALIZED "
            f"(SELECT rowid, bm25(memories_fts, {FTS_TITLE_WEIGHT}, {FTS_BODY_WEIGHT}) AS rank "
            "FROM memories_fts WHERE memories_fts MATCH :match ORDER BY rank LIMIT :window) "
            f"SELECT {_CANDIDATE_COLUMNS}, top.rank, (SELECT count(*) FROM top) FROM top "  # top drives the join
            f"CROSS JOIN memories m ON m.pk = top.rowid WHERE m.status = 'active' AND {VISIBLE} "
            "ORDER BY top.rank, m.updated_at DESC LIMIT :limit",
            {"match": match, "project": project_id or "", "limit": limit, "window": window},
        )
        if len(rows) < limit and (not rows or rows[0][-1] >= window):
            rows = self.db.query(
                f"SELECT {_CANDIDATE_COLUMNS}, bm25(memories_fts, {FTS_TITLE_WEIGHT}, {FTS_BODY_WEIGHT}) AS rank, 0 "
                "FROM memories_fts JOIN memories m ON m.pk = memories_fts.rowid "
                f"WHERE memories_fts MATCH :match AND m.status = 'active' AND {VISIBLE} "
                "ORDER BY rank, m.updated_at DESC LIMIT :limit",
                {"match": match, "project": project_id or "", "limit": limit},
            )
        return [WordHit(_to_memory(row[:-2]), float(row[-2])) for row in rows]

    def with_same_text(
        self, project_id: str | None, title: str, body: str, status: Status = Status.ACTIVE
    ) -> Memory | None:
        """The memory of `project_id` (global when None) and `status` whose words, once normalised, are these."""
        rows = self.db.query(  # ids alone: most writes repeat nothing, and reading every column costs a write
            "SELECT id FROM memories WHERE text_digest = ? AND status = ? AND project_id IS ? ORDER BY pk",
            (same_text_digest(title, body), str(status), project_id),
        )
        for (memory_id,) in rows:
            memory = self.get(memory_id)
            if memory is not None and same_text_key(memory.title, memory.body) == same_text_key(title, body):
                return memory
        return None

    # --- writes ------------------------------------------------------------------------------------------------
    def insert(self, memory: Memory) -> None:
        """Insert a new memory and its files."""
        with self.db.transaction():
            self.db.query(
                "INSERT INTO memories (id, scope, project_id, origin_root, type, topic_key, title, body, "
                "confidence, status, source, source_run_id, source_task_id, evidence_count, flagged, "
                "created_at, updated_at, last_confirmed_at, text_digest, author, author_agent, provenance) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    memory.id,
                    str(memory.scope),
                    memory.project_id,
                    memory.origin_root,
                    str(memory.type),
                    memory.topic_key,
                    memory.title,
                    memory.body,
                    memory.confidence,
                    str(memory.status),
                    str(memory.source),
                    memory.source_run_id,
                    memory.source_task_id,
                    memory.evidence_count,
                    int(memory.flagged),
                    memory.created_at,
                    memory.updated_at,
                    memory.last_confirmed_at,
                    same_text_digest(memory.title, memory.body),
                    memory.author,
                    memory.author_agent,
                    str(memory.provenance),
                ),
            )
            self._replace_files(memory.id, memory.files)

    def merge(
        self,
        memory_id: str,
        *,
        title: str,
        body: str,
        files: Sequence[str],
        source_run_id: str | None,
        confidence_step: float,
        now: int,
        provenance: Provenance,
        flagged: bool = False,
    ) -> None:
        """Fold a newer write into an existing memory: new text (with the provenance of its words) and files, more
        confidence and evidence."""
        with self.db.transaction():
            self.db.query(
                "UPDATE memories SET title = ?, body = ?, text_digest = ?, confidence = MIN(1.0, confidence + ?), "
                "evidence_count = evidence_count + 1, updated_at = ?, last_confirmed_at = ?, "
                "source_run_id = COALESCE(?, source_run_id), flagged = ?, provenance = ? WHERE id = ?",
                (
                    title,
                    body,
                    same_text_digest(title, body),
                    confidence_step,
                    now,
                    now,
                    source_run_id,
                    int(flagged),
                    str(provenance),
                    memory_id,
                ),
            )
            self._replace_files(memory_id, files)

    def confirm(
        self,
        memory_id: str,
        *,
        files: Sequence[str],
        source_run_id: str | None,
        confidence_step: float,
        now: int,
        new_evidence: bool = True,
    ) -> None:
        """A repeat of a memory: its text stays and its age resets; with `new_evidence`, more confidence and
        evidence; the new files and the run are added (both empty for a memory the person wrote)."""
        step, count = (confidence_step, 1) if new_evidence else (0.0, 0)
        with self.db.transaction():
            self.db.query(
                "UPDATE memories SET confidence = MIN(1.0, confidence + ?), evidence_count = evidence_count + ?, "
                "updated_at = ?, last_confirmed_at = ?, source_run_id = COALESCE(?, source_run_id) WHERE id = ?",
                (step, count, now, now, source_run_id, memory_id),
            )
            if files:
                current = self.get(memory_id)
                known = current.files if current is not None else ()
                self._replace_files(memory_id, list(dict.fromkeys([*known, *files]))[:FILES_MAX_COUNT])

    def update_fields(self, memory_id: str, fields: dict[str, SqlValue]) -> None:
        """Set the given columns (already validated) on one memory."""
        allowed = {
            "title",
            "body",
            "type",
            "status",
            "confidence",
            "updated_at",
            "last_confirmed_at",
            "flagged",
            "provenance",
        }
        unknown = set(fields) - allowed
        if unknown:
            raise ValidationError(f"cannot update columns {sorted(unknown)}")
        if not fields:
            return
        assignments = ", ".join(f"{column} = :{column}" for column in fields)
        with self.db.transaction():
            self.db.query(f"UPDATE memories SET {assignments} WHERE id = :id", {**fields, "id": memory_id})
            if "title" in fields or "body" in fields:
                row = self.db.query_one("SELECT title, body FROM memories WHERE id = ?", (memory_id,))
                if row is not None:
                    self.db.query(
                        "UPDATE memories SET text_digest = ? WHERE id = ?", (same_text_digest(*row), memory_id)
                    )

    def texts_and_flags(self, after_pk: int, upto_pk: int, limit: int) -> builtins.list[tuple[int, str, bool]]:
        """Up to `limit` memories with `after_pk < pk <= upto_pk`, in pk order: each one's pk, its text as the
        instruction check reads it (title, then body) and its stored flag."""
        rows = self.db.query(
            "SELECT pk, title, body, flagged FROM memories WHERE pk > ? AND pk <= ? ORDER BY pk LIMIT ?",
            (after_pk, upto_pk, limit),
        )
        return [(int(pk), f"{title}\n{body}", bool(flagged)) for pk, title, body, flagged in rows]

    def last_pk(self) -> int:
        """The newest memory's pk (0 without any): pks only grow (AUTOINCREMENT), so a later write lies beyond it."""
        row = self.db.query_one("SELECT COALESCE(MAX(pk), 0) FROM memories")
        return int(row[0]) if row else 0

    def set_flags_unshared(self, flags: Sequence[tuple[int, str, bool]]) -> None:
        """Store recomputed instruction flags (pk, the text they were computed from, flag) without queuing them for
        the team pool: each profile computes its own (team_apply does too), so nothing here is a change to share. A
        memory whose text changed since it was read keeps the flag its write gave it. Call inside a transaction."""
        self.db.query("UPDATE team_applying SET applying = 1")
        self.db.query_many(
            "UPDATE memories SET flagged = ? WHERE pk = ? AND title || char(10) || body = ?",
            [(int(flag), pk, text) for pk, text, flag in flags],
        )
        self.db.query("UPDATE team_applying SET applying = 0")

    def mark_helpful(self, memory_id: str, *, confidence_step: float, now: int) -> None:
        """Raise confidence one step (up to the maximum) and reset the memory's age."""
        with self.db.transaction():
            self.db.query(
                "UPDATE memories SET confidence = MIN(1.0, confidence + ?), last_confirmed_at = ?, "
                "updated_at = ? WHERE id = ?",
                (confidence_step, now, now, memory_id),
            )

    def delete(self, memory_id: str) -> bool:
        """Remove the row, its full-text entry (trigger), its files (cascade) and its vector."""
        with self.db.transaction():
            row = self.db.query_one("SELECT pk FROM memories WHERE id = ?", (memory_id,))
            if row is None:
                return False
            if self.db.has_vectors:
                # vec0 tables take no foreign keys, so the vector goes explicitly.
                self.db.query("DELETE FROM memory_vec WHERE memory_pk = ?", (row[0],))
            self.db.query("DELETE FROM memories WHERE pk = ?", (row[0],))
        return True

    def _replace_files(self, memory_id: str, files: Sequence[str]) -> None:
        pk_row = self.db.query_one("SELECT pk FROM memories WHERE id = ?", (memory_id,))
        if pk_row is None:
            return
        self.db.query("DELETE FROM memory_files WHERE memory_pk = ?", (pk_row[0],))
        for position, path in enumerate(files):
            self.db.query(
                "INSERT INTO memory_files (memory_pk, position, path_glob) VALUES (?, ?, ?)",
                (pk_row[0], position, path),
            )
