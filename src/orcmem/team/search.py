"""Search a shared project in the team's database: the same words, meaning, fusion and score as local search, run
where the team's memories are (for pools too large to copy); the query is embedded here."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from orcmem.models.constants import QUERY_EMBED_TIMEOUT_S, SEARCH_CANDIDATES
from orcmem.models.errors import TeamError
from orcmem.models.types import Memory, provenance_seen_by
from orcmem.retrieve.query import query_terms
from orcmem.retrieve.scoring import rank_candidates
from orcmem.team.sync import open_team
from orcmem.text.redact import redact

if TYPE_CHECKING:
    from orcmem.models.types import Memory, Project, SearchHit
    from orcmem.service.memory_service import MemoryService


def search_team(svc: MemoryService, project: Project, text: str, limit: int) -> list[SearchHit]:
    """The team's active memories of a shared project that match `text`, best first, redacted.

    Raises:
        TeamError: the project is not shared, or the team's database cannot be reached.
    """
    shared = next((p for p in svc.team.shared() if p.project_id == project.id), None)
    if shared is None:
        raise TeamError("This project is not shared with a team (orcmem team share).")
    vector = None
    if svc.embedder is not None and svc.model_ready():
        vector = svc.embedder.embed_query(text, timeout=QUERY_EMBED_TIMEOUT_S)
    server = open_team(svc)
    try:
        words = server.search_words(shared.team_key, project.id, query_terms(text), SEARCH_CANDIDATES)
        near = []
        if vector is not None:
            near = server.search_meaning(
                shared.team_key, project.id, vector, svc.settings.embedding_model(), SEARCH_CANDIDATES
            )
    finally:
        server.close()
    hits = rank_candidates(words, near, svc.clock(), limit)
    person = svc.settings.person()
    return [replace(hit, memory=_as_seen(_redacted(hit.memory), person)) for hit in hits]


def _redacted(memory: Memory) -> Memory:
    """A memory read from the pool, redacted as a pulled one is (the pool may hold what no profile redacted)."""
    topic = None if memory.topic_key is None else redact(memory.topic_key)
    files = tuple(redact(path) for path in memory.files)
    return replace(memory, title=redact(memory.title), body=redact(memory.body), topic_key=topic, files=files)


def _as_seen(memory: Memory, person: str | None) -> Memory:
    """A team memory with the provenance this profile shows: a teammate's when another person's words."""
    seen = provenance_seen_by(str(memory.provenance), str(memory.source), memory.author, person)
    return replace(memory, provenance=seen)
