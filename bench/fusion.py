"""Search quality variants: how the word (BM25) and meaning (cosine) candidates are fused, title weight, pseudo
relevance feedback. Each is scored on the same 40 + 40 candidates, on the LoCoMo dev conversations and on coding
requests written about one stored memory (bench.precision's set). `python -m bench.fusion`; `python -m bench`
reports it.
"""

from __future__ import annotations

import re
import statistics
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import orcmem.store.memories as memories_store
from bench.locomo import Question, Scores, open_locomo, score
from orcmem.models.constants import FTS_TITLE_WEIGHT, FUSION_WORD_WEIGHT, RRF_K, SEARCH_CANDIDATES
from orcmem.models.types import MemoryFilter, NewMemory
from orcmem.retrieve.query import query_terms
from orcmem.service.memory_service import MemoryService

Candidates = dict[str, float]  # memory id -> score, higher is better
TARGET_RECALL8, TARGET_NDCG = 0.77, 0.54
_WORD = re.compile(r"[a-z][a-z']{2,}")
# Words pseudo relevance feedback never adds (too common in conversation to say what a turn is about).
_STOP = frozenset(
    "the and for with was are were been that this you she they your his her our their him them from but not "
    "have has had just also very really too what when where who why how which there here can could would should "
    "will about into out some any all yes".split()
)


@dataclass(frozen=True)
class CodingScores:
    """How early one fusion puts the memory a coding request was written about."""

    first: float  # share of requests with it first
    top8: float  # in the first eight
    mrr: float  # mean reciprocal rank (0 past the tenth)


@dataclass(frozen=True)
class FusionResult:
    """Each variant's scores, the shipped fusion first."""

    scores: list[Scores]
    questions: int
    coding: dict[str, CodingScores]  # variant name -> its coding figures (variants that need no LoCoMo text)
    requests: int
    memories: int


def _normalized(values: Candidates, how: str) -> Candidates:
    if not values:
        return {}
    if how == "z":
        mean, spread = statistics.fmean(values.values()), statistics.pstdev(values.values()) or 1.0
        return {key: (value - mean) / spread for key, value in values.items()}
    low, high = min(values.values()), max(values.values())
    return {key: (value - low) / (high - low) if high > low else 1.0 for key, value in values.items()}


def convex(words: Candidates, meaning: Candidates, weight: float, how: str) -> list[str]:
    """a × normalized BM25 + (1 − a) × normalized cosine; a memory missing from a list gets that list's lowest."""
    by_words, by_meaning = _normalized(words, how), _normalized(meaning, how)
    floor_words, floor_meaning = min(by_words.values(), default=0.0), min(by_meaning.values(), default=0.0)
    return sorted(
        set(by_words) | set(by_meaning),
        key=lambda key: -(weight * by_words.get(key, floor_words) + (1 - weight) * by_meaning.get(key, floor_meaning)),
    )


def weighted_rrf(words: Candidates, meaning: Candidates, k: int, meaning_weight: float) -> list[str]:
    """Reciprocal rank fusion with the meaning list's share weighted."""
    fused: Counter[str] = Counter()
    for rank, key in enumerate(sorted(words, key=lambda key: -words[key]), start=1):
        fused[key] += 1 / (k + rank)
    for rank, key in enumerate(sorted(meaning, key=lambda key: -meaning[key]), start=1):
        fused[key] += meaning_weight / (k + rank)
    return [key for key, _ in fused.most_common()]


Fusion = Callable[[Candidates, Candidates], list[str]]
FUSIONS: tuple[tuple[str, Fusion], ...] = (
    (f"shipped: convex, min-max, words {FUSION_WORD_WEIGHT}", lambda w, m: convex(w, m, FUSION_WORD_WEIGHT, "minmax")),
    (f"before: RRF k = {RRF_K}, equal weights", lambda w, m: weighted_rrf(w, m, RRF_K, 1.0)),
    ("RRF k = 5", lambda w, m: weighted_rrf(w, m, 5, 1.0)),
    ("RRF k = 10, meaning weighted 0.6", lambda w, m: weighted_rrf(w, m, 10, 0.6)),
    ("convex, min-max, words 0.5", lambda w, m: convex(w, m, 0.5, "minmax")),
    ("convex, z-score, words 0.5", lambda w, m: convex(w, m, 0.5, "z")),
    ("convex, z-score, words 0.6", lambda w, m: convex(w, m, 0.6, "z")),
    ("z-scored BM25 + 20 × cosine", lambda w, m: z_words_plus_cosine(w, m, 20.0)),
)
CODING_MEMORIES = 10_000


