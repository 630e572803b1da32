"""Finding the active memory a new write repeats: the same words once normalised, else the same meaning."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from orcmem.models.constants import DUPLICATE_MIN_SIMILARITY, QUERY_EMBED_TIMEOUT_S
from orcmem.models.types import Memory
from orcmem.store.facade import Store
from orcmem.text.duplicates import differing_facts

log = logging.getLogger("orcmem.duplicates")

if TYPE_CHECKING:  # the embedding stack is imported only to check types: hooks open a service
    from orcmem.embed.embedder import Embedder

Vector = Sequence[float]
MEANING_CANDIDATES = 4  # the nearest memories checked for a differing fact before the new one is kept apart


def memory_text(title: str, body: str) -> str:
    """The text a memory is embedded as (the same for stored memories and new writes)."""
    return f"{title}\n{body}"


class Duplicates:
    """Looks for the memory of the same scope and project that a new title and body repeat."""

    def __init__(self, store: Store, min_similarity: float = DUPLICATE_MIN_SIMILARITY) -> None:
        """Search `store`; memories at least `min_similarity` close in meaning count as the same."""
        self.store = store
        self.min_similarity = min_similarity

    def embed(self, embedder: Embedder | None, texts: Sequence[str]) -> list[Vector | None]:
        """Vectors of new memories' texts, to compare by meaning; Nones when no model can embed them now."""
        if embedder is None or not self.store.vectors.available or not texts:
            return [None] * len(texts)
        try:
            vectors = embedder.embed_documents(list(texts))
        except Exception as exc:  # a model failure leaves the text comparison working
            log.warning("embedding new memories for the duplicate check failed: %s", exc)
            return [None] * len(texts)
        if vectors is None or len(vectors) != len(texts):
            return [None] * len(texts)
        return list(vectors)

    def embed_now(self, embedder: Embedder | None, text: str) -> Vector | None:
        """One new memory's vector within the query time limit (a write never waits behind a backlog); or None."""
        if embedder is None or not self.store.vectors.available:
            return None
        try:
            return embedder.embed_query(text, timeout=QUERY_EMBED_TIMEOUT_S)
        except Exception as exc:  # a model failure leaves the text comparison working
            log.warning("embedding a new memory for the duplicate check failed: %s", exc)
            return None

    def find(
        self, project_id: str | None, title: str, body: str, vector: Vector | None, model: str | None
    ) -> Memory | None:
        """The active memory (of `project_id`, or global when None) that this title and body repeat, or None."""
        return self._same_words(project_id, title, body) or self._same_meaning(
            project_id, memory_text(title, body), vector, model
        )

    def _same_words(self, project_id: str | None, title: str, body: str) -> Memory | None:
        return self.store.memories.with_same_text(project_id, title, body)

    def _same_meaning(
        self, project_id: str | None, text: str, vector: Vector | None, model: str | None
    ) -> Memory | None:
        """The closest memory of the project at least `min_similarity` close that states no differing fact."""
        if vector is None or model is None:
            return None
        for hit in self.store.vectors.nearest(vector, model, project_id, MEANING_CANDIDATES):
            if 1.0 - hit.distance < self.min_similarity:
                return None
            memory = self.store.memories.get(hit.memory_id)
            if memory is None or memory.project_id != project_id:
                continue
            if not differing_facts(text, memory_text(memory.title, memory.body)):
                return memory
        return None
