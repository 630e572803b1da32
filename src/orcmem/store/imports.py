"""The import batches repository: every SQL statement about what `orcmem import` added, and the whole-store reads
and writes a backup and its restore make (docs/importing.md)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from orcmem.models.data_shapes import JsonObject, Row
from orcmem.store.connection import Repository

_BATCH_COLUMNS = "b.id, b.kind, b.source_path, b.project_id, b.at, b.found, b.added, b.skipped, b.undone_at"


@dataclass(frozen=True, slots=True)
class ImportBatch:
    """One import: what it read, when, what it found, added and skipped, and how many of its memories remain."""

    id: int
    kind: str
    source_path: str
    project_id: str | None
    at: int
    found: int
    added: int
    skipped: int
    undone_at: int | None
    remaining: int

    def to_dict(self) -> JsonObject:
        """Plain dict for JSON output."""
        return {name: getattr(self, name) for name in self.__slots__}


def _to_batch(row: Row) -> ImportBatch:
    pk, kind, path, project_id, at, found, added, skipped, undone_at, remaining = row
    return ImportBatch(
        int(pk),
        str(kind),
        str(path),
        project_id,
        int(at),
        int(found),
        int(added),
        int(skipped),
        undone_at,
        int(remaining),
    )


@dataclass(frozen=True, slots=True)
class CitationRow:
    """A memory's citation as a backup carries it (store/citations.py has its meaning)."""

    kind: str
    target: str
    blob: str | None
    symbols: list[str]
    commit_id: str | None
    at: int


@dataclass(frozen=True, slots=True)
class FreshnessRow:
    """A memory's freshness outcome as a backup carries it."""

    state: str
    reason: str
    since: int
    checked_at: int


