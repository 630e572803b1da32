"""What the parts built beside `MemoryService` need of its memory reads and writes, as a protocol: the review inbox
and the store audit call them without importing the service that holds them (no circle)."""

from __future__ import annotations

import builtins
from typing import Protocol, TypedDict, Unpack

from orcmem.models.types import Memory, MemoryFilter, Project, Source


class MemoryEdits(TypedDict, total=False):
    """What a person or an agent may change of a memory, each left as it is when absent or None."""

    title: str | None
    body: str | None
    type: str | None


class MemoryAccess(Protocol):
    """A memory visible to a project, a filtered list and count, and an edit under the ownership rule."""

    def get(self, project: Project | None, memory_id: str) -> Memory:
        """A memory visible to the project."""
        ...

    def list(self, project: Project | None, flt: MemoryFilter | None = None) -> builtins.list[Memory]:
        """Memories visible to the project that the filter matches."""
        ...

    def count(self, project: Project | None, flt: MemoryFilter | None = None) -> int:
        """How many memories the filter matches."""
        ...

    def edit(
        self,
        project: Project | None,
        memory_id: str,
        *,
        actor: Source = ...,
        **edits: Unpack[MemoryEdits],
    ) -> Memory:
        """Change a memory's title, body or type, as `actor` (the ownership rule decides first; the person by
        default)."""
        ...
