"""Retrieval quality on LoCoMo: every dialogue turn is a memory, every question a query (see shared/data/README)."""

from __future__ import annotations

import json
import math
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.common import embedding_source
from orcmem.embed.model_files import ensure_model
from orcmem.embed.worker import worker_embedder
from orcmem.host.workspace import Location
from orcmem.models.constants import FUSION_WORD_WEIGHT, RRF_K, SEARCH_CANDIDATES, SEED_RRF_K
from orcmem.models.types import NewMemory, Project, Source
from orcmem.retrieve.query import query_terms
from orcmem.retrieve.scoring import relative
from orcmem.service.memory_service import MemoryService

KS = (5, 8, 10)


@dataclass(frozen=True)
class Question:
    """One evaluation query and the memories that answer it."""

    project: Project
    text: str
    evidence: frozenset[str]  # memory ids


@dataclass
class Scores:
    """recall_any@k and nDCG@10 of one retriever."""

    name: str
    recall: dict[int, float]
    ndcg10: float


def load(path: Path, svc: MemoryService, work: Path) -> list[Question]:
    """Store every turn of every conversation as a memory (one project per conversation); return the questions."""
    questions: list[Question] = []
    for conversation in json.loads(path.read_text()):
        sample = conversation["sample_id"]
        folder = work / sample
        project = svc.project(Location(str(folder), str(folder), sample))
        dialogue = conversation["conversation"]
        turn_ids: dict[str, str] = {}
        for key, turns in dialogue.items():
            if not (key.startswith("session_") and isinstance(turns, list)):
                continue
            date = dialogue.get(f"{key}_date_time", "")
            for turn in turns:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [image: {turn['blip_caption']}]"
                title = f"{turn['speaker']}, {date}".strip(", ")[:120]
                memory = NewMemory(type="fact", title=title, body=text[:800], source=Source.TOOL)
                turn_ids[turn["dia_id"]] = svc.record(project, memory).memory.id
        for qa in conversation["qa"]:
            if qa.get("category") == 5:
                continue  # adversarial: no answer exists
            evidence = {turn_ids[e] for raw in qa["evidence"] for e in re.split(r"[;,\s]+", raw) if e in turn_ids}
            if evidence:
                questions.append(Question(project, qa["question"], frozenset(evidence)))
    return questions


def score(name: str, questions: Sequence[Question], retrieve: Callable[[Question], list[str]]) -> Scores:
    """Evaluate one retriever."""
    hits = {k: 0 for k in KS}
    ndcg_total = 0.0
    for question in questions:
        ranked = retrieve(question)[:10]
        for k in KS:
            hits[k] += any(memory_id in question.evidence for memory_id in ranked[:k])
        dcg = sum(1 / math.log2(i + 2) for i, memory_id in enumerate(ranked) if memory_id in question.evidence)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(question.evidence), 10)))
        ndcg_total += dcg / ideal
    return Scores(name, {k: hits[k] / len(questions) for k in KS}, ndcg_total / len(questions))


def word_scores(svc: MemoryService, question: Question, terms: list[str]) -> dict[str, float]:
    """The 40 best BM25 matches of the terms (negated BM25, higher is better), best first."""
    if not terms:
        return {}
    quoted = [f'"{t}"' for t in terms]
    quoted[-1] += "*"
    hits = svc.store.memories.search_words(" OR ".join(quoted), question.project.id, SEARCH_CANDIDATES)
    return {hit.memory.id: -hit.rank for hit in hits}


def open_locomo(path: Path, work: Path) -> tuple[MemoryService, list[Question]]:
    """A service in `work` holding every LoCoMo turn as an embedded memory, with the model loaded; its questions."""
    models = work / "models"
    ensure_model(models, embedding_source())
    svc = MemoryService.open(work / "home")
    svc.settings.set_enabled(True)
    svc.settings.set_embedding_model(embedding_source().pins.model_id)
    questions = load(path, svc, work)
    embedder = worker_embedder(models, embedding_source())
    embedder.wait_ready(60)
    svc.use_embedder(embedder)
    svc.reindex()
    return svc, questions


