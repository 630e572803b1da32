"""Reading memories: one by id, lists, search by words and meaning, the brief and recall."""

from __future__ import annotations

import builtins
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from orcmem.models.constants import (
    BRIEF_MEMORY_POOL,
    BRIEF_SUMMARIES,
    BRIEF_TASKS,
    LIST_MAX_LIMIT,
    QUERY_EMBED_TIMEOUT_S,
    RECALL_CANDIDATES,
    RECALL_MAX_MEMORIES,
    RECALL_MIN_SIMILARITY,
    RECALL_RRF_K,
    SEARCH_CANDIDATES,
    SEARCH_DEFAULT_LIMIT,
    SEARCH_MAX_LIMIT,
    WARM_RECALL_MIN_TERM_SHARE,
)
from orcmem.models.errors import NotFoundError, ValidationError
from orcmem.models.types import (
    Memory,
    MemoryFilter,
    Project,
    Scope,
    SearchHit,
)
from orcmem.retrieve.query import fts_query
from orcmem.retrieve.scoring import rank_candidates
from orcmem.rules import memory as rules
from orcmem.service.overview import Overview, RunsOverview, build_overview, build_runs
from orcmem.store.memories import WordHit
from orcmem.store.recall import RecallRow, word_candidates

if TYPE_CHECKING:
    from concurrent.futures import Future

    from orcmem.embed.embedder import Embedder
    from orcmem.store.vectors import Scan

from orcmem.agent_context.brief import build_brief
from orcmem.agent_context.recall import format_recall, merge_recall, recall_by_words, recall_match
from orcmem.service.core import ServiceCore
from orcmem.service.settings import Settings

log = logging.getLogger("orcmem.service")


