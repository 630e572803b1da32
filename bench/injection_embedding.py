"""The instruction flag with MiniLM's sentence embedding beside its words: measured, not shipped.

Round 3 of issue 25 asked whether the vector orcmem already computes for every memory (all-MiniLM-L6-v2, 384 floats
of `title\\nbody`) catches what the hashed words miss: orders phrased as project facts, fake approvals, other
languages. Here a second logistic regression reads the 384 floats (Newton's method from zero, so deterministic, with
its own penalty); its log-odds, times a weight, are added to the shipped layer's. Each variant is scored as
bench/injection.py scores the shipped one: every batch out of batch (the cut chosen there for at most 3 % of the
ordinary texts flagged), and the newest blind batch held apart (fitted on the others, its cut chosen on them alone).
The figures decide whether the flag needs the model: it is computed on every write, also where no vector exists.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from bench.common import embedding_source
from bench.injection import APART, InjectionResult, Score, tally
from bench.injection import render as render_flag
from bench.injection import run as run_flag
from bench.injection_model import MOST_FLAGGED, Vector, by_batch, threshold
from orcmem.embed.embedder import load_embedder
from orcmem.embed.model_files import ensure_model

Mask = npt.NDArray[np.bool_]
# (name, whether the words' log-odds count, the dense model's penalty per row (None: no dense model), the weight of
# its log-odds).
VARIANTS: list[tuple[str, bool, float | None, float]] = [
    ("the words alone (shipped)", True, None, 0.0),
    ("MiniLM alone", False, 1e-4, 1.0),
    ("words + MiniLM, penalty 1e-4, weight 0.5", True, 1e-4, 0.5),
    ("words + MiniLM, penalty 1e-3, weight 0.5", True, 1e-3, 0.5),
    ("words + MiniLM, penalty 1e-3, weight 1", True, 1e-3, 1.0),
    ("words + MiniLM, penalty 1e-2, weight 1", True, 1e-2, 1.0),
]
NEWTON_STEPS = 12  # from zero weights, Newton's method has converged well before


@dataclass(frozen=True)
class Variant:
    """One way of scoring: out of batch pooled, and the batch held apart."""

    name: str
    pooled: Score
    apart: Score | None


@dataclass(frozen=True)
class EmbeddingResult:
    """The section's figures."""

    variants: list[Variant]
    embed_ms: float  # CPU milliseconds to embed one text of the set, one thread
    words_us: float  # CPU microseconds of the shipped detector per text (bench.injection)


def fit_dense(vectors: Vector, labels: Vector, l2: float) -> Vector:
    """Logistic regression by Newton's method, with an L2 penalty of `l2` per row (the bias left out of it): the
    weights, the bias last."""
    rows, width = vectors.shape
    design = np.hstack([vectors, np.ones((rows, 1))])
    penalty = np.full(width + 1, l2 * rows)
    penalty[-1] = 0.0
    weights = np.zeros(width + 1)
    for _ in range(NEWTON_STEPS):
        probability = 1 / (1 + np.exp(-design @ weights))
        gradient = design.T @ (probability - labels) + penalty * weights
        hessian = (design * (probability * (1 - probability))[:, None]).T @ design + np.diag(penalty)
        weights -= np.linalg.solve(hessian, gradient)
    return weights


def log_odds(probability: Vector) -> Vector:
    """The log-odds of probabilities, kept finite."""
    p = np.clip(probability, 1e-12, 1 - 1e-12)
    return np.asarray(np.log(p / (1 - p)), dtype=np.float64)


def embed(texts: list[str]) -> tuple[Vector, float]:
    """The texts' vectors from the benchmark's pinned model on one thread, and its CPU milliseconds per text."""
    with tempfile.TemporaryDirectory(prefix="orcmem-bench-") as work:
        models = Path(work) / "models"
        ensure_model(models, embedding_source())
        model = load_embedder(models, embedding_source(), threads=1)
        started = time.process_time()
        vectors = np.array(model.embed_documents(texts), dtype=np.float64)
        return vectors, (time.process_time() - started) / len(texts) * 1e3


