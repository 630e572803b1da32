"""Honest test doubles for the embedder seam: deterministic, small, and clearly not a language model."""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections.abc import Sequence

DIMS = 384
# A tiny synonym table stands in for meaning, so fusion can be tested without the real model.
SYNONYMS = {"automobile": "car", "vehicle": "car", "sedan": "car", "fix": "repair", "mend": "repair"}


def _bucket(word: str) -> int:
    return int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little") % DIMS


def bag_of_words(text: str) -> list[float]:
    vector = [0.0] * DIMS
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[_bucket(SYNONYMS.get(word, word))] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


class SynonymEmbedder:
    """Hashes words (after a synonym table) into 384 buckets; counts its calls."""

    model_id = "test-synonym-hash"
    dimensions = DIMS

    def __init__(self) -> None:
        self.documents = 0
        self.queries = 0

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.documents += len(texts)
        return [bag_of_words(text) for text in texts]

    def embed_query(self, text: str, timeout: float) -> list[float] | None:
        self.queries += 1
        return bag_of_words(text)


class StalledEmbedder(SynonymEmbedder):
    """Never answers a query in time: waits out the caller's timeout, then gives up."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def embed_query(self, text: str, timeout: float) -> list[float] | None:
        self.queries += 1
        self.release.wait(timeout)
        return None


class FailingEmbedder(SynonymEmbedder):
    """Raises on every call, like a model whose files went bad."""

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        raise RuntimeError("model exploded")

    def embed_query(self, text: str, timeout: float) -> list[float] | None:
        return None