def z_words_plus_cosine(words: Candidates, meaning: Candidates, scale: float) -> list[str]:
    """BM25 z-scored among its candidates (it is not comparable across queries) plus raw cosine × `scale`."""
    by_words = _normalized(words, "z")
    floor_words, floor_meaning = min(by_words.values(), default=0.0), min(meaning.values(), default=0.0)
    return sorted(
        set(by_words) | set(meaning),
        key=lambda key: -(by_words.get(key, floor_words) + scale * meaning.get(key, floor_meaning)),
    )


@dataclass(frozen=True)
class CodingRequest:
    """One request about a stored memory: its candidates by words and by meaning, and the memory's id."""

    words: Candidates
    meaning: Candidates
    answer: str


def coding_requests(work: Path) -> list[CodingRequest]:
    """bench.precision's requests about one of 10,000 synthetic coding memories, with their 40 + 40 candidates."""
    from bench.common import embedded_service, profile_with_memories, synthetic_memories
    from bench.precision import ABOUT_PROMPTS, prompts_about_memories

    home, project_dir = work / "home", work / "project"
    profile_with_memories(home, project_dir, CODING_MEMORIES)
    memories = synthetic_memories(CODING_MEMORIES)
    svc = embedded_service(home)
    embedder = svc.embedder
    assert embedder is not None
    project = svc.store.projects.by_root(str(project_dir.resolve()))
    assert project is not None
    ids = {(m.title, m.body): m.id for m in svc.store.memories.list(project.id, _all_active())}
    requests = []
    for text, index in prompts_about_memories(ABOUT_PROMPTS, memories):
        vector = embedder.embed_query(text, timeout=30)
        hits = svc.store.vectors.nearest(vector, embedder.model_id, project.id, SEARCH_CANDIDATES)
        words = _words_in(svc, project.id, query_terms(text))
        requests.append(CodingRequest(words, {h.memory_id: 1 - h.distance for h in hits}, ids[_key(memories[index])]))
    svc.close()
    return requests


def coding_scores(requests: list[CodingRequest], rank: Fusion) -> CodingScores:
    """Where one fusion puts each request's memory."""
    places = []
    for request in requests:
        ranked = rank(request.words, request.meaning)[:10]
        places.append(ranked.index(request.answer) + 1 if request.answer in ranked else None)
    count = len(requests)
    return CodingScores(
        sum(p == 1 for p in places) / count,
        sum(p is not None and p <= 8 for p in places) / count,
        sum(1 / p for p in places if p is not None) / count,
    )


def run(path: Path, work: Path | None = None) -> FusionResult:
    """Score every variant on the LoCoMo questions."""
    work_folder = work or Path(tempfile.mkdtemp(prefix="orcmem-bench-fusion-"))
    svc, questions = open_locomo(path, work_folder / "locomo")
    embedder = svc.embedder
    assert embedder is not None
    meaning: dict[int, Candidates] = {}
    for number, question in enumerate(questions):
        vector = embedder.embed_query(question.text, timeout=30)
        hits = svc.store.vectors.nearest(vector, embedder.model_id, question.project.id, SEARCH_CANDIDATES)
        meaning[number] = {hit.memory_id: 1 - hit.distance for hit in hits}
    words = {weight: _word_candidates(svc, questions, weight) for weight in (FTS_TITLE_WEIGHT, 1.0)}
    shipped_words = words[FTS_TITLE_WEIGHT]
    feedback = {n: _with_feedback(svc, q, shipped_words[n], meaning[n]) for n, q in enumerate(questions)}
    number_of = {id(question): number for number, question in enumerate(questions)}

    def scored(name: str, rank: Callable[[int], list[str]]) -> Scores:
        return score(name, questions, lambda question: rank(number_of[id(question)]))

    variants = [(name, rank) for name, rank in FUSIONS]
    scores = [scored(name, lambda n, rank=rank: rank(shipped_words[n], meaning[n])) for name, rank in variants]
    scores += [
        scored("title weight 1 (not 2), convex z-score 0.5", lambda n: convex(words[1.0][n], meaning[n], 0.5, "z")),
        scored(
            "feedback: 5 terms of the top 3, convex min-max 0.6",
            lambda n: convex(feedback[n], meaning[n], 0.6, "minmax"),
        ),
    ]
    svc.close()
    requests = coding_requests(work_folder / "coding")
    coding = {name: coding_scores(requests, rank) for name, rank in FUSIONS}
    return FusionResult(scores, len(questions), coding, len(requests), CODING_MEMORIES)


def _word_candidates(svc: MemoryService, questions: list[Question], title_weight: float) -> dict[int, Candidates]:
    """The 40 best BM25 matches of each question (negated BM25, higher is better) with the title so weighted."""
    shipped = memories_store.FTS_TITLE_WEIGHT
    memories_store.FTS_TITLE_WEIGHT = title_weight  # read by search_words' SQL at each call
    try:
        return {n: _words(svc, question, query_terms(question.text)) for n, question in enumerate(questions)}
    finally:
        memories_store.FTS_TITLE_WEIGHT = shipped


