"""What memories cite (files and programs) with their fingerprints, the cited files' last seen state, and each
memory's freshness: every SQL statement about them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from orcmem.store.connection import Repository


@dataclass(frozen=True, slots=True)
class Citation:
    """One thing a memory cites, as it was when the memory was written or confirmed."""

    memory_pk: int
    memory_id: str
    kind: str  # "file", "program", or "none" (a memory that cites nothing checkable)
    target: str  # the file's path as the memory gives it, or the program
    blob: str | None  # file: its blob id then (None: missing then); program: "found" or None
    symbols: list[str]
    commit_id: str | None  # HEAD then, to follow renames from


@dataclass(frozen=True, slots=True)
class SeenFile:
    """A cited file as last seen: its size and time (to know when to read it again) and blob id."""

    mtime_ns: int
    size: int
    blob: str | None


@dataclass(frozen=True, slots=True)
class CitableMemory:
    """An active memory of a project, with what a fingerprint needs."""

    pk: int
    id: str
    type: str
    title: str
    body: str
    files: list[str]


class CitationRepository(Repository):
    """Reads and writes citations, cited files and freshness."""

    def uncited(self, project_id: str, memory_ids: Sequence[str] | None = None) -> list[CitableMemory]:
        """Active memories of the project (of `memory_ids` when given) with files or of type command, and no
        fingerprint yet."""
        where, args = "", [project_id]
        if memory_ids is not None:
            where = f" AND m.id IN ({', '.join('?' * len(memory_ids))})"
            args += list(memory_ids)
        rows = self.db.query(
            "SELECT m.pk, m.id, m.type, m.title, m.body, (SELECT json_group_array(path_glob) FROM "
            "(SELECT path_glob FROM memory_files f WHERE f.memory_pk = m.pk ORDER BY position)) FROM memories m "
            "WHERE m.project_id = ? AND m.status = 'active' "
            "AND (m.type = 'command' OR EXISTS (SELECT 1 FROM memory_files f WHERE f.memory_pk = m.pk)) "
            f"AND NOT EXISTS (SELECT 1 FROM citations c WHERE c.memory_pk = m.pk){where}",
            args,
        )
        return [
            CitableMemory(pk, mid, kind, title, body, json.loads(files or "[]"))
            for pk, mid, kind, title, body, files in rows
        ]

    def replace(
        self, memory_pk: int, citations: Sequence[tuple[str, str, str | None, list[str], str | None]], now: int
    ) -> None:
        """A memory's citations, fingerprinted now: (kind, target, blob, symbols, commit); its freshness is reset."""
        with self.db.transaction():
            self.db.query("DELETE FROM citations WHERE memory_pk = ?", (memory_pk,))
            self.db.query("DELETE FROM freshness WHERE memory_pk = ?", (memory_pk,))
            for kind, target, blob, symbols, commit_id in citations:
                self.db.query(
                    "INSERT OR REPLACE INTO citations (memory_pk, kind, target, blob, symbols, commit_id, at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (memory_pk, kind, target, blob, json.dumps(symbols), commit_id, now),
                )

    def forget(self, memory_ids: Sequence[str]) -> None:
        """Drop the fingerprints of these memories (confirmed, or their text or files changed: taken again)."""
        with self.db.transaction():
            for memory_id in memory_ids:
                for table in ("citations", "freshness"):
                    self.db.query(
                        f"DELETE FROM {table} WHERE memory_pk = (SELECT pk FROM memories WHERE id = ?)", (memory_id,)
                    )

    def cited_paths(self, project_id: str) -> set[str]:
        """Every file the project's active memories cite."""
        rows = self.db.query(
            "SELECT DISTINCT c.target FROM citations c JOIN memories m ON m.pk = c.memory_pk "
            "WHERE m.project_id = ? AND m.status = 'active' AND c.kind = 'file'",
            (project_id,),
        )
        return {row[0] for row in rows}

    def to_judge(self, project_id: str, dirty: Sequence[str], *, everything: bool) -> list[Citation]:
        """The citations of the project's active memories that need judging: every one with `everything`, else
        those of memories citing a file in `dirty`, citing a program, or never judged."""
        where = (
            ""
            if everything
            else (
                " AND (c.memory_pk NOT IN (SELECT memory_pk FROM freshness) OR c.memory_pk IN (SELECT memory_pk FROM "
                "citations WHERE kind = 'program' OR (kind = 'file' AND target IN (SELECT value FROM json_each(?)))))"
            )
        )
        rows = self.db.query(
            "SELECT c.memory_pk, m.id, c.kind, c.target, c.blob, c.symbols, c.commit_id FROM citations c "
            "JOIN memories m ON m.pk = c.memory_pk WHERE m.project_id = ? AND m.status = 'active'"
            f"{where} ORDER BY c.memory_pk, c.kind, c.target",
            (project_id,) if everything else (project_id, json.dumps(list(dirty))),
        )
        return [
            Citation(pk, mid, kind, target, blob, json.loads(symbols), commit)
            for pk, mid, kind, target, blob, symbols, commit in rows
        ]

    def rename(self, memory_pk: int, old: str, new: str) -> None:
        """A cited file moved: the citation and the memory's file entry follow it."""
        with self.db.transaction():
            self.db.query(
                "UPDATE OR REPLACE citations SET target = ? WHERE memory_pk = ? AND kind = 'file' AND target = ?",
                (new, memory_pk, old),
            )
            self.db.query(
                "UPDATE OR IGNORE memory_files SET path_glob = ? WHERE memory_pk = ? AND path_glob = ?",
                (new, memory_pk, old),
            )

    # --- cited files --------------------------------------------------------------------------------------------
    def seen_files(self, root: str) -> dict[str, SeenFile]:
        """Every cited file of a project root, as last seen."""
        rows = self.db.query("SELECT path, mtime_ns, size, blob FROM cited_files WHERE root = ?", (root,))
        return {path: SeenFile(int(mtime), int(size), blob) for path, mtime, size, blob in rows}

    def see_files(self, root: str, seen: dict[str, SeenFile]) -> None:
        """Record files as seen now."""
        with self.db.transaction():
            for path, state in seen.items():
                self.db.query(
                    "INSERT OR REPLACE INTO cited_files (root, path, mtime_ns, size, blob) VALUES (?, ?, ?, ?, ?)",
                    (root, path, state.mtime_ns, state.size, state.blob),
                )

    # --- freshness ----------------------------------------------------------------------------------------------
    def set_freshness(self, outcomes: dict[int, tuple[str, str]], now: int) -> None:
        """Store each memory's outcome; `since` moves only when its state changes."""
        with self.db.transaction():
            for pk, (state, reason) in outcomes.items():
                self.db.query(
                    "INSERT INTO freshness (memory_pk, state, reason, since, checked_at) VALUES (?, ?, ?, ?, ?) "
                    "ON CONFLICT (memory_pk) DO UPDATE SET reason = excluded.reason, checked_at = excluded.checked_at, "
                    "since = CASE WHEN freshness.state = excluded.state THEN freshness.since ELSE excluded.since END, "
                    "state = excluded.state",
                    (pk, state, reason, now, now),
                )

    def stale(self, project_id: str) -> list[tuple[str, str, str, int]]:
        """The project's possibly stale memories: (id, title, reason, since), oldest first."""
        rows = self.db.query(
            "SELECT m.id, m.title, f.reason, f.since FROM freshness f JOIN memories m ON m.pk = f.memory_pk "
            "WHERE m.project_id = ? AND m.status = 'active' AND f.state = 'stale' ORDER BY f.since, m.id",
            (project_id,),
        )
        return [(mid, title, reason, int(since)) for mid, title, reason, since in rows]
