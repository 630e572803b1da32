"""Search: memories that match a text, by words (FTS5) and by meaning (vectors), fused and scored."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from orcmem.models.constants import (
    QUERY_EMBED_TIMEOUT_S,
    SEARCH_CANDIDATES,
    SEARCH_DEFAULT_LIMIT,
    SEARCH_MAX_LIMIT,
)
from orcmem.models.errors import ValidationError
from orcmem.models.types import Memory, Project, SearchHit
from orcmem.retrieve.query import fts_query
from orcmem.retrieve.scoring import rank_candidates
from orcmem.rules import memory as rules
from orcmem.service.core import ServiceCore
from orcmem.store.memories import WordHit

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from orcmem.embed.embedder import Embedder
    from orcmem.store.vectors import Scan

log = logging.getLogger("orcmem.service")


class Search:
    """Finding memories by words and meaning (`service.search`); nothing here changes a memory."""

    def __init__(self, core: ServiceCore) -> None:
        """Search over the service's store, clock and embedder."""
        self.core = core
        self.store = core.store
        self._query_pool: ThreadPoolExecutor | None = None
        self._query_pool_lock = threading.Lock()

    def close(self) -> None:
        """Stop the threads that embed queries (a query in flight is dropped)."""
        if self._query_pool is not None:
            self._query_pool.shutdown(wait=False, cancel_futures=True)

    def hits(
        self,
        project: Project | None,
        text: str,
        limit: int = SEARCH_DEFAULT_LIMIT,
        *,
        semantic: bool | None = None,
        provenances: Sequence[str] = (),
    ) -> list[SearchHit]:
        """Active memories of the project and global ones that match `text`, best first; never raises on text.

        Words (FTS5) and meaning (vectors) each give up to 40 candidates, fused and scored as docs/search.md says.
        Meaning is used while memory is on (or when `semantic` says so), and only if the query vector arrives
        within 500 ms; otherwise the search answers from words alone. `provenances` keeps only memories whose
        words came from there.
        """
        if not 1 <= limit <= SEARCH_MAX_LIMIT:
            raise ValidationError(f"The search limit must be between 1 and {SEARCH_MAX_LIMIT}.")
        wanted = {rules.check_provenance(value) for value in provenances}
        pending = self.nearest_soon(project, text, SEARCH_CANDIDATES) if self._use_meaning(semantic) else None
        words = self._word_hits(project, text, SEARCH_CANDIDATES)  # runs while the query is embedded and scanned
        near = self.meaning_hits(project, pending, SEARCH_CANDIDATES) if pending else []
        if wanted:
            words = [hit for hit in words if hit.memory.provenance in wanted]
            near = [(memory, similarity) for memory, similarity in near if memory.provenance in wanted]
        hits = rank_candidates([(hit.memory, -hit.rank) for hit in words], near, self.core.clock(), limit)
        complete = self.store.memories.with_files([hit.memory for hit in hits])
        return [replace(hit, memory=memory) for hit, memory in zip(hits, complete, strict=True)]

    def _word_hits(self, project: Project | None, text: str, limit: int) -> list[WordHit]:
        match = fts_query(text)
        if match is None:
            return []
        return self.store.memories.search_words(match, project.id if project else None, limit)

    def words(self, project: Project | None, text: str, limit: int = SEARCH_CANDIDATES) -> list[Memory]:
        """Word matches only, best BM25 first (candidates: read without their files)."""
        return [hit.memory for hit in self._word_hits(project, text, limit)]

    def nearest_soon(self, project: Project | None, text: str, limit: int) -> Future[Scan | None] | None:
        """Start embedding the query and scanning the vectors in the background, or None when meaning cannot be used.

        The in-memory copy of the vectors is refreshed here first, so the background thread needs no database:
        the embedding and the scan release the GIL and, on a second core, overlap the word search.
        """
        embedder = self.core.embedder
        if embedder is None or not self.store.vectors.available or not text.strip():
            return None
        self.store.vectors.refresh(embedder.model_id)
        with self._query_pool_lock:
            if self._query_pool is None:
                from concurrent.futures import ThreadPoolExecutor

                self._query_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="orcmem-query")
        return self._query_pool.submit(self._scan_for, embedder, text)

    def _scan_for(self, embedder: Embedder, text: str) -> Scan | None:
        try:
            # On this thread when the embedder allows it (one hand-off less, and never queued behind documents);
            # the caller waits on this thread with a timeout either way.
            vector = embedder.embed_query_here(text)
            if vector is None:
                vector = embedder.embed_query(text, timeout=QUERY_EMBED_TIMEOUT_S)
        except Exception as exc:  # a broken model must leave search working on words
            log.warning("query embedding failed: %s", exc)
            return None
        if vector is None:
            return None
        return self.store.vectors.scan(vector, embedder.model_id, refresh=False)

    def meaning(
        self,
        project: Project | None,
        text: str,
        limit: int = SEARCH_CANDIDATES,
        *,
        pending: Future[Scan | None] | None = None,
    ) -> list[Memory]:
        """Nearest memories by meaning, closest first, read without their files; empty when the model or vectors
        are unavailable or the query vector is late."""
        pending = pending or self.nearest_soon(project, text, limit)
        if pending is None:
            return []
        return [memory for memory, _similarity in self.meaning_hits(project, pending, limit)]

    def meaning_hits(
        self, project: Project | None, pending: Future[Scan | None], limit: int
    ) -> list[tuple[Memory, float]]:
        """A pending scan's memories with their cosine similarity, closest first; empty when it fails or is late."""
        from concurrent.futures import TimeoutError as FuturesTimeout

        try:
            # The embedder gives up after its own limit; the margin covers the scan that follows it.
            found = pending.result(timeout=QUERY_EMBED_TIMEOUT_S + 0.25)
        except FuturesTimeout:
            return []  # the embedder let its own limit pass: answer from words
        except Exception as exc:  # a failing scan must leave search working on words
            log.warning("meaning search failed: %s", exc)
            return []
        if found is None:
            return []
        hits = self.store.vectors.pick(found, project.id if project else None, limit)
        similarity = {hit.memory_id: 1.0 - hit.distance for hit in hits}
        memories = self.store.memories.get_many([hit.memory_id for hit in hits], files=False)
        return [(memory, similarity[memory.id]) for memory in memories]

    def prepare_meaning(self, timeout: float) -> bool:
        """Wait up to `timeout` for the model, then load the vectors' in-memory copy and run the model once, so the
        first recall or search by meaning answers as fast as the next; False when the model did not load."""
        embedder = self.core.embedder
        if embedder is None or not self.store.vectors.available or not embedder.wait_ready(timeout):
            return False
        self.store.vectors.refresh(embedder.model_id)
        embedder.embed_query_here("orcmem")
        return True

    def _use_meaning(self, semantic: bool | None) -> bool:
        return self.core.is_enabled() if semantic is None else semantic
