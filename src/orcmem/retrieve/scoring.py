"""The score formula of docs/search.md: fused relevance × type weight × confidence × recency × freshness."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from orcmem.models.constants import (
    FUSION_WORD_WEIGHT,
    MAX_RESULTS_PER_RUN,
    MS_PER_DAY,
    POSSIBLY_STALE_FACTOR,
    RECENCY_HALF_LIFE_DAYS,
    SEARCH_MEANING_ONLY_MIN_SIMILARITY,
    TYPE_WEIGHTS,
)
from orcmem.models.types import Memory, ScoreParts, SearchHit


def recency_factor(last_confirmed_at: int, now: int, half_life_days: float = RECENCY_HALF_LIFE_DAYS) -> float:
    """The recency factor of docs/search.md: a floor plus a share that halves every half-life."""
    days = max(0.0, (now - last_confirmed_at) / MS_PER_DAY)
    return 0.4 + 0.6 * math.pow(0.5, days / half_life_days)


def relative(values: Mapping[str, float]) -> dict[str, float]:
    """Each value min-max scaled to 0..1 among these candidates (all 1.0 when they are equal)."""
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    if high <= low:
        return dict.fromkeys(values, 1.0)
    return {key: (value - low) / (high - low) for key, value in values.items()}


def fuse(
    word_list: Sequence[Memory],
    meaning_list: Sequence[Memory],
    now: int,
    *,
    word_scores: Mapping[str, float],
    similarities: Mapping[str, float],
    word_weight: float = FUSION_WORD_WEIGHT,
) -> list[SearchHit]:
    """Fuse the word and meaning candidates by their scores and score every memory, best first.

    `word_scores` (BM25, higher is better) and `similarities` (cosine) by memory id are each scaled to 0..1 among
    their list's candidates; the fused value is `word_weight` × the words' + the rest × the meaning's, a list that
    did not find a memory giving it 0. The lists' orders give the ranks --explain shows.
    """
    memories: dict[str, Memory] = {}
    word_rank: dict[str, int] = {}
    meaning_rank: dict[str, int] = {}
    for ranks, ranked in ((word_rank, word_list), (meaning_rank, meaning_list)):
        for position, memory in enumerate(ranked, start=1):
            if memory.id not in ranks:
                ranks[memory.id] = position
                memories.setdefault(memory.id, memory)
    by_words = relative({key: value for key, value in word_scores.items() if key in word_rank})
    by_meaning = relative({key: value for key, value in similarities.items() if key in meaning_rank})
    hits: list[SearchHit] = []
    for memory_id, memory in memories.items():
        fused = word_weight * by_words.get(memory_id, 0.0) + (1 - word_weight) * by_meaning.get(memory_id, 0.0)
        type_weight = TYPE_WEIGHTS.get(str(memory.type), 1.0)
        confidence = 0.5 + memory.confidence / 2
        recency = recency_factor(memory.last_confirmed_at, now)
        freshness = POSSIBLY_STALE_FACTOR if memory.stale_reason else 1.0
        score = fused * type_weight * confidence * recency * freshness
        parts = ScoreParts(
            word_rank=word_rank.get(memory_id),
            meaning_rank=meaning_rank.get(memory_id),
            fused=fused,
            type_weight=type_weight,
            confidence_factor=confidence,
            recency_factor=recency,
            score=score,
            freshness_factor=freshness,
            word_score=word_scores.get(memory_id),
            similarity=similarities.get(memory_id),
        )
        hits.append(SearchHit(memory, score, parts))
    hits.sort(key=lambda hit: (-hit.score, -hit.memory.updated_at))
    return hits


def rank_candidates(
    words: Sequence[tuple[Memory, float]],
    near: Sequence[tuple[Memory, float]],
    now: int,
    limit: int,
    meaning_only_floor: float = SEARCH_MEANING_ONLY_MIN_SIMILARITY,
) -> list[SearchHit]:
    """Search's ranking of its candidates (BM25 relevance, higher is better; cosine similarity): a memory only
    meaning found must be at least `meaning_only_floor` close, else any query, however far off, fills the list;
    then fused, scored and capped per run, best first."""
    word_ids = {memory.id for memory, _score in words}
    near = [
        (memory, similarity) for memory, similarity in near if memory.id in word_ids or similarity >= meaning_only_floor
    ]
    fused = fuse(
        [memory for memory, _score in words],
        [memory for memory, _similarity in near],
        now,
        word_scores={memory.id: score for memory, score in words},
        similarities={memory.id: similarity for memory, similarity in near},
    )
    return cap_per_run(fused, limit)


def cap_per_run(hits: Sequence[SearchHit], limit: int, per_run: int = MAX_RESULTS_PER_RUN) -> list[SearchHit]:
    """Keep at most `per_run` hits from any one run (a memory without a run counts alone), up to `limit`."""
    taken: dict[str, int] = {}
    result: list[SearchHit] = []
    for hit in hits:
        key = hit.memory.source_run_id or hit.memory.id
        if taken.get(key, 0) >= per_run:
            continue
        taken[key] = taken.get(key, 0) + 1
        result.append(hit)
        if len(result) == limit:
            break
    return result
