"""mem0 (the open-source `mem0ai` library) as a benchmark peer: raw memories, orcmem's MiniLM, qdrant in memory.

mem0 must be imported only inside `peers_offline.offline_env(MEM0_DIR=...)`: it reads its telemetry switch and its
folder when imported.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ADD_BATCH = 500  # messages per add() call: add(infer=False) stores each message as its own memory
DIMENSIONS = 384


@dataclass
class Mem0Peer:
    """One mem0 `Memory` and the map from its memory ids back to the benchmark's ids."""

    memory: Any
    hybrid: bool
    ids: dict[str, str] = field(default_factory=dict)  # mem0 id -> benchmark id

    def add(self, user_id: str, docs: Iterable[tuple[str, str]]) -> None:
        """Store (benchmark id, text) pairs for `user_id`, exactly as `Memory.add(..., infer=False)` stores them."""
        docs = list(docs)
        for start in range(0, len(docs), ADD_BATCH):
            chunk = docs[start : start + ADD_BATCH]
            messages = [{"role": "user", "content": text} for _, text in chunk]
            results = self.memory.add(messages, user_id=user_id, infer=False)["results"]
            # add(infer=False) returns one ADD result per message, in order; check it rather than trust it.
            if len(results) != len(chunk) or any(
                r["memory"] != text for r, (_, text) in zip(results, chunk, strict=True)
            ):
                raise RuntimeError("mem0 add(infer=False) did not store one memory per message")
            self.ids.update((r["id"], ref) for r, (ref, _) in zip(results, chunk, strict=True))

    def search(self, user_id: str, query: str, limit: int = 10) -> list[str]:
        """Benchmark ids of mem0's top `limit` memories for `query`, with mem0's default threshold."""
        found = self.memory.search(query, top_k=limit, filters={"user_id": user_id})["results"]
        return [self.ids[r["id"]] for r in found]


def mem0_version() -> str:
    """The installed mem0ai version."""
    from importlib import metadata

    return metadata.version("mem0ai")


def open_mem0(
    work: Path,
    name: str,
    embed_query: Callable[[str], Sequence[float]],
    known: dict[str, Sequence[float]],
    *,
    hybrid: bool = False,
) -> Mem0Peer:
    """A mem0 Memory whose embedder is orcmem's MiniLM and whose store is a qdrant collection held in memory.

    Args:
        work: folder for mem0's own files (its history SQLite database and config).
        name: the qdrant collection name.
        embed_query: orcmem's model, one text at a time (queries, and any text not in `known`).
        known: vectors of the documents, made by the same model in batches before the adds (embedding is the
            slow part of an add and is the same work orcmem does, so it is done once for both).
        hybrid: give mem0's qdrant store a BM25 encoder built offline (see `offline_bm25`); otherwise mem0's
            keyword half stays off, as it is on any machine that cannot download `Qdrant/bm25`.
    """
    os.environ.setdefault("MEM0_DIR", str(work / "mem0-home"))
    from mem0 import Memory

    config = {
        "vector_store": {
            "provider": "qdrant",
            "config": {"collection_name": name, "embedding_model_dims": DIMENSIONS, "path": ":memory:"},
        },
        # Never called with infer=False; the constructor builds an OpenAI client, which needs some key.
        "llm": {"provider": "openai", "config": {"api_key": "sk-not-used-no-llm-call"}},
        # Replaced below by orcmem's MiniLM; mem0 validates the provider name before that.
        "embedder": {"provider": "openai", "config": {"api_key": "sk-not-used", "embedding_dims": DIMENSIONS}},
        # Its audit log of adds, kept in memory: on this disk each add would wait ~25 ms for a sync.
        "history_db_path": ":memory:",
    }
    memory = Memory.from_config(config)
    memory.embedding_model = _minilm_embedder(embed_query, known)
    # mem0's qdrant store loads fastembed's `Qdrant/bm25` from Hugging Face on first use; `False` is its own
    # "tried and failed" marker, which turns keyword search off without any download attempt.
    memory.vector_store._bm25_encoder = offline_bm25(work / "qdrant-bm25") if hybrid else False
    return Mem0Peer(memory, hybrid)


def _minilm_embedder(embed_query: Callable[[str], Sequence[float]], known: dict[str, Sequence[float]]) -> Any:
    """A mem0 embedder (its `EmbeddingBase`) running orcmem's all-MiniLM-L6-v2."""
    from mem0.configs.embeddings.base import BaseEmbedderConfig
    from mem0.embeddings.base import EmbeddingBase

    class OrcmemMiniLM(EmbeddingBase):
        """all-MiniLM-L6-v2 through orcmem's fastembed loader: the same files, pooling and truncation."""

        def embed(self, text: str, memory_action: str | None = None) -> list[float]:
            """The document vector made in advance for an add, else the model run now (every query)."""
            if memory_action == "add" and text in known:
                return list(known[text])
            return list(embed_query(text))

    return OrcmemMiniLM(BaseEmbedderConfig(model="all-MiniLM-L6-v2 (orcmem)", embedding_dims=DIMENSIONS))


def offline_bm25(folder: Path) -> Any:
    """fastembed's `Qdrant/bm25` encoder (Snowball stemmer, k = 1.2, b = 0.75) without its download.

    The Hugging Face repository holds only an empty config.json and stop-word lists; neither can be fetched here,
    so the folder gets the empty config and the encoder runs with no stop words (qdrant's IDF still discounts
    common words).
    """
    from fastembed import SparseTextEmbedding

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text("{}")
    return SparseTextEmbedding("Qdrant/bm25", specific_model_path=str(folder), stopwords=set())
