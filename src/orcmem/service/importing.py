"""Importing what the user already has, and the whole store out and back in (docs/importing.md).

Every import is planned first (what is new, what the store holds already), then written in one transaction as one
batch: each memory through the service's write path (checked and redacted like any other write) and linked to the
batch, so `orcmem import undo` erases exactly what it added. Vectors are left to the embedding pump."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from orcmem.importing.backup import BackedUpMemory, Backup, header_line, memory_line, project_line
from orcmem.importing.items import ImportItem
from orcmem.models.constants import BODY_MAX_CHARS, TITLE_MAX_CHARS
from orcmem.models.errors import NotFoundError, ValidationError
from orcmem.models.types import NewMemory, Project, Scope, Status
from orcmem.models.vocabulary import ImportKind
from orcmem.rules import memory as rules
from orcmem.service.audit import note_written
from orcmem.service.memory_service import MemoryService, kept_whole, stored_text
from orcmem.store.imports import ImportBatch
from orcmem.store.migrations import LATEST_VERSION
from orcmem.text.duplicates import same_text_key
from orcmem.text.instructions import looks_like_instructions

BACKUP_PAGE = 1000  # memories read at a time while writing a backup


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """What an import found: the items it would add, and how many the store already holds."""

    new: tuple[ImportItem, ...]
    already: int

    @property
    def found(self) -> int:
        """Every item found."""
        return len(self.new) + self.already


@dataclass(frozen=True, slots=True)
class RestorePlan:
    """What a backup would restore: the memories not stored here yet, and how many are (same id, or a memory of the
    same words or the same topic in the same pool)."""

    backup: Backup
    new: tuple[BackedUpMemory, ...]
    already: int

    @property
    def found(self) -> int:
        """Every memory in the backup."""
        return len(self.backup.memories)


class Importing:
    """Import batches over one service: plan, write, list, undo; the JSONL backup and its restore."""

    def __init__(self, service: MemoryService) -> None:
        """Work through `service` (its store, clock, write path and embedding pump)."""
        self.service = service
        self.store = service.store

    # --- items from elsewhere ----------------------------------------------------------------------------------
    def plan(self, project: Project | None, items: Iterable[ImportItem]) -> ImportPlan:
        """Which items are new: not imported before (their key), not already stored in the same words in the same
        pool, and not repeated within this import."""
        listed = builtins.list(items)
        known = self.store.imports.known_keys(item.key for item in listed)
        seen: set[tuple[str | None, str]] = set()
        new: list[ImportItem] = []
        for item in listed:
            pool = project.id if item.scope is Scope.PROJECT and project is not None else None
            title, body = stored_text(item.title, TITLE_MAX_CHARS), stored_text(item.body, BODY_MAX_CHARS)
            words = (pool, same_text_key(title, body))
            stored_here = item.scope is Scope.GLOBAL or project is not None  # a project not known yet holds nothing
            if item.key in known or words in seen:
                continue
            if stored_here and self.store.memories.with_same_text(pool, title, body):
                continue
            seen.add(words)
            new.append(item)
        return ImportPlan(tuple(new), len(listed) - len(new))

    def apply(
        self, project: Project | None, kind: ImportKind, source_path: str, plan: ImportPlan
    ) -> tuple[ImportBatch, int]:
        """Write the plan's new items as one batch, in one transaction; returns the batch and how many of its memories
        wait in the review inbox (an agent's words, when the project's policy holds an agent's writes).

        Raises:
            MemoryOffError: memory is off.
            ValidationError: an item breaks a memory's rules (nothing is written).
        """
        written: list[str] = []
        pending: set[str] = set()
        with self.store.db.transaction():
            batch_id = self.store.imports.begin(
                kind.value, source_path, project.id if project else None, plan.found, self.service.clock()
            )
            for item in plan.new:
                new = NewMemory(
                    type=item.type.value,
                    title=item.title,
                    body=item.body,
                    source=item.source,
                    scope=item.scope,
                    files=item.files,
                    provenance=item.provenance,
                )
                result = self.service.record(project, new, embed=False, look_up_meaning=False, fingerprint=False)
                if not result.merged:
                    self.store.imports.link(batch_id, result.memory.id, item.key)
                    written.append(result.memory.id)
                    if result.memory.status is Status.PENDING:
                        pending.add(result.memory.id)  # embedded once accepted, as every write that waits
            self._finish(batch_id, project, kind, len(written), plan.found)
        self.service.vectors_changed([memory_id for memory_id in written if memory_id not in pending])
        if project is not None and written:
            self.service.freshness.renew(project, written)  # what they cite, as the code is now, in one look
        return self.batch(batch_id), len(pending)

    # --- batches -----------------------------------------------------------------------------------------------
    def batches(self) -> builtins.list[ImportBatch]:
        """Every import, newest first."""
        return self.store.imports.batches()

    def batch(self, batch_id: int | None = None) -> ImportBatch:
        """One import; without an id, the newest not undone.

        Raises:
            NotFoundError: there is no such import (or none left to undo).
        """
        batches = self.batches()
        if batch_id is None:
            found = next((batch for batch in batches if batch.undone_at is None), None)
            if found is None:
                raise NotFoundError("No import to undo; `orcmem import list` lists them.")
            return found
        found = next((batch for batch in batches if batch.id == batch_id), None)
        if found is None:
            raise NotFoundError(f"No import {batch_id}; `orcmem import list` lists them.")
        return found

    def batch_of(self, memory_id: str) -> ImportBatch | None:
        """The batch that added a memory, or None (written some other way)."""
        batch_id = self.store.imports.batch_of(memory_id)
        return None if batch_id is None else self.batch(batch_id)

    def undo(self, batch_id: int | None = None) -> tuple[ImportBatch, int]:
        """Erase every memory an import added (its text, search entry, files and vector), in one transaction; returns
        the batch and how many memories were erased."""
        batch = self.batch(batch_id)
        memory_ids = self.store.imports.memory_ids(batch.id)
        with self.store.db.transaction():
            for memory_id in memory_ids:
                self.store.memories.delete(memory_id)
                self.service.audit("user", "memory.forget", memory_id, batch.project_id, metadata={"import": batch.id})
            self.store.imports.mark_undone(batch.id, self.service.clock())
        self.store.db.erase_old_pages()  # the erased words leave the WAL too
        return self.batch(batch.id), len(memory_ids)

    # --- the whole store ---------------------------------------------------------------------------------------
    def backup_lines(self) -> Iterator[str]:
        """The whole store as JSON Lines: the header, every project, every memory (every status, every project,
        global ones) with its files, citations and freshness, oldest first."""
        yield header_line(LATEST_VERSION, self.service.clock())
        for project, _count in sorted(self.service.projects(), key=lambda pair: pair[0].created_at):
            yield project_line(project)
        for memory_ids in self.store.imports.memory_pages(BACKUP_PAGE):
            memories = self.store.memories.get_many(memory_ids)
            pks = self.store.imports.memory_pks(memory_ids)
            citations = self.store.imports.citations_by_memory(builtins.list(pks.values()))
            freshness = self.store.imports.freshness_by_memory(builtins.list(pks.values()))
            for memory in memories:
                pk = pks[memory.id]
                yield memory_line(
                    BackedUpMemory(replace(memory, stale_reason=None), tuple(citations.get(pk, ())), freshness.get(pk))
                )

    def plan_restore(self, backup: Backup) -> RestorePlan:
        """Which of a backup's memories are new here: not stored under their id, nor (active) in the same words or
        under the same topic in the same pool."""
        project_ids = self._project_ids(backup, create=False)
        stored = self.store.imports.existing_ids([item.memory.id for item in backup.memories])
        seen_ids: set[str] = set()
        seen_words: set[tuple[str | None, str]] = set()
        seen_topics: set[tuple[str | None, str]] = set()
        new: list[BackedUpMemory] = []
        for item in backup.memories:
            memory = item.memory
            if memory.project_id and memory.project_id not in project_ids:
                raise ValidationError(f"The backup's memory {memory.id} belongs to a project the backup does not hold.")
            pool = project_ids[memory.project_id] if memory.project_id else None
            active = memory.status.value == "active"
            words = (pool, same_text_key(memory.title, memory.body))
            topic = (pool, memory.topic_key) if memory.topic_key else None
            if memory.id in stored or memory.id in seen_ids:
                continue
            if active and (words in seen_words or self.store.memories.with_same_text(pool, memory.title, memory.body)):
                continue
            if (
                active
                and topic is not None
                and (topic in seen_topics or self.store.memories.find_active_topic(pool, memory.topic_key or ""))
            ):
                continue
            seen_ids.add(memory.id)
            if active:
                seen_words.add(words)
                if topic is not None:
                    seen_topics.add(topic)
            new.append(item)
        return RestorePlan(backup, tuple(new), len(backup.memories) - len(new))

    def restore(self, plan: RestorePlan, source_path: str, project: Project | None) -> ImportBatch:
        """Write a backup's new memories as they were (ids, times, authors, evidence, citations, provenance, status,
        scope, topic keys), redacted and flagged as every write is, in one transaction, as one batch.

        Raises:
            MemoryOffError: memory is off.
        """
        self.service._require_enabled()
        written: list[str] = []
        with self.store.db.transaction():
            project_ids = self._project_ids(plan.backup, create=True)
            batch_id = self.store.imports.begin(
                ImportKind.JSONL.value, source_path, project.id if project else None, plan.found, self.service.clock()
            )
            runs = {m.memory.source_run_id for m in plan.new if m.memory.source_run_id}
            tasks = {m.memory.source_task_id for m in plan.new if m.memory.source_task_id}
            known_runs = {run for run in runs if self.store.runs.get(run) is not None}
            known_tasks = {task for task in tasks if self.store.tasks.get(task) is not None}
            for item in plan.new:
                memory = item.memory
                title = stored_text(memory.title, TITLE_MAX_CHARS)
                body = stored_text(memory.body, BODY_MAX_CHARS)
                restored = replace(
                    memory,
                    project_id=project_ids[memory.project_id] if memory.project_id else None,
                    title=title,
                    body=body,
                    confidence=rules.clamp_confidence(memory.confidence),
                    # A run or task of another profile is not here: the link is dropped, the memory kept.
                    source_run_id=memory.source_run_id if memory.source_run_id in known_runs else None,
                    source_task_id=memory.source_task_id if memory.source_task_id in known_tasks else None,
                    # Judged here, never taken from the file: a backup is text from outside like any other.
                    flagged=looks_like_instructions(f"{title}\n{body}"),
                    stale_reason=None,
                )
                self.store.memories.insert(restored)
                note_written(self.store.audit_scan, restored.id, title, body, redacted=kept_whole(title, body))
                pk = self.store.imports.memory_pks([restored.id])[restored.id]
                self.store.imports.restore_citations(pk, item.citations, item.freshness)
                self.store.imports.link(batch_id, restored.id, f"{ImportKind.JSONL.value}:{restored.id}")
                written.append(restored.id)
            self._finish(batch_id, project, ImportKind.JSONL, len(written), plan.found)
        self.service.vectors_changed(None)  # every memory lacking a vector, in the background
        return self.batch(batch_id)

    def _finish(self, batch_id: int, project: Project | None, kind: ImportKind, added: int, found: int) -> None:
        """Close the batch with what it added and skipped, and audit the import (inside the batch's transaction)."""
        self.store.imports.finish(batch_id, added, found - added)
        self.service.audit(
            "user",
            "import",
            None,
            project.id if project else None,
            metadata={"batch": batch_id, "kind": kind.value, "added": added},
        )

    def _project_ids(self, backup: Backup, *, create: bool) -> dict[str, str]:
        """Each backed-up project's id here: its own when new, else that of the project stored for its root."""
        ids: dict[str, str] = {}
        for project in backup.projects:
            if create:
                ids[project.id] = self.store.projects.restore(project).id
            else:
                stored = self.store.projects.by_root(project.canonical_root) or self.store.projects.get(project.id)
                ids[project.id] = stored.id if stored is not None else project.id
        return ids