def _words(svc: MemoryService, question: Question, terms: list[str]) -> Candidates:
    return _words_in(svc, question.project.id, terms)


def _words_in(svc: MemoryService, project_id: str, terms: list[str]) -> Candidates:
    if not terms:
        return {}
    quoted = [f'"{term}"' for term in terms]
    quoted[-1] += "*"
    hits = svc.store.memories.search_words(" OR ".join(quoted), project_id, SEARCH_CANDIDATES)
    return {hit.memory.id: -hit.rank for hit in hits}


def _key(memory: NewMemory) -> tuple[str, str]:
    return memory.title, memory.body


def _all_active() -> MemoryFilter:
    return MemoryFilter(statuses=("active",), limit=CODING_MEMORIES)  # the store reads past the tools' page limit


def _with_feedback(svc: MemoryService, question: Question, words: Candidates, meaning: Candidates) -> Candidates:
    """The word scores plus 0.3 × those of a second query made of the 5 commonest new words of the top 3 fused."""
    top = convex(words, meaning, 0.6, "minmax")[:3]
    asked = set(query_terms(question.text))
    counts: Counter[str] = Counter()
    for memory in svc.store.memories.get_many(top):
        counts.update(w for w in _WORD.findall(memory.body.lower()) if w not in _STOP and w not in asked)
    extra = _words(svc, question, [word for word, _ in counts.most_common(5)])
    return {key: words.get(key, 0.0) + 0.3 * extra.get(key, 0.0) for key in set(words) | set(extra)}


def render(r: FusionResult) -> list[str]:
    """The report section."""
    shipped = r.scores[0]
    recall_met = "met" if shipped.recall[8] >= TARGET_RECALL8 else "**missed**"
    ndcg_met = "met" if shipped.ndcg10 >= TARGET_NDCG else "**missed**"

    def coding(name: str) -> str:
        c = r.coding.get(name)
        return "| | |" if c is None else f"{c.first:.3f} | {c.top8:.3f} | {c.mrr:.3f} |"

    lines = [
        "## Search quality: what was tried",
        "",
        "The fused search's candidates (40 by words, 40 by meaning) fused each way below (`python -m bench.fusion`):",
        f"for the {r.questions} LoCoMo dev questions (recall@k, nDCG@10), and for {r.requests} coding requests each",
        f"written about one of {r.memories:,} stored memories (bench.precision's *about a memory* set: the share",
        "with that memory first, in the first eight, and the mean reciprocal rank). Type, confidence and recency,",
        "which multiply the fused value in search, are equal here.",
        "",
        "| variant | recall@5 | recall@8 | recall@10 | nDCG@10 | coding: first | in 8 | MRR |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *[
            f"| {s.name} | {s.recall[5]:.3f} | {s.recall[8]:.3f} | {s.recall[10]:.3f} | {s.ndcg10:.3f} | "
            + coding(s.name)
            for s in r.scores
        ],
        "",
        f"- Search fuses scores: {FUSION_WORD_WEIGHT} × BM25 + {1 - FUSION_WORD_WEIGHT:.1f} × cosine, each min-max",
        "  scaled among its own candidates (*relative score fusion*). It puts the most coding memories first and",
        "  has the best MRR there, and beats reciprocal ranks on every LoCoMo figure; the z-scored variants lead",
        "  on LoCoMo's recall@8 but put fewer coding memories first, which is what an agent reads.",
        f"- LoCoMo targets: recall@8 at least {TARGET_RECALL8}: {recall_met} ({shipped.recall[8]:.3f}); nDCG@10 at "
        f"least {TARGET_NDCG}: {ndcg_met} ({shipped.ndcg10:.3f}).",
        "- Title weight 1 and pseudo relevance feedback by words measured no better than the same fusion without",
        "  them. Tried outside this module on the same candidates and dropped (convex z-score 0.5 as the base,",
        "  0.758 / 0.539): feedback in vector space (the query plus 0.3 to 0.6 × the mean of the top 1 to 5",
        "  memories' vectors) 0.743 to 0.754 recall@8; diversity among the top ten (MMR, lambda 0.7 to 0.9)",
        "  0.755 to 0.758; embedding the body without the title, 0.725. Dates: each LoCoMo memory's date is in",
        "  its title already (`speaker, session date`), so words and meaning both see it.",
        "",
    ]
    return lines


def main() -> None:
    """Print the section."""
    from bench.precision import DEFAULT_LOCOMO

    print("\n".join(render(run(DEFAULT_LOCOMO))))


if __name__ == "__main__":
    main()