def run(flagged: InjectionResult) -> EmbeddingResult:
    """Score each variant out of batch and with the batch APART held apart."""
    items = flagged.items
    vectors, embed_ms = embed([item.text for item in items])
    labels, ruled, names = flagged.labels, flagged.ruled, [item.batch for item in items]
    held: Mask = np.array(names) == APART
    words = log_odds(flagged.chosen.scores)
    words_apart = log_odds(flagged.apart.scores) if flagged.apart is not None else words

    def dense(l2: float, apart: str | None) -> Vector:
        def scorer(train: Mask, test: Mask) -> Vector:
            weights = fit_dense(vectors[train], labels[train], l2)
            return np.asarray(vectors[test] @ weights[:-1] + weights[-1], dtype=np.float64)

        return by_batch(names, scorer, apart)

    def judged(total: Vector, rows: Mask, fitted_on: Mask) -> Score:
        cut = threshold(ruled[fitted_on], labels[fitted_on], total[fitted_on], MOST_FLAGGED)
        return tally(
            [item for item, keep in zip(items, rows, strict=True) if keep], list((ruled | (total > cut))[rows])
        )

    everything: Mask = np.ones(len(items), dtype=bool)
    variants = []
    none = np.zeros(len(items))
    for name, with_words, l2, weight in VARIANTS:
        pooled_total = (words if with_words else none) + (weight * dense(l2, None) if l2 is not None else none)
        apart_total = (words_apart if with_words else none) + (weight * dense(l2, APART) if l2 is not None else none)
        apart = judged(apart_total, held, ~held) if held.any() else None
        variants.append(Variant(name, judged(pooled_total, everything, everything), apart))
    return EmbeddingResult(variants, embed_ms, flagged.new_us)


def render(r: EmbeddingResult) -> list[str]:
    """The report section."""
    return [
        "## The instruction flag with MiniLM's embedding (measured, not shipped)",
        "",
        "Whether the 384 floats orcmem already computes for each memory (all-MiniLM-L6-v2, int8) help the flag: a",
        "second logistic regression on them, its log-odds added to the shipped layer's (bench/injection_embedding.py),",
        "scored like the shipped detector: out of batch pooled (the cut chosen there for at most 3 % of ordinary texts",
        f"flagged), and *{APART}* held apart (fitted on every other batch, its cut chosen on them alone).",
        "",
        f"| variant | out of batch: caught | flagged | {APART} held apart: caught | flagged |",
        "|---|---:|---:|---:|---:|",
        *[f"| {v.name} | {v.pooled.cell()} | {v.apart.cell() if v.apart else '- | -'} |" for v in r.variants],
        "",
        f"- Cost: embedding a text of the set takes {r.embed_ms:.0f} ms of CPU (one thread), against "
        f"{r.words_us:.0f} µs for the whole shipped detector;",
        "  on a write the vector is made anyway, in the background, after the memory is stored.",
        *_verdict(r),
        "",
    ]


def _verdict(r: EmbeddingResult) -> list[str]:
    """Whether a variant with the embedding beats the words alone on both measures."""
    words = r.variants[0]
    better = [
        v.name
        for v in r.variants[1:]
        if v.pooled.caught > words.pooled.caught
        and (v.apart is None or words.apart is None or v.apart.caught > words.apart.caught)
    ]
    if better:
        return [f"- Caught more than the words alone on both measures: {', '.join(better)}."]
    return [
        "- No variant with the embedding catches more than the words alone on both measures. The embedding places a",
        "  text by its topic, and an injection shares its topic with the ordinary advice it imitates (a deploy, a",
        "  key, a review), so the flag does not use it: it gives one answer with or without a model.",
    ]


if __name__ == "__main__":  # both sections of the instruction flag, the shipped one first
    shipped = run_flag()
    print("\n".join([*render_flag(shipped), *render(run(shipped))]))
