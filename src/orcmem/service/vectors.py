"""Keep stored vectors in step with memories: embed what has none (or one from another model), in batches."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from orcmem.models.constants import EMBED_BATCH_SIZE
from orcmem.store.facade import Store
from orcmem.store.vectors import PendingMemory

log = logging.getLogger("orcmem.vectors")

if TYPE_CHECKING:  # the embedding stack is imported only to check types: hooks open a service
    from orcmem.embed.embedder import Embedder


Progress = Callable[[int, int], None]


class EmbeddingPump:
    """Embeds memories that lack a vector; `schedule()` runs it in one background thread per process."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        is_enabled: Callable[[], bool],
        clock: Callable[[], int],
    ) -> None:
        """Embed with `embedder` into `store` while `is_enabled()` holds."""
        self.store = store
        self.embedder = embedder
        self.is_enabled = is_enabled
        self.clock = clock
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._running = False  # a thread is embedding, or about to: set and cleared under the lock
        self._backfill = False
        self._wanted: set[str] = set()
        self.last_error: str | None = None

    def pending(self) -> int:
        """How many active memories still need a vector from the current model."""
        return self.store.vectors.count_missing(self.embedder.model_id)

    def embed_missing(self, *, limit: int | None = None, progress: Progress | None = None) -> int:
        """Embed up to `limit` memories lacking a vector, in batches of EMBED_BATCH_SIZE; returns how many were stored.

        Stops early when memory is turned off, vectors are unavailable, or the model fails.
        """
        if not self.store.vectors.available:
            return 0
        model = self.embedder.model_id
        total = self.pending() if progress else 0
        if limit is not None:
            total = min(total, limit)
        done = 0
        while limit is None or done < limit:
            if not self.is_enabled():
                break
            size = EMBED_BATCH_SIZE if limit is None else min(EMBED_BATCH_SIZE, limit - done)
            batch = self.store.vectors.missing(model, size)
            if not batch:
                break
            stored = self._embed_batch(batch, model)
            if stored is None:
                break
            done += len(batch)
            if progress:
                progress(done, max(total, done))
            if stored == 0:
                break  # nothing could be stored: do not spin on the same batch
        return done

    def embed_ids(self, memory_ids: Sequence[str]) -> int:
        """Embed those of `memory_ids` that lack a vector from the current model; returns how many were stored."""
        if not self.store.vectors.available or not memory_ids:
            return 0
        model = self.embedder.model_id
        stored = 0
        for start in range(0, len(memory_ids), EMBED_BATCH_SIZE):
            if not self.is_enabled():
                break
            batch = self.store.vectors.missing_among(model, memory_ids[start : start + EMBED_BATCH_SIZE])
            if not batch:
                continue
            done = self._embed_batch(batch, model)
            if done is None:
                break
            stored += done
        return stored

    def _embed_batch(self, batch: Sequence[PendingMemory], model: str) -> int | None:
        """Embed one batch and store its vectors; how many were stored, or None when the model failed."""
        try:
            vectors = self.embedder.embed_documents([item.text for item in batch])
        except Exception as exc:  # a model failure must never reach the caller of a write
            self.last_error = f"embedding failed: {exc}"
            log.warning(self.last_error)
            return None
        if vectors is None or len(vectors) != len(batch):
            self.last_error = "the embedding model is unavailable"
            return None
        stored = 0
        for item, vector in zip(batch, vectors, strict=True):
            # Refused when the text changed while it was embedded: the write that changed it scheduled the memory
            # again, and it stays without a vector (so `missing` finds it) until its new text's is stored.
            if self.is_enabled() and self.store.vectors.put(item.id, vector, model, self.clock(), text=item.text):
                stored += 1
        return stored

    def schedule(self, memory_ids: Sequence[str] | None = None) -> None:
        """Embed in the background: these memories, or (None) every memory lacking a vector.

        One thread per process; a call while it runs makes it go round again. A short-lived process (a CLI
        command, a worker) names what it wrote, so it never waits on the backlog other processes left; the
        long-lived servers backfill.
        """
        with self._lock:
            if memory_ids is None:
                self._backfill = True
            else:
                self._wanted.update(memory_ids)
            if self._running:
                return
            self._running = True
            self._thread = threading.Thread(target=self._run, name="orcmem-embed", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                backfill, wanted = self._backfill, sorted(self._wanted)
                self._backfill, self._wanted = False, set()
                if not backfill and not wanted:
                    # Said under the lock, not read from `is_alive()`: a thread past this point still lives a
                    # moment, and a schedule() then would leave its memories waiting with no thread to embed them.
                    self._running = False
                    return
            try:
                if backfill:
                    self.embed_missing()
                else:
                    self.embed_ids(wanted)
            except Exception as exc:  # the background thread logs, it never raises
                self.last_error = str(exc)
                log.warning("background embedding failed: %s", exc)

    def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the background thread; True when it finished."""
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()