def run(path: Path, work: Path | None = None) -> tuple[list[Scores], int, CrossValidation]:
    """Every retriever's scores, the number of questions, and the cross-validated choice of the word weight."""
    svc, questions = open_locomo(path, work or Path(tempfile.mkdtemp(prefix="orcmem-locomo-")))
    embedder = svc.embedder
    assert embedder is not None
    meaning_cache: dict[str, dict[str, float]] = {}

    def meaning(question: Question) -> dict[str, float]:
        """The 40 nearest memories' cosine similarity, closest first."""
        if question.text not in meaning_cache:
            # The query vector gets a generous limit here: quality is measured, not latency.
            vector = embedder.embed_query(question.text, timeout=30)
            hits = svc.store.vectors.nearest(vector, embedder.model_id, question.project.id, SEARCH_CANDIDATES)
            meaning_cache[question.text] = {hit.memory_id: 1 - hit.distance for hit in hits}
        return meaning_cache[question.text]

    def searched(question: Question) -> list[str]:
        """The shipped search, as `orcmem search` runs it (its model already loaded)."""
        return [hit.memory.id for hit in svc.search.hits(question.project, question.text, 10)]

    def by_rank(words: dict[str, float], question: Question, k: int) -> list[str]:
        return rrf_ids([list(words), list(meaning(question))], k)

    seed_words = lambda q: word_scores(svc, q, query_terms(q.text, drop_function_words=False))  # noqa: E731
    words = lambda q: word_scores(svc, q, query_terms(q.text))  # noqa: E731
    results = [
        score("words", questions, lambda q: list(words(q))),
        score("meaning", questions, lambda q: list(meaning(q))),
        score(f"fused search (scores, words weighted {FUSION_WORD_WEIGHT})", questions, searched),
        score(f"fused by reciprocal rank, k = {RRF_K} (before)", questions, lambda q: by_rank(words(q), q, RRF_K)),
        score(f"fused with the seed's RRF k = {SEED_RRF_K}", questions, lambda q: by_rank(words(q), q, SEED_RRF_K)),
        score("words, the seed's query (function words kept)", questions, lambda q: list(seed_words(q))),
        score(
            f"fused, the seed's query and k = {SEED_RRF_K}",
            questions,
            lambda q: by_rank(seed_words(q), q, SEED_RRF_K),
        ),
    ]
    cross = cross_validated_weight(questions, words, meaning)
    svc.close()
    return results, len(questions), cross


@dataclass
class CrossValidation:
    """The word weight chosen on four conversations and tested on the fifth, in turn."""

    choices: dict[str, float]  # held-out conversation -> the weight chosen without it
    recall8: float  # over every held-out question
    ndcg10: float
    words_recall8: float  # words alone, the same questions


def cross_validated_weight(
    questions: Sequence[Question],
    words: Callable[[Question], dict[str, float]],
    meaning: Callable[[Question], dict[str, float]],
    weights: Sequence[float] = (0.4, 0.5, 0.6, 0.7, 0.8),
) -> CrossValidation:
    """Leave one conversation out: pick the word weight by recall@8 on the others, score the held-out one with it."""
    lists = {id(q): (words(q), meaning(q)) for q in questions}

    def ranked(q: Question, weight: float | None) -> list[str]:
        word_values, meaning_values = lists[id(q)]
        return list(word_values)[:10] if weight is None else convex_ids(word_values, meaning_values, weight)

    def recall8(subset: Sequence[Question], weight: float | None) -> float:
        return sum(any(m in q.evidence for m in ranked(q, weight)[:8]) for q in subset) / len(subset)

    choices: dict[str, float] = {}
    held: list[Question] = []
    chosen: dict[int, float] = {}
    for project in sorted({q.project.name for q in questions}):
        rest = [q for q in questions if q.project.name != project]
        weight = max(weights, key=lambda w: recall8(rest, w))
        choices[project] = weight
        for q in questions:
            if q.project.name == project:
                held.append(q)
                chosen[id(q)] = weight
    scored = score("held out", held, lambda q: ranked(q, chosen[id(q)]))
    return CrossValidation(choices, scored.recall[8], scored.ndcg10, recall8(held, None))


def convex_ids(words: Mapping[str, float], meaning: Mapping[str, float], weight: float) -> list[str]:
    """The shipped fusion of two scored candidate lists (`retrieve.scoring.fuse`, without type, confidence and
    recency): the ten best ids."""
    by_words, by_meaning = relative(words), relative(meaning)
    fused = {
        key: weight * by_words.get(key, 0.0) + (1 - weight) * by_meaning.get(key, 0.0)
        for key in {**by_words, **by_meaning}
    }
    return sorted(fused, key=lambda key: -fused[key])[:10]


def rrf_ids(lists: Sequence[Sequence[str]], k: int) -> list[str]:
    """Plain reciprocal rank fusion of ranked id lists."""
    scores: dict[str, float] = {}
    for ranked in lists:
        for position, memory_id in enumerate(ranked, start=1):
            scores[memory_id] = scores.get(memory_id, 0.0) + 1.0 / (k + position)
    return sorted(scores, key=lambda memory_id: -scores[memory_id])[:10]
