"""Fake embedders for fast tests: they satisfy the Embedder protocol but understand no meaning at all."""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections.abc import Sequence

from orcmem.embed.embedder import LoadedAtOnce
from orcmem.models.constants import EMBEDDING_DIMENSIONS
from orcmem.models.errors import ModelError

_WORDS = re.compile(r"\w+")


class _Fake(LoadedAtOnce):
    """What every fake shares: no model to load, and queries answered through `embed_query`."""

    def embed_query_here(self, text: str) -> list[float] | None:
        """None: queries go through `embed_query` (as a worker's would when busy)."""
        return None


class HashingEmbedder(_Fake):
    """FAKE: hashes each lowercased word to a signed coordinate; texts sharing words get a positive cosine.

    Deterministic across processes, unit length, no model and no dependencies. Only shared words count, so it is
    useful for testing plumbing (storage, k-NN, fusion), never for judging search quality.
    """

    def __init__(self, dimensions: int = EMBEDDING_DIMENSIONS, model_id: str = "fake-hashing-v1") -> None:
        """A fake with vectors of `dimensions` floats, reporting `model_id`."""
        self._dimensions = dimensions
        self._model_id = model_id
        self.calls: list[list[str]] = []

    @property
    def model_id(self) -> str:
        """The fake's id, never one a real model uses."""
        return self._model_id

    @property
    def dimensions(self) -> int:
        """The vector length."""
        return self._dimensions

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text."""
        self.calls.append(list(texts))
        return [self._vector(text) for text in texts]

    def embed_query(self, text: str, timeout: float | None = None) -> list[float]:
        """The unit vector of one text (computed inline, so `timeout` is unused)."""
        return self.embed_documents([text])[0]

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self._dimensions
        for word in _WORDS.findall(text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            vector[value % self._dimensions] += 1.0 if value >> 63 else -1.0
        norm = math.sqrt(sum(x * x for x in vector))
        if norm == 0.0:
            # A text without words still needs a unit vector; all such texts share this one.
            vector[0] = 1.0
            return vector
        return [x / norm for x in vector]


class FailingEmbedder(_Fake):
    """FAKE: every embedding call raises ModelError, like a model whose files went bad after loading."""

    def __init__(self, message: str = "The fake embedding model failed.", model_id: str = "fake-hashing-v1") -> None:
        """A fake that raises `message` on every call."""
        self._message = message
        self._model_id = model_id

    @property
    def model_id(self) -> str:
        """The fake's id."""
        return self._model_id

    @property
    def dimensions(self) -> int:
        """Always 384."""
        return EMBEDDING_DIMENSIONS

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Raise ModelError."""
        raise ModelError(self._message)

    def embed_query(self, text: str, timeout: float | None = None) -> list[float]:
        """Raise ModelError."""
        raise ModelError(self._message)


class StalledEmbedder(HashingEmbedder):
    """FAKE: a HashingEmbedder whose every call blocks until `release` is set (or `max_wait` seconds pass)."""

    def __init__(
        self,
        release: threading.Event | None = None,
        max_wait: float = 30.0,
        dimensions: int = EMBEDDING_DIMENSIONS,
        model_id: str = "fake-hashing-v1",
    ) -> None:
        """A fake that waits on `release`; `max_wait` keeps a forgotten test from hanging forever."""
        super().__init__(dimensions, model_id)
        self.release = release or threading.Event()
        self._max_wait = max_wait
        self.entered = threading.Event()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Block until released, then embed like HashingEmbedder."""
        self.entered.set()
        self.release.wait(self._max_wait)
        return super().embed_documents(texts)
