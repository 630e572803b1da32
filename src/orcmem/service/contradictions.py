"""Finding the active memories under another topic key that a new write may contradict: words and meaning, fused."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from orcmem.models.constants import CONTRADICTION_MIN_SIMILARITY, CONTRADICTION_MIN_WORDS, CONTRADICTION_RRF_K
from orcmem.models.types import Memory
from orcmem.retrieve.query import fts_query, query_terms
from orcmem.retrieve.rrf import reciprocal_rank
from orcmem.rules.contradictions import CANDIDATES_MAX
from orcmem.store.facade import Store

log = logging.getLogger("orcmem.contradictions")

Vector = Sequence[float]
LIST_DEPTH = 10  # each list (words, meaning) offers this many before fusion keeps CANDIDATES_MAX


class Contradictions:
    """Looks up the candidates a writer is shown to say whether its new memory replaces, refines or conflicts."""

    def __init__(self, store: Store, limit: int = CANDIDATES_MAX) -> None:
        """Search `store`; at most `limit` candidates per new memory."""
        self.store = store
        self.limit = limit

    def candidates(
        self,
        project_id: str | None,
        title: str,
        body: str,
        topic_key: str | None,
        vector: Vector | None,
        model: str | None,
        *,
        exclude: Sequence[str] = (),
    ) -> list[Memory]:
        """Active memories of `project_id` (and global ones) under another topic key than `topic_key`, that share
        enough words with the new text or are close enough in meaning, best fused first; at most `limit`."""
        skip = set(exclude)
        words = self._by_words(project_id, f"{title}\n{body}")
        meaning = self._by_meaning(project_id, vector, model)
        by_id = {memory.id: memory for memory in (*words, *meaning)}
        fused = reciprocal_rank([[m.id for m in words], [m.id for m in meaning]], CONTRADICTION_RRF_K)
        found: list[Memory] = []
        for memory_id, _score in sorted(fused.items(), key=lambda item: -item[1]):
            memory = by_id[str(memory_id)]
            if memory.id in skip or _same_topic(memory.topic_key, topic_key):
                continue
            found.append(memory)
            if len(found) == self.limit:
                break
        return found

    def _by_words(self, project_id: str | None, text: str) -> list[Memory]:
        """Memories whose words overlap the new text's in at least CONTRADICTION_MIN_WORDS distinct words."""
        match = fts_query(text)
        if match is None:
            return []
        mine = set(query_terms(text, max_terms=64))
        hits = self.store.memories.search_words(match, project_id, LIST_DEPTH)
        return [
            hit.memory
            for hit in hits
            if len(mine & set(query_terms(f"{hit.memory.title}\n{hit.memory.body}", max_terms=64)))
            >= CONTRADICTION_MIN_WORDS
        ]

    def _by_meaning(self, project_id: str | None, vector: Vector | None, model: str | None) -> list[Memory]:
        """The nearest memories at least CONTRADICTION_MIN_SIMILARITY close in meaning."""
        if vector is None or model is None:
            return []
        try:
            hits = self.store.vectors.nearest(vector, model, project_id, LIST_DEPTH)
        except Exception as exc:  # the vector copy failing leaves the word lookup working
            log.warning("the meaning lookup for contradictions failed: %s", exc)
            return []
        close = [hit.memory_id for hit in hits if 1.0 - hit.distance >= CONTRADICTION_MIN_SIMILARITY]
        return self.store.memories.get_many(close, files=False)


def _same_topic(one: str | None, other: str | None) -> bool:
    return one is not None and other is not None and one.casefold() == other.casefold()
