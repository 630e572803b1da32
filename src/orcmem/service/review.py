"""The review inbox (`service.review`): the policy per project, and accepting, editing, rejecting and expiring the
learned memories that wait for a person (docs/learning.md, The review inbox)."""

from __future__ import annotations

import builtins
import logging
from typing import Unpack

from orcmem.models.constants import (
    LIST_MAX_LIMIT,
    MS_PER_DAY,
    REVIEW_EXPIRE_DAYS_DEFAULT,
    SETTING_REVIEW_EXPIRE_DAYS,
    SETTING_REVIEW_POLICY_PREFIX,
)
from orcmem.models.errors import NotFoundError, StoreError, ValidationError
from orcmem.models.types import Memory, MemoryFilter, MemoryLink, MemoryType, Project, Provenance, Source, Status
from orcmem.rules.review import REVIEWED_SOURCES, ReviewPolicy, policy_from_json, waits
from orcmem.service.audit import note_written
from orcmem.service.core import ServiceCore
from orcmem.service.freshness import FreshnessCheck
from orcmem.service.history import History
from orcmem.service.memory_access import MemoryAccess, MemoryEdits
from orcmem.text.instructions import looks_like_instructions

log = logging.getLogger("orcmem.review")

MAX_EXPIRE_DAYS = 3650