class Reading(ServiceCore):
    """Finding memories visible to a project; nothing here changes a memory."""

    settings: Settings  # set by MemoryService

    # --- read --------------------------------------------------------------------------------------------------
    def overview(self, project: Project, *, utc_offset_ms: int = 0) -> Overview:
        """What the project remembers: counts by type, source and status, and how it grew."""
        return build_overview(self.store, project, self.clock(), utc_offset_ms=utc_offset_ms)

    def runs_overview(self, project: Project) -> RunsOverview:
        """The project's run summaries and extraction jobs, newest first."""
        return build_runs(self.store, project)

    def memories_by_id(self, memory_ids: Sequence[str]) -> builtins.list[Memory]:
        """The memories with these ids, in the order given (ids of memories since deleted are left out)."""
        return self.store.memories.get_many(memory_ids)

    def get(self, project: Project | None, memory_id: str) -> Memory:
        """A memory visible to the project (its own or a global one).

        Raises:
            ValidationError: the id is not a public memory id.
            NotFoundError: no such memory in this project.
        """
        checked = rules.check_memory_id(memory_id)
        memory = self.store.memories.get(checked)
        if memory is None or not _visible(memory, project):
            raise NotFoundError(f"No memory {checked} in this project.")
        return memory

    def list(self, project: Project | None, flt: MemoryFilter | None = None) -> builtins.list[Memory]:
        """Memories visible to the project, newest update first."""
        checked = _check_filter(flt or MemoryFilter())
        return self.store.memories.list(project.id if project else None, checked)

    def count(self, project: Project | None, flt: MemoryFilter | None = None) -> int:
        """How many memories the filter matches, ignoring limit and offset."""
        checked = _check_filter(flt or MemoryFilter())
        return self.store.memories.count(project.id if project else None, checked)

    def search(
        self,
        project: Project | None,
        text: str,
        limit: int = SEARCH_DEFAULT_LIMIT,
        *,
        semantic: bool | None = None,
        provenances: Sequence[str] = (),
    ) -> builtins.list[SearchHit]:
        """Active memories of the project and global ones that match `text`, best first; never raises on text.

        Words (FTS5) and meaning (vectors) each give up to 40 candidates, fused and scored as docs/search.md says.
        Meaning is used while memory is on (or when `semantic` says so), and only if the query vector arrives
        within 500 ms; otherwise the search answers from words alone. `provenances` keeps only memories whose
        words came from there.
        """
        if not 1 <= limit <= SEARCH_MAX_LIMIT:
            raise ValidationError(f"The search limit must be between 1 and {SEARCH_MAX_LIMIT}.")
        wanted = {rules.check_provenance(value) for value in provenances}
        pending = self._nearest_soon(project, text, SEARCH_CANDIDATES) if self._use_meaning(semantic) else None
        words = self._word_hits(project, text, SEARCH_CANDIDATES)  # runs while the query is embedded and scanned
        near = self._meaning_hits(project, pending, SEARCH_CANDIDATES) if pending else []
        if wanted:
            words = [hit for hit in words if hit.memory.provenance in wanted]
            near = [(memory, similarity) for memory, similarity in near if memory.provenance in wanted]
        hits = rank_candidates([(hit.memory, -hit.rank) for hit in words], near, self.clock(), limit)
        complete = self.store.memories.with_files([hit.memory for hit in hits])
        return [replace(hit, memory=memory) for hit, memory in zip(hits, complete, strict=True)]

    def _word_hits(self, project: Project | None, text: str, limit: int) -> builtins.list[WordHit]:
        match = fts_query(text)
        if match is None:
            return []
        return self.store.memories.search_words(match, project.id if project else None, limit)

    def search_words(self, project: Project | None, text: str, limit: int = SEARCH_CANDIDATES) -> builtins.list[Memory]:
        """Word matches only, best BM25 first (candidates: read without their files)."""
        return [hit.memory for hit in self._word_hits(project, text, limit)]

    def _nearest_soon(self, project: Project | None, text: str, limit: int) -> Future[Scan | None] | None:
        """Start embedding the query and scanning the vectors in the background, or None when meaning cannot be used.

        The in-memory copy of the vectors is refreshed here first, so the background thread needs no database:
        the embedding and the scan release the GIL and, on a second core, overlap the word search.
        """
        embedder = self.embedder
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

    def search_meaning(
        self,
        project: Project | None,
        text: str,
        limit: int = SEARCH_CANDIDATES,
        *,
        pending: Future[Scan | None] | None = None,
    ) -> builtins.list[Memory]:
        """Nearest memories by meaning, closest first, read without their files; empty when the model or vectors
        are unavailable or the query vector is late."""
        pending = pending or self._nearest_soon(project, text, limit)
        if pending is None:
            return []
        return [memory for memory, _similarity in self._meaning_hits(project, pending, limit)]

    def _meaning_hits(
        self, project: Project | None, pending: Future[Scan | None], limit: int
    ) -> builtins.list[tuple[Memory, float]]:
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
        embedder = self.embedder
        if embedder is None or not self.store.vectors.available or not embedder.wait_ready(timeout):
            return False
        self.store.vectors.refresh(embedder.model_id)
        embedder.embed_query_here("orcmem")
        return True

    def _use_meaning(self, semantic: bool | None) -> bool:
        return self.is_enabled() if semantic is None else semantic

    # --- brief and recall -------------------------------------------------------------------------------------
    def brief(self, project: Project | None) -> str:
        """The project brief for a new session; "" when memory is off or nothing is stored."""
        if project is None or not self.is_enabled():
            return ""
        memories = self.list(project, MemoryFilter(statuses=("active",), limit=BRIEF_MEMORY_POOL))
        tasks = self.store.tasks.open_titles(project.id, BRIEF_TASKS)
        items = [
            item for summary in self.store.summaries.recent(project.id, BRIEF_SUMMARIES) for item in summary.open_items
        ]
        return build_brief(memories, tasks, items, self.clock(), self.settings.known_person())

    def recall(
        self,
        canonical_root: str,
        prompt: str,
        *,
        meaning: bool = False,
        min_similarity: float = RECALL_MIN_SIMILARITY,
    ) -> str:
        """The memories that match a prompt, fenced as reference material; "" when off or nothing matches.

        With `meaning`, memories whose cosine similarity to the prompt reaches `min_similarity` join those the
        words found, so a prompt that says the same thing in other words is answered too. Only a process whose
        model has already loaded (the MCP server) uses it: recall never waits for a model.
        """
        rows = self.recall_rows(canonical_root, prompt, meaning=meaning, min_similarity=min_similarity)
        return format_recall(rows, self.clock()) if rows else ""

    def recall_rows(
        self,
        canonical_root: str,
        prompt: str,
        *,
        meaning: bool = False,
        min_similarity: float = RECALL_MIN_SIMILARITY,
        limit: int = RECALL_MAX_MEMORIES,
    ) -> builtins.list[RecallRow]:
        """What `recall` frames, best first (`limit` of them: a session's recall reads more, to pass over those it
        already gave).

        Words alone: the matches that pass the relevance gate. With `meaning` (a process whose model has loaded):
        the memories at least `min_similarity` close to the prompt, fused with the word matches, which count
        ungated when meaning found something (the prompt is about the project) and must pass the stricter
        WARM_RECALL_MIN_TERM_SHARE gate when it found nothing.
        """
        match = recall_match(prompt)
        if match is None:
            return []
        project = self.store.projects.by_root(canonical_root) if meaning else None
        pending = self._nearest_soon(project, prompt, RECALL_CANDIDATES) if meaning and self.model_ready() else None
        if pending is None:
            return recall_by_words(self.store.db.path, canonical_root, prompt, limit) or []
        found = word_candidates(
            self.store.db.path, canonical_root, match, RECALL_CANDIDATES, share=WARM_RECALL_MIN_TERM_SHARE
        )
        if found is None:  # memory is off, or the database is from another version
            pending.cancel()
            return []
        by_words, relevant = found
        by_meaning = self._close_in_meaning(project, pending, min_similarity, RECALL_CANDIDATES)
        if not by_meaning and not relevant:
            return []
        return merge_recall(by_words, by_meaning, RECALL_RRF_K)[:limit]

    def _close_in_meaning(
        self, project: Project | None, pending: Future[Scan | None], min_similarity: float, limit: int
    ) -> builtins.list[RecallRow]:
        """The memories of a pending scan at least `min_similarity` close to the query, closest first (recall
        answers from words alone when the scan is late or fails)."""
        return [
            RecallRow(
                str(m.type),
                m.title,
                m.body,
                str(m.source),
                m.last_confirmed_at,
                m.flagged,
                m.id,
                m.updated_at,
                m.stale_reason,
                str(m.provenance),
            )
            for m, similarity in self._meaning_hits(project, pending, limit)
            if similarity >= min_similarity
        ]


def _visible(memory: Memory, project: Project | None) -> bool:
    return memory.scope is Scope.GLOBAL or (project is not None and memory.project_id == project.id)


def _check_filter(flt: MemoryFilter) -> MemoryFilter:
    if not 1 <= flt.limit <= LIST_MAX_LIMIT:
        raise ValidationError(f"The limit must be between 1 and {LIST_MAX_LIMIT}.")
    if flt.offset < 0:
        raise ValidationError("The offset cannot be negative.")
    return replace(
        flt,
        types=tuple(str(rules.check_type(t)) for t in flt.types),
        sources=tuple(str(rules.check_source(s)) for s in flt.sources),
        provenances=tuple(str(rules.check_provenance(p)) for p in flt.provenances),
        statuses=tuple(str(rules.check_status(s)) for s in flt.statuses),
        scopes=tuple(str(rules.check_scope(s)) for s in flt.scopes),
    )