class ImportRepository(Repository):
    """Import batches, the memories each added, and the citations and freshness a backup moves with its memories."""

    # --- batches -----------------------------------------------------------------------------------------------
    def begin(self, kind: str, source_path: str, project_id: str | None, found: int, now: int) -> int:
        """A new batch; returns its id. Call inside the transaction that adds its memories."""
        self.db.query(
            "INSERT INTO import_batches (kind, source_path, project_id, at, found) VALUES (?, ?, ?, ?, ?)",
            (kind, source_path, project_id, now, found),
        )
        row = self.db.query_one("SELECT last_insert_rowid()")
        assert row is not None
        return int(row[0])

    def link(self, batch_id: int, memory_id: str, item_key: str) -> None:
        """Record that the batch added this memory, from the item named `item_key`."""
        self.db.query(
            "INSERT INTO import_batch_memories (memory_pk, batch_id, item_key) "
            "SELECT pk, ?, ? FROM memories WHERE id = ?",
            (batch_id, item_key, memory_id),
        )

    def finish(self, batch_id: int, added: int, skipped: int) -> None:
        """Store what the batch added and skipped."""
        self.db.query("UPDATE import_batches SET added = ?, skipped = ? WHERE id = ?", (added, skipped, batch_id))

    def known_keys(self, keys: Iterable[str]) -> set[str]:
        """The item keys among these that an import added and whose memory is still stored."""
        wanted = list(dict.fromkeys(keys))
        found: set[str] = set()
        for start in range(0, len(wanted), 900):  # stay under SQLite's variable limit
            chunk = wanted[start : start + 900]
            marks = ", ".join("?" * len(chunk))
            rows = self.db.query(f"SELECT item_key FROM import_batch_memories WHERE item_key IN ({marks})", chunk)
            found.update(str(row[0]) for row in rows)
        return found

    def batches(self) -> list[ImportBatch]:
        """Every batch, newest first, with how many of its memories remain."""
        rows = self.db.query(
            f"SELECT {_BATCH_COLUMNS}, (SELECT count(*) FROM import_batch_memories l WHERE l.batch_id = b.id) "
            "FROM import_batches b ORDER BY b.id DESC"
        )
        return [_to_batch(row) for row in rows]

    def memory_ids(self, batch_id: int) -> list[str]:
        """The ids of the memories the batch added that are still stored."""
        rows = self.db.query(
            "SELECT m.id FROM import_batch_memories l JOIN memories m ON m.pk = l.memory_pk WHERE l.batch_id = ? "
            "ORDER BY m.pk",
            (batch_id,),
        )
        return [str(row[0]) for row in rows]

    def batch_of(self, memory_id: str) -> int | None:
        """The id of the batch that added a memory, or None."""
        row = self.db.query_one(
            "SELECT l.batch_id FROM import_batch_memories l JOIN memories m ON m.pk = l.memory_pk WHERE m.id = ?",
            (memory_id,),
        )
        return int(row[0]) if row else None

    def mark_undone(self, batch_id: int, now: int) -> None:
        """The batch's memories were erased."""
        self.db.query("UPDATE import_batches SET undone_at = ? WHERE id = ?", (now, batch_id))

    # --- what a backup moves beside the memories ---------------------------------------------------------------
    def memory_pks(self, memory_ids: Sequence[str]) -> dict[str, int]:
        """The row keys of these memories, by id (unknown ids are left out)."""
        found: dict[str, int] = {}
        for start in range(0, len(memory_ids), 900):
            chunk = list(memory_ids[start : start + 900])
            marks = ", ".join("?" * len(chunk))
            for memory_id, pk in self.db.query(f"SELECT id, pk FROM memories WHERE id IN ({marks})", chunk):
                found[str(memory_id)] = int(pk)
        return found

    def existing_ids(self, memory_ids: Sequence[str]) -> set[str]:
        """Which of these memory ids are stored."""
        return set(self.memory_pks(memory_ids))

    def citations_by_memory(self, memory_pks: Sequence[int]) -> dict[int, list[CitationRow]]:
        """The citations of these memories, by row key, in a stable order."""
        found: dict[int, list[CitationRow]] = {}
        for start in range(0, len(memory_pks), 900):
            chunk = list(memory_pks[start : start + 900])
            marks = ", ".join("?" * len(chunk))
            rows = self.db.query(
                "SELECT memory_pk, kind, target, blob, symbols, commit_id, at FROM citations "
                f"WHERE memory_pk IN ({marks}) ORDER BY memory_pk, kind, target",
                chunk,
            )
            for pk, kind, target, blob, symbols, commit_id, at in rows:
                found.setdefault(int(pk), []).append(
                    CitationRow(str(kind), str(target), blob, json.loads(symbols or "[]"), commit_id, int(at))
                )
        return found

    def freshness_by_memory(self, memory_pks: Sequence[int]) -> dict[int, FreshnessRow]:
        """The freshness outcome of these memories, by row key."""
        found: dict[int, FreshnessRow] = {}
        for start in range(0, len(memory_pks), 900):
            chunk = list(memory_pks[start : start + 900])
            marks = ", ".join("?" * len(chunk))
            rows = self.db.query(
                f"SELECT memory_pk, state, reason, since, checked_at FROM freshness WHERE memory_pk IN ({marks})",
                chunk,
            )
            for pk, state, reason, since, checked_at in rows:
                found[int(pk)] = FreshnessRow(str(state), str(reason), int(since), int(checked_at))
        return found

    def restore_citations(self, memory_pk: int, citations: Sequence[CitationRow], fresh: FreshnessRow | None) -> None:
        """Put a restored memory's citations and freshness back as the backup holds them."""
        self.db.query_many(
            "INSERT OR REPLACE INTO citations (memory_pk, kind, target, blob, symbols, commit_id, at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(memory_pk, c.kind, c.target, c.blob, json.dumps(c.symbols), c.commit_id, c.at) for c in citations],
        )
        if fresh is not None:
            self.db.query(
                "INSERT OR REPLACE INTO freshness (memory_pk, state, reason, since, checked_at) VALUES (?, ?, ?, ?, ?)",
                (memory_pk, fresh.state, fresh.reason, fresh.since, fresh.checked_at),
            )

    def memory_pages(self, page: int = 1000) -> Iterable[list[str]]:
        """Every memory's id, oldest row first, a page at a time (a backup reads the whole store)."""
        after = 0
        while True:
            rows = self.db.query("SELECT pk, id FROM memories WHERE pk > ? ORDER BY pk LIMIT ?", (after, page))
            if not rows:
                return
            after = int(rows[-1][0])
            yield [str(row[1]) for row in rows]
