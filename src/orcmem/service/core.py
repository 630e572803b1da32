"""The service's common ground: the store, the clock, the embedder, projects, the on/off switch and the audit log."""

from __future__ import annotations

import builtins
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from orcmem.host.workspace import Location
from orcmem.models.constants import (
    SETTING_MEMORY_ENABLED,
)
from orcmem.models.errors import MemoryOffError
from orcmem.models.types import (
    Project,
)
from orcmem.service.duplicates import Duplicates
from orcmem.service.vectors import EmbeddingPump
from orcmem.store.facade import Store

if TYPE_CHECKING:
    from orcmem.embed.embedder import Embedder

log = logging.getLogger("orcmem.service")

MEMORY_OFF_MESSAGE = "orcmem memory is off. Turn it on with `orcmem memory on` to save or recall memories."


def now_ms() -> int:
    """Milliseconds since the epoch."""
    return int(time.time() * 1000)


class ServiceCore:
    """What every part of MemoryService stands on; every method takes explicit arguments, never the environment."""

    def __init__(self, store: Store, *, clock: Callable[[], int] = now_ms, embedder: Embedder | None = None) -> None:
        """Use an open store; `clock` returns milliseconds since the epoch (tests pass their own).

        Without an embedder (or without sqlite-vec) search and recall work on words alone.
        """
        self.store = store
        self.clock = clock
        self.embedder: Embedder | None = None
        self.pump: EmbeddingPump | None = None
        # While set, writes leave their vectors to another process (see defer_embedding); True once one did.
        self._deferring = False
        self.embedding_deferred = False
        self.duplicates = Duplicates(store)
        if embedder is not None:
            self.use_embedder(embedder)

    def use_embedder(self, embedder: Embedder) -> None:
        """Search and embed with `embedder` from now on."""
        self.embedder = embedder
        self.pump = EmbeddingPump(self.store, embedder, self.is_enabled, self._now)

    def _now(self) -> int:
        return self.clock()

    def close(self, *, embed_wait: float = 0.0) -> None:
        """Close the database, first giving background embedding up to `embed_wait` seconds to finish."""
        if self.pump is not None and embed_wait > 0:
            self.pump.wait(embed_wait)
        if self.embedder is not None:
            self.embedder.close()
        self.store.close()

    @property
    def home(self) -> Path:
        """The profile folder: the database and orcmem's other files of this profile."""
        return self.store.db.path.parent

    @property
    def database_path(self) -> Path:
        """The profile's database file."""
        return self.store.db.path

    @property
    def semantic_ready(self) -> bool:
        """Whether search by meaning can run: an embedder and the vector table are both there."""
        return self.embedder is not None and self.store.vectors.available

    def defer_embedding(self) -> None:
        """From now on, leave the vectors of what this process writes to another one (a command must not wait for
        the model to load); `embedding_deferred` then says whether a write needs them. Search still embeds here."""
        self._deferring = True

    def vectors_changed(self, memory_ids: Sequence[str] | None = None) -> None:
        """Memories changed: embed these (or, with None, every memory lacking a vector) in the background.

        Nothing is embedded while memory is off.
        """
        if self.pump is None or not self.is_enabled() or not self.store.vectors.available:
            return
        if self._deferring:
            self.embedding_deferred = True
        else:
            self.pump.schedule(memory_ids)

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every active memory that has no vector from the current model; returns how many.

        Raises:
            MemoryOffError: memory is off (nothing is embedded while it is off).
        """
        self._require_enabled()
        if self.pump is None or not self.store.vectors.available:
            return 0
        return self.pump.embed_missing(progress=progress)

    # --- projects ----------------------------------------------------------------------------------------------
    def project(self, location: Location, *, create: bool = True) -> Project | None:
        """The project at a location; created on first use when `create`, else None if unknown."""
        if create:
            return self.store.projects.ensure(
                location.canonical_root, location.worktree_root, location.name, self.clock()
            )
        return self.store.projects.by_root(location.canonical_root)

    def projects(self) -> builtins.list[tuple[Project, int]]:
        """Every known project with its number of memories."""
        return self.store.projects.all()

    def is_enabled(self) -> bool:
        """Whether memory is on (a missing setting means off)."""
        return self.store.settings.get(SETTING_MEMORY_ENABLED) == "true"

    def _require_enabled(self) -> None:
        if not self.is_enabled():
            raise MemoryOffError(MEMORY_OFF_MESSAGE)

    def model_ready(self) -> bool:
        """Whether the query can be embedded now: an embedder whose model has loaded (one without a load is ready)."""
        return self.semantic_ready and self.embedder is not None and self.embedder.ready

    def audit(
        self,
        actor: str,
        action: str,
        memory_id: str | None = None,
        project_id: str | None = None,
        metadata: dict[str, object] | None = None,
        decision: str | None = None,
    ) -> None:
        """Append one audit row (who did what to which memory, and what was decided)."""
        self.store.audit.add(
            at=self.clock(),
            actor=actor,
            action=action,
            resource_type="memory" if memory_id else None,
            resource_id=memory_id,
            project_id=project_id,
            decision=decision,
            metadata=metadata,
        )
