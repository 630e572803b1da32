"""The in-package fakes behave like embedders: deterministic unit vectors, honest failures."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from orcmem.embed.embedder import Embedder
from orcmem.models.errors import ModelError
from tests.embedders import FailingEmbedder, HashingEmbedder


def dot(a: list[float], b: list[float]) -> float:
    """Dot product (cosine, for unit vectors)."""
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_hashing_embedder_makes_deterministic_unit_vectors() -> None:
    fake = HashingEmbedder()
    assert isinstance(fake, Embedder)
    assert fake.dimensions == 384
    assert fake.model_id.startswith("fake-")
    vectors = fake.embed_documents(["Use the forks pool", "", "!!!"])
    for vector in vectors:
        assert len(vector) == 384
        assert math.isclose(math.sqrt(dot(vector, vector)), 1.0, rel_tol=1e-9)
    assert fake.embed_query("Use the forks pool", timeout=0.5) == vectors[0]
    assert fake.calls[0] == ["Use the forks pool", "", "!!!"]


def test_hashing_embedder_is_stable_across_processes() -> None:
    code = "from tests.embedders import HashingEmbedder; print(HashingEmbedder().embed_query('vitest pool forks')[:5])"
    root = Path(__file__).parents[2]  # where `tests` is importable
    runs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root).stdout for _ in range(2)
    }
    assert len(runs) == 1
    assert runs == {f"{HashingEmbedder().embed_query('vitest pool forks')[:5]}\n"}


def test_shared_words_score_higher_than_unrelated_text() -> None:
    fake = HashingEmbedder()
    a, b, c = fake.embed_documents(["vitest pool forks crash", "use forks pool in vitest", "deploy the docs site"])
    assert dot(a, b) > 0.5
    assert dot(a, b) > dot(a, c) + 0.3


def test_failing_embedder_raises_model_error() -> None:
    fake = FailingEmbedder("broken on purpose")
    assert isinstance(fake, Embedder)
    with pytest.raises(ModelError, match="broken on purpose"):
        fake.embed_documents(["a"])
    with pytest.raises(ModelError):
        fake.embed_query("a")
