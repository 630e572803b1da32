"""A memory's history: the relations a write states against older memories, and conflicts settled by a person."""

from __future__ import annotations

from typing import TYPE_CHECKING

from orcmem.models.errors import NotFoundError, ValidationError
from orcmem.models.types import Memory, MemoryLink, Project, Relation, Scope, Source, Status
from orcmem.rules import memory as rules
from orcmem.rules.contradictions import KEEP_BOTH, allowed_relation

if TYPE_CHECKING:
    from orcmem.service.core import ServiceCore


class History:
    """Links between memories over the service's store: replaces (the older superseded), refines, conflicts."""

    def __init__(self, core: ServiceCore) -> None:
        """Keep history in `core`'s store, with its clock and audit."""
        self.core = core
        self.store = core.store

    def target(self, project: Project | None, memory_id: str) -> Memory:
        """The older memory a write names, checked: visible to the project and active.

        Raises:
            ValidationError: a malformed id, or a memory no longer active.
            NotFoundError: no such memory in this project.
        """
        checked = rules.check_memory_id(memory_id)
        memory = self.store.memories.get(checked)
        if memory is None or not (
            memory.scope is Scope.GLOBAL or (project is not None and memory.project_id == project.id)
        ):
            raise NotFoundError(f"No memory {checked} in this project.")
        if memory.status is not Status.ACTIVE:
            raise ValidationError(f"Memory {checked} is {memory.status}; only an active memory can be related to.")
        return memory

    def relate(
        self, new: Memory, relation: Relation, old: Memory, actor: Source, *, same_person: bool = True
    ) -> Relation | None:
        """Store what `new` says of `old` (inside the caller's transaction); the relation stored, after the ownership
        rule turned a replacement the actor may not make into a conflict; None when `new` is `old` itself (the
        write only confirmed it).

        A conflict a model or an agent raised waits in the review inbox (`new` becomes pending) for the person to
        settle; a replacement by a memory that waits there supersedes the older one only once accepted (`accepted`).
        """
        if new.id == old.id:
            return None
        stored = allowed_relation(relation, old.source, actor, same_person=same_person)
        now = self.core.clock()
        self.store.links.add(new.id, old.id, stored, at=now, by=str(actor))
        if stored is Relation.CONFLICTS and actor is not Source.USER and new.status is Status.ACTIVE:
            self.store.memories.update_fields(new.id, {"status": str(Status.PENDING), "updated_at": now})
        if stored is Relation.REPLACES and new.status is not Status.PENDING:
            self.store.memories.update_fields(old.id, {"status": str(Status.SUPERSEDED), "updated_at": now})
        self.core.audit(
            str(actor), f"memory.{stored}", new.id, new.project_id, metadata={"other": old.id, "asked": str(relation)}
        )
        return stored

    def accepted(self, memory_id: str) -> None:
        """A memory that waited for review was accepted: the older memories it replaces are superseded now (inside
        the caller's transaction)."""
        now = self.core.clock()
        for link in self.store.links.of(memory_id):
            if link.from_id == memory_id and link.relation is Relation.REPLACES:
                older = self.store.memories.get(link.to_id)
                if older is not None and older.status is Status.ACTIVE:
                    self.store.memories.update_fields(older.id, {"status": str(Status.SUPERSEDED), "updated_at": now})

    def links(self, memory_id: str) -> list[MemoryLink]:
        """Every link from or to a memory, oldest first."""
        return self.store.links.of(memory_id)

    def replaced(self, memory_ids: list[str]) -> dict[str, list[MemoryLink]]:
        """What each of these memories replaced, to say so in recall and the brief."""
        return self.store.links.replaced_by(memory_ids)

    def open_conflicts_of(self, memory_id: str) -> list[MemoryLink]:
        """The open conflicts a memory is on either side of."""
        return self.store.links.open_conflicts_of(memory_id)

    def open_conflicts(self, project: Project | None) -> list[MemoryLink]:
        """Conflicts nobody settled, newest first."""
        return self.store.links.open_conflicts(project.id if project else None)

    def resolve(self, project: Project | None, memory_id: str, keep: str) -> MemoryLink:
        """Settle the open conflict `memory_id` is on by keeping one side (a memory id) or `both`; the side not kept
        is superseded by the kept one. A person's act: the person may overrule anyone.

        Raises:
            NotFoundError: the memory is on no open conflict, or `keep` is neither side.
        """
        checked = rules.check_memory_id(memory_id)
        conflicts = self.store.links.open_conflicts_of(checked)
        wanted = keep.strip()
        if wanted != KEEP_BOTH:
            wanted = rules.check_memory_id(wanted)
        chosen = next(
            (link for link in conflicts if wanted in (KEEP_BOTH, link.from_id, link.to_id) and _visible(link, project)),
            None,
        )
        if chosen is None:
            raise NotFoundError(f"No open conflict of {checked} with {wanted}; `orcmem conflicts` lists them.")
        now = self.core.clock()
        with self.store.db.transaction():
            user = str(Source.USER)
            if wanted == KEEP_BOTH:
                self.store.links.settle(chosen.from_id, chosen.to_id, Relation.REFINES, at=now, by=user)
            elif wanted == chosen.from_id:  # the newer kept: it replaces the older
                self.store.links.settle(chosen.from_id, chosen.to_id, Relation.REPLACES, at=now, by=user)
                self.store.memories.update_fields(chosen.to_id, {"status": str(Status.SUPERSEDED), "updated_at": now})
            else:  # the older kept: the conflict stays on record, settled, and the older replaces the newer
                self.store.links.settle(chosen.from_id, chosen.to_id, Relation.CONFLICTS, at=now, by=user)
                self.store.links.add(chosen.to_id, chosen.from_id, Relation.REPLACES, at=now, by=user)
                self.store.memories.update_fields(chosen.from_id, {"status": str(Status.SUPERSEDED), "updated_at": now})
            self.core.audit("user", "memory.conflict.resolve", checked, chosen.project_id, metadata={"keep": wanted})
        settled = [link for link in self.store.links.of(chosen.from_id) if link.to_id == chosen.to_id]
        return settled[0] if settled else chosen


def _visible(link: MemoryLink, project: Project | None) -> bool:
    return link.project_id is None or (project is not None and link.project_id == project.id)
