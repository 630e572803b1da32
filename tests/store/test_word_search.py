"""Word search reads a window of the best BM25 matches first; it must give what a full join of every match gives."""

from __future__ import annotations

import random

from orcmem.host.workspace import Location
from orcmem.models.types import NewMemory, Source
from orcmem.service.memory_service import MemoryService
from orcmem.store.memories import WORD_WINDOW_FACTOR

WORDS = ["cache", "vitest", "pool", "forks", "timeout", "docker", "build", "flaky", "port", "migrate"]


def full_join(service: MemoryService, match: str, project_id: str, limit: int) -> list[str]:
    """The reference: every match joined with its memory, then filtered, ranked and cut."""
    rows = service.store.db.query(
        "SELECT m.id FROM memories_fts JOIN memories m ON m.pk = memories_fts.rowid "
        "WHERE memories_fts MATCH ? AND m.status = 'active' AND (m.project_id = ? OR m.scope = 'global') "
        "ORDER BY bm25(memories_fts, 2.0, 1.0), m.updated_at DESC LIMIT ?",  # FTS_TITLE_WEIGHT, FTS_BODY_WEIGHT
        (match, project_id, limit),
    )
    return [row[0] for row in rows]


def test_the_window_and_the_fallback_agree_with_a_full_join(service: MemoryService, tmp_path) -> None:
    rng = random.Random(3)
    mine = service.project(Location(str(tmp_path / "a"), str(tmp_path / "a"), "a"))
    other = service.project(Location(str(tmp_path / "b"), str(tmp_path / "b"), "b"))
    with service.store.db.transaction():
        # Most matches belong to the other project, so the window often holds too few of ours: both paths run.
        for i in range(600):
            words = " ".join(rng.choices(WORDS, k=rng.randint(3, 9)))
            target = mine if i % 7 == 0 else other
            memory = NewMemory(type="lesson", title=f"{words} {i}", body=f"{words} case {i}", source=Source.AGENT)
            service.record(target, memory, embed=False)
    retracted = service.search.words(mine, "cache", 1)[0]
    service.feedback(mine, retracted.id, "wrong")
    for match in ['"cache"', '"pool" OR "forks"', '"flaky" OR "port" OR "build"', '"migrate" OR "docker*"']:
        for limit in (1, 5, 40):
            got = [hit.memory.id for hit in service.store.memories.search_words(match, mine.id, limit)]
            assert got == full_join(service, match, mine.id, limit), (match, limit)
            assert retracted.id not in got
    assert WORD_WINDOW_FACTOR >= 2
