"""Search latency at 1k / 10k / 100k memories, record throughput and bulk embedding throughput."""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import Latency, embedding_source, latency, queries, synthetic_memories, time_call
from orcmem.embed.embedder import load_embedder
from orcmem.embed.model_files import ensure_model
from orcmem.embed.worker import worker_embedder
from orcmem.host.workspace import Location
from orcmem.models.constants import SEARCH_CANDIDATES
from orcmem.models.types import NewMemory
from orcmem.retrieve.query import query_terms
from orcmem.service.memory_service import MemoryService


@dataclass
class SizeResult:
    """Figures for one database size."""

    size: int
    record_per_s: float
    db_bytes: int
    words: Latency
    words_seed_query: Latency
    query_embedding: Latency
    meaning_numpy: Latency
    meaning_sqlite_vec: Latency
    fused: Latency


@dataclass
class EmbeddingRate:
    """Bulk embedding throughput for one kind of text."""

    label: str
    texts: int
    mean_tokens: float
    per_second: float


def _mean_tokens(texts: list[str], models: Path) -> float:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(models / embedding_source().pins.name / "tokenizer.json"))
    tokenizer.no_padding()
    sample = texts[:2000]
    return sum(len(encoding.ids) for encoding in tokenizer.encode_batch(sample)) / len(sample)


def _embed_all(texts: list[str], model) -> tuple[list[list[float]], float]:
    """Vectors for every text in batches of 32, and the throughput (texts per second)."""
    started = time.perf_counter()
    vectors: list[list[float]] = []
    for start in range(0, len(texts), 32):
        vectors.extend(model.embed_documents(texts[start : start + 32]) or [])
    return vectors, len(texts) / (time.perf_counter() - started)


def run(sizes: list[int], work: Path | None = None) -> tuple[list[SizeResult], list[EmbeddingRate]]:
    """Build one database per size and measure; returns per-size results and bulk embedding rates."""
    work = work or Path(tempfile.mkdtemp(prefix="orcmem-bench-"))
    models = work / "models"
    ensure_model(models, embedding_source())
    memories = synthetic_memories(max(sizes))
    model = load_embedder(models, embedding_source())
    titles = [m.title for m in memories[:2000]]
    _, title_rate = _embed_all(titles, model)
    texts = [f"{m.title}\n{m.body}" for m in memories]
    vectors, text_rate = _embed_all(texts, model)
    rates = [
        EmbeddingRate("titles only", len(titles), _mean_tokens(titles, models), title_rate),
        EmbeddingRate("title + body (what orcmem embeds)", len(texts), _mean_tokens(texts, models), text_rate),
    ]
    del model
    embedder = worker_embedder(models, embedding_source())
    embedder.wait_ready(30)
    results = [_measure_size(work / f"db-{size}", memories[:size], vectors, embedder) for size in sizes]
    embedder.close()
    return results, rates


def _measure_size(home: Path, memories: list[NewMemory], vectors: list[list[float]], embedder) -> SizeResult:
    shutil.rmtree(home, ignore_errors=True)
    model_id = embedder.model_id
    svc = MemoryService.open(home)
    svc.settings.set_enabled(True)
    svc.settings.set_embedding_model(model_id)
    project = svc.project(Location(str(home / "project"), str(home / "project"), "bench"))
    started = time.perf_counter()
    ids = [svc.record(project, memory).memory.id for memory in memories]
    record_rate = len(memories) / (time.perf_counter() - started)
    for memory_id, vector in zip(ids, vectors, strict=False):
        svc.store.vectors.put(memory_id, vector, model_id, svc.clock())
    svc.use_embedder(embedder)
    probe = queries()
    query_vectors = [embedder.embed_query(q, timeout=5) for q in probe]
    svc.search.hits(project, probe[0])  # warm the in-memory vector copy and SQLite's page cache

    def each(action, items) -> Latency:
        return latency([time_call(lambda item=item: action(item)) for item in items])

    nearest = svc.store.vectors.nearest

    def seed_query(text: str) -> str:
        quoted = [f'"{term}"' for term in query_terms(text, drop_function_words=False)]
        quoted[-1] += "*"
        return " OR ".join(quoted)

    def words_by(match: str) -> object:
        return svc.store.memories.search_words(match, project.id, SEARCH_CANDIDATES)

    nearest_sqlite = svc.store.vectors.nearest_sqlite
    result = SizeResult(
        size=len(memories),
        record_per_s=record_rate,
        db_bytes=0,
        words=each(lambda q: svc.search.words(project, q, SEARCH_CANDIDATES), probe),
        words_seed_query=each(lambda q: words_by(seed_query(q)), probe),
        query_embedding=each(lambda q: embedder.embed_query(q, timeout=5), probe),
        meaning_numpy=each(lambda v: nearest(v, model_id, project.id, SEARCH_CANDIDATES), query_vectors),
        meaning_sqlite_vec=each(
            lambda v: nearest_sqlite(v, model_id, project.id, SEARCH_CANDIDATES), query_vectors[:50]
        ),
        fused=each(lambda q: svc.search.hits(project, q), probe),
    )
    svc.store.close()  # the embedder is shared across sizes
    result.db_bytes = sum(p.stat().st_size for p in home.glob("orcmem.db*"))
    return result
