"""Retrieval quality on LoCoMo: every dialogue turn is a memory, every question a query (see shared/data/README)."""

from __future__ import annotations

import json
import math
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.common import embedding_source
from orcmem.embed.model_files import ensure_model
from orcmem.embed.worker import worker_embedder
from orcmem.models.constants import RRF_K, SEARCH_CANDIDATES, SEED_RRF_K
from orcmem.models.types import Memory, NewMemory, Project, Source
from orcmem.retrieve.query import query_terms
from orcmem.retrieve.scoring import cap_per_run, fuse
from orcmem.service.memory_service import MemoryService
from orcmem.workspace import Location

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


def _words(svc: MemoryService, question: Question, terms: list[str]) -> list[Memory]:
    if not terms:
        return []
    quoted = [f'"{t}"' for t in terms]
    quoted[-1] += "*"
    return [
        h.memory for h in svc.store.memories.search_words(" OR ".join(quoted), question.project.id, SEARCH_CANDIDATES)
    ]


def open_locomo(path: Path, work: Path) -> tuple[MemoryService, list[Question]]:
    """A service in `work` holding every LoCoMo turn as an embedded memory, with the model loaded; its questions."""
    models = work / "models"
    ensure_model(models, embedding_source())
    svc = MemoryService.open(work / "home")
    svc.set_enabled(True)
    svc.set_embedding_model(embedding_source().pins.model_id)
    questions = load(path, svc, work)
    embedder = worker_embedder(models, embedding_source())
    embedder.wait_ready(60)
    svc.use_embedder(embedder)
    svc.reindex()
    return svc, questions


def run(path: Path, work: Path | None = None) -> tuple[list[Scores], int, CrossValidation]:
    """Every retriever's scores, the number of questions, and the cross-validated choice of RRF k."""
    svc, questions = open_locomo(path, work or Path(tempfile.mkdtemp(prefix="orcmem-locomo-")))
    embedder = svc.embedder
    assert embedder is not None
    meaning_cache: dict[str, list[Memory]] = {}

    def meaning(question: Question) -> list[Memory]:
        if question.text not in meaning_cache:
            # The query vector gets a generous limit here: quality is measured, not latency.
            vector = embedder.embed_query(question.text, timeout=30)
            hits = svc.store.vectors.nearest(vector, embedder.model_id, question.project.id, SEARCH_CANDIDATES)
            meaning_cache[question.text] = svc.store.memories.get_many([h.memory_id for h in hits])
        return meaning_cache[question.text]

    def fused(words: list[Memory], question: Question, k: int = RRF_K) -> list[str]:
        return [h.memory.id for h in cap_per_run(fuse(words, meaning(question), svc.clock(), k=k), 10)]

    seed_words = lambda q: _words(svc, q, query_terms(q.text, drop_function_words=False))  # noqa: E731
    words = lambda q: _words(svc, q, query_terms(q.text))  # noqa: E731
    results = [
        score("words", questions, lambda q: [m.id for m in words(q)]),
        score("meaning", questions, lambda q: [m.id for m in meaning(q)]),
        score(f"fused (RRF k = {RRF_K})", questions, lambda q: fused(words(q), q)),
        score(f"fused with the seed's RRF k = {SEED_RRF_K}", questions, lambda q: fused(words(q), q, SEED_RRF_K)),
        score("variant: fused with RRF k = 5", questions, lambda q: fused(words(q), q, 5)),
        score("words, the seed's query (function words kept)", questions, lambda q: [m.id for m in seed_words(q)]),
        score(
            f"fused, the seed's query and k = {SEED_RRF_K}",
            questions,
            lambda q: fused(seed_words(q), q, SEED_RRF_K),
        ),
    ]
    cross = cross_validated_k(questions, lambda q: [m.id for m in words(q)], lambda q: [m.id for m in meaning(q)])
    svc.close()
    return results, len(questions), cross


@dataclass
class CrossValidation:
    """RRF k chosen on four conversations and tested on the fifth, in turn."""

    choices: dict[str, int]  # held-out conversation -> the k chosen without it
    recall8: float  # over every held-out question
    words_recall8: float  # words alone, the same questions


def cross_validated_k(
    questions: Sequence[Question],
    words: Callable[[Question], list[str]],
    meaning: Callable[[Question], list[str]],
    ks: Sequence[int] = (10, 20, 30, 60),
) -> CrossValidation:
    """Leave one conversation out: pick k by recall@8 on the others, score the held-out one with it."""
    lists = {id(q): (words(q), meaning(q)) for q in questions}

    def recall8(subset: Sequence[Question], k: int | None) -> float:
        found = 0
        for q in subset:
            word_ids, meaning_ids = lists[id(q)]
            ranked = word_ids if k is None else rrf_ids([word_ids, meaning_ids], k)
            found += any(memory_id in q.evidence for memory_id in ranked[:8])
        return found / len(subset)

    choices: dict[str, int] = {}
    held_hits = words_hits = 0.0
    for project in sorted({q.project.name for q in questions}):
        held = [q for q in questions if q.project.name == project]
        rest = [q for q in questions if q.project.name != project]
        k = max(ks, key=lambda k: recall8(rest, k))
        choices[project] = k
        held_hits += recall8(held, k) * len(held)
        words_hits += recall8(held, None) * len(held)
    return CrossValidation(choices, held_hits / len(questions), words_hits / len(questions))


def rrf_ids(lists: Sequence[Sequence[str]], k: int) -> list[str]:
    """Plain reciprocal rank fusion of ranked id lists."""
    scores: dict[str, float] = {}
    for ranked in lists:
        for position, memory_id in enumerate(ranked, start=1):
            scores[memory_id] = scores.get(memory_id, 0.0) + 1.0 / (k + position)
    return sorted(scores, key=lambda memory_id: -scores[memory_id])[:10]
