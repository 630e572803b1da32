"""Search: memories that match a text, by words (FTS5) and by meaning (vectors), fused and scored."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from orcmem.models.constants import (
    QUERY_EMBED_TIMEOUT_S,
    SEARCH_CANDIDATES,
    SEARCH_DEFAULT_LIMIT,
    SEARCH_MAX_LIMIT,
)
from orcmem.models.errors import ValidationError
from orcmem.models.types import Memory, Project, SearchHit
from orcmem.models.vocabulary import Meaning
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


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """A search's hits, and whether the query's meaning took part (`Meaning.USED`) or only its words matched."""

    hits: list[SearchHit]
    meaning: Meaning
    query_timeout: float  # the limit the query's vector had (the notice names it)

    @property
    def notice(self) -> str | None:
        """What to tell whoever searched when meaning was wanted but only words matched; None otherwise."""
        if self.meaning is Meaning.LATE:
            return (
                f"searched by words only: the query's meaning was not ready within {self.query_timeout:g} s "
                "(a busy machine); memories close in meaning but not in words may be missing"
            )
        if self.meaning is Meaning.LOADING:
            return "searched by words only: the embedding model is still loading; ask again in a moment for meaning"
        if self.meaning is Meaning.FAILED:
            return "searched by words only: the embedding model failed on this query"
        return None


class _WordsOnly(Exception):
    """The query's vector did not come: `meaning` says why (late, still loading, or the model is gone)."""

    def __init__(self, meaning: Meaning) -> None:
        super().__init__(str(meaning))
        self.meaning = meaning


class Search:
    """Finding memories by words and meaning (`service.search`); nothing here changes a memory."""

    def __init__(self, core: ServiceCore) -> None:
        """Search over the service's store, clock and embedder."""
        self.core = core
        self.store = core.store
        self._query_pool: ThreadPoolExecutor | None = None
        self._query_pool_lock = threading.Lock()
        # How long the query's vector may take before search answers from words (ORCMEM_QUERY_TIMEOUT_S, read by
        # the entry point; tests on a loaded machine raise it so meaning is always waited for).
        self.query_timeout = QUERY_EMBED_TIMEOUT_S

    def close(self) -> None:
        """Stop the threads that embed queries (a query in flight is dropped)."""
        if self._query_pool is not None:
            self._query_pool.shutdown(wait=False, cancel_futures=True)

    def hits(
        self, project: Project | None, text: str, limit: int = SEARCH_DEFAULT_LIMIT, *, provenances: Sequence[str] = ()
    ) -> list[SearchHit]:
        """Active memories of the project and global ones that match `text`, best first (`run`'s hits, meaning used
        as memory's setting says; `run` takes `semantic` to override it)."""
        return self.run(project, text, limit, provenances=provenances).hits

    def run(
        self,
        project: Project | None,
        text: str,
        limit: int = SEARCH_DEFAULT_LIMIT,
        *,
        semantic: bool | None = None,
        provenances: Sequence[str] = (),
        words_first: bool = False,
    ) -> SearchOutcome:
        """Active memories of the project and global ones that match `text`, best first, and whether meaning took
        part; never raises on text.

        Words (FTS5) and meaning (vectors) each give up to 40 candidates, fused and scored as docs/search.md says.
        Meaning is used while memory is on (or when `semantic` says so), and only if the query vector arrives
        within `query_timeout` (500 ms); otherwise the search answers from words alone and the outcome says why.
        `provenances` keeps only memories whose words came from there. With `words_first`, a model still loading
        is not waited for: words answer at once (`Meaning.LOADING`) while it loads.
        """
        if not 1 <= limit <= SEARCH_MAX_LIMIT:
            raise ValidationError(f"The search limit must be between 1 and {SEARCH_MAX_LIMIT}.")
        wanted = {rules.check_provenance(value) for value in provenances}
        meaning = Meaning.OFF
        pending = None
        embedder = self.core.embedder
        if self._use_meaning(semantic) and words_first and embedder is not None and not embedder.ready:
            embedder.start()
            if not self.store.vectors.available:
                meaning = Meaning.UNAVAILABLE
            else:
                meaning = Meaning.LOADING if getattr(embedder, "available", True) else Meaning.FAILED
        elif self._use_meaning(semantic):
            pending = self.nearest_soon(project, text, SEARCH_CANDIDATES)
            meaning = Meaning.UNAVAILABLE if pending is None else Meaning.USED
        words = self._word_hits(project, text, SEARCH_CANDIDATES)  # runs while the query is embedded and scanned
        near: list[tuple[Memory, float]] = []
        if pending is not None:
            near, meaning = self._meaning_outcome(project, pending, SEARCH_CANDIDATES)
        if wanted:
            words = [hit for hit in words if hit.memory.provenance in wanted]
            near = [(memory, similarity) for memory, similarity in near if memory.provenance in wanted]
        hits = rank_candidates([(hit.memory, -hit.rank) for hit in words], near, self.core.clock(), limit)
        complete = self.store.memories.with_files([hit.memory for hit in hits])
        found = [replace(hit, memory=memory) for hit, memory in zip(hits, complete, strict=True)]
        return SearchOutcome(found, meaning, self.query_timeout)

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
                vector = embedder.embed_query(text, timeout=self.query_timeout)
        except Exception as exc:  # a broken model must leave search working on words
            log.warning("query embedding failed: %s", exc)
            return None
        if vector is None:
            # The worker gave up waiting (late), or its model is gone: the caller tells these apart.
            if not getattr(embedder, "available", True):
                raise _WordsOnly(Meaning.FAILED)
            raise _WordsOnly(Meaning.LATE if embedder.ready else Meaning.LOADING)
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
        return self._meaning_outcome(project, pending, limit)[0]

    def _meaning_outcome(
        self, project: Project | None, pending: Future[Scan | None], limit: int
    ) -> tuple[list[tuple[Memory, float]], Meaning]:
        """A pending scan's memories with their similarity, and whether meaning was used (else late or failed)."""
        from concurrent.futures import TimeoutError as FuturesTimeout

        try:
            # The embedder gives up after its own limit; the margin covers the scan that follows it.
            found = pending.result(timeout=self.query_timeout + 0.25)
        except FuturesTimeout:
            return [], Meaning.LATE  # the query's vector let its limit pass: answer from words, and say so
        except _WordsOnly as why:
            return [], why.meaning
        except Exception as exc:  # a failing scan must leave search working on words
            log.warning("meaning search failed: %s", exc)
            return [], Meaning.FAILED
        if found is None:
            return [], Meaning.FAILED
        hits = self.store.vectors.pick(found, project.id if project else None, limit)
        similarity = {hit.memory_id: 1.0 - hit.distance for hit in hits}
        memories = self.store.memories.get_many([hit.memory_id for hit in hits], files=False)
        return [(memory, similarity[memory.id]) for memory in memories], Meaning.USED

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