class Review:
    """The inbox over the service's core and its memory reads and writes: what waits, and a person's answer to
    each."""

    def __init__(self, core: ServiceCore, memories: MemoryAccess, history: History) -> None:
        """The inbox of `core`'s profile; `memories` lists, gets and edits, `history` settles what an accepted memory
        replaces."""
        self.core = core
        self.store = core.store
        self.memories = memories
        self.history = history

    # --- the policy --------------------------------------------------------------------------------------------
    def policy(self, project: Project | None) -> ReviewPolicy:
        """The project's review policy (the default for none, or when none was set)."""
        if project is None:
            return policy_from_json(None)
        return policy_from_json(self.store.settings.get(SETTING_REVIEW_POLICY_PREFIX + project.id))

    def set_policy(self, project: Project, policy: ReviewPolicy) -> ReviewPolicy:
        """Store the project's policy."""
        with self.store.db.transaction():
            self.store.settings.set(SETTING_REVIEW_POLICY_PREFIX + project.id, policy.to_json())
            self.core.audit("user", "review.policy", None, project.id, metadata=policy.to_dict())
        return policy

    def reset_policy(self, project: Project) -> ReviewPolicy:
        """Go back to the default policy for the project."""
        with self.store.db.transaction():
            self.store.settings.delete(SETTING_REVIEW_POLICY_PREFIX + project.id)
            self.core.audit("user", "review.policy.reset", None, project.id)
        return self.policy(project)

    def expire_days(self) -> int:
        """After how many days an unreviewed memory is erased (the profile's setting, else two weeks)."""
        stored = self.store.settings.get(SETTING_REVIEW_EXPIRE_DAYS)
        try:
            days = int(stored) if stored else REVIEW_EXPIRE_DAYS_DEFAULT
        except ValueError:
            return REVIEW_EXPIRE_DAYS_DEFAULT
        return days if 1 <= days <= MAX_EXPIRE_DAYS else REVIEW_EXPIRE_DAYS_DEFAULT

    def set_expire_days(self, days: int) -> int:
        """Set the days after which unreviewed memories are erased.

        Raises:
            ValidationError: outside 1..3650.
        """
        if not 1 <= days <= MAX_EXPIRE_DAYS:
            raise ValidationError(f"The review expiry must be between 1 and {MAX_EXPIRE_DAYS} days.")
        with self.store.db.transaction():
            self.store.settings.set(SETTING_REVIEW_EXPIRE_DAYS, str(days))
            self.core.audit("user", "review.expire_days", metadata={"days": days})
        return days

    def waits(
        self,
        project: Project | None,
        *,
        source: Source,
        memory_type: MemoryType,
        confidence: float,
        provenance: Provenance,
    ) -> str | None:
        """Why a new memory would wait for review in this project, or None when it goes straight in."""
        if source not in REVIEWED_SOURCES:
            return None  # a person's write: no settings read on that path
        return waits(
            self.policy(project),
            source=source,
            memory_type=memory_type,
            confidence=confidence,
            provenance=provenance,
        )

    # --- what waits --------------------------------------------------------------------------------------------
    def pending(self, project: Project | None, limit: int = LIST_MAX_LIMIT) -> builtins.list[Memory]:
        """The memories waiting for review in the project (and global ones), oldest first."""
        waiting = self.memories.list(project, MemoryFilter(statuses=(str(Status.PENDING),), limit=limit))
        return sorted(waiting, key=lambda m: (m.created_at, m.id))

    def count(self, project: Project | None) -> int:
        """How many memories wait for review in the project (and global ones)."""
        return self.memories.count(project, MemoryFilter(statuses=(str(Status.PENDING),)))

    def team_conflicts(self, project: Project | None, limit: int = -1) -> builtins.list[MemoryLink]:
        """Open conflicts a teammate stated through the team pool, newest first (up to `limit`, -1: all): both sides
        stay active here until the person settles it (`orcmem conflicts resolve`), so they wait in the inbox beside
        the memories."""
        return self.store.links.open_conflicts(project.id if project else None, stated_by_team=True, limit=limit)

    def team_conflict_count(self, project: Project | None) -> int:
        """How many open conflicts teammates stated wait (a member may state any number: the page shows a few)."""
        return self.store.links.count_open_conflicts(project.id if project else None, stated_by_team=True)

    def run_label(self, run_id: str | None) -> str | None:
        """The run a memory was learned from, in words: its agent and what it was asked (None when unknown)."""
        run = self.store.runs.get(run_id) if run_id else None
        if run is None:
            return None
        summary = self.store.summaries.get(run.id)
        asked = (summary.request if summary is not None else None) or run.title
        return f"{run.id} ({run.agent})" + (f": {asked}" if asked else "")

    def _waiting(self, project: Project | None, memory_id: str) -> Memory:
        memory = self.memories.get(project, memory_id)
        if memory.status is not Status.PENDING:
            raise ValidationError(f"Memory {memory.id} is not waiting for review (it is {memory.status}).")
        return memory

    # --- answers -----------------------------------------------------------------------------------------------
    def accept(
        self,
        project: Project | None,
        memory_id: str,
        **edits: Unpack[MemoryEdits],
    ) -> Memory:
        """Accept a waiting memory, first with the person's changes when given: it joins the brief, recall, search and
        the team pool. One that names a topic an active memory holds is merged into that memory.

        Raises:
            NotFoundError: no such memory in this project.
            ValidationError: it is not waiting, or a change is wrong.
        """
        waiting = self._waiting(project, memory_id)
        if any(value is not None for value in edits.values()):
            waiting = self.memories.edit(project, waiting.id, **edits)
        now = self.core.clock()
        with self.store.db.transaction():
            holder = (
                self.store.memories.find_active_topic(waiting.project_id, waiting.topic_key)
                if waiting.topic_key
                else None
            )
            if holder is not None:
                self.store.memories.merge(
                    holder.id,
                    title=waiting.title,
                    body=waiting.body,
                    files=waiting.files,
                    source_run_id=waiting.source_run_id,
                    confidence_step=0.0,
                    now=now,
                    provenance=waiting.provenance,
                    flagged=looks_like_instructions(f"{waiting.title}\n{waiting.body}"),
                )
                # Its words were redacted as written, maybe by older rules: the audit scans them again.
                note_written(self.store.audit_scan, holder.id, waiting.title, waiting.body, redacted=False)
                self.store.memories.delete(waiting.id)
                accepted_id = holder.id
            else:
                self.store.memories.update_fields(
                    waiting.id, {"status": str(Status.ACTIVE), "updated_at": now, "last_confirmed_at": now}
                )
                accepted_id = waiting.id
                self.history.accepted(waiting.id)  # what it replaces is history from now on
            self.core.audit(
                "user", "memory.review.accept", accepted_id, waiting.project_id, metadata={"reviewed": waiting.id}
            )
        self.core.vectors_changed([accepted_id])
        accepted = self.memories.get(project, accepted_id)
        if project is not None and accepted.project_id == project.id and accepted.files:
            FreshnessCheck(self.store, self.core.clock).renew(
                project, [accepted.id]
            )  # judged from now on, as the code is now
        return accepted

    def reject(self, project: Project | None, memory_id: str) -> Memory:
        """Reject a waiting memory: erased like a forgotten one (row, words, files). Returns what was erased.

        Raises:
            NotFoundError: no such memory in this project.
            ValidationError: it is not waiting.
        """
        waiting = self._waiting(project, memory_id)
        with self.store.db.transaction():
            self.store.memories.delete(waiting.id)
            # No text in the audit row: a rejected memory may hold what the person wanted gone.
            self.core.audit("user", "memory.review.reject", waiting.id, waiting.project_id)
        self.store.db.erase_old_pages()
        return waiting

    def accept_run(self, project: Project, run_id: str) -> builtins.list[Memory]:
        """Accept every memory a run left waiting in the project; the memories accepted.

        Raises:
            NotFoundError: the run left nothing waiting here.
        """
        ids = self.store.memories.pending_of_run(project.id, run_id.strip())
        if not ids:
            raise NotFoundError(f"No memory of run {run_id} waits for review in this project.")
        return [self.accept(project, memory_id) for memory_id in ids]

    def expire(self) -> int:
        """Erase every memory left unreviewed longer than the set days; how many. A database that cannot be written
        (read-only) is left as it is: the next writer expires them."""
        before = self.core.clock() - self.expire_days() * MS_PER_DAY
        ids = self.store.memories.pending_created_before(before)
        if not ids:
            return 0
        erased = 0
        try:
            with self.store.db.transaction():
                for memory_id in ids:
                    found = self.store.memories.get(memory_id)
                    if found is None or found.status is not Status.PENDING:
                        continue  # accepted meanwhile by another process
                    erased += self.store.memories.delete(memory_id)
                    self.core.audit("review", "memory.review.expire", memory_id, found.project_id)
            self.store.db.erase_old_pages()
        except StoreError as exc:
            log.warning("expiring unreviewed memories failed: %s", exc)
            return 0
        return erased
