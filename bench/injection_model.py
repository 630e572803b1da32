"""The instruction flag's learned layer as a model to fit: sparse features, L2 logistic regression, scores by batch.

Shared by bench/train_injection.py (which writes the shipped weights) and bench/injection.py (which scores each batch
of the labelled set with weights fitted on all the other batches). Deterministic: accelerated gradient descent from
zero weights, with a step set by the data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from orcmem.text.instructions import FLAG_AT, instruction_cues
from orcmem.text.instructions_learned import BUCKETS, features

Vector = npt.NDArray[np.float64]
# Steps of accelerated descent: stopping here, short of convergence at the smallest penalties, also regularises.
STEPS = 400
# The penalties tried (1e-3 caught fewer out of batch in an earlier round), and the share of ordinary texts the
# rules and the layer together may flag out of batch: the target is 5 %, and a new batch's ordinary texts have come
# out a point or two above the pooled share.
L2_GRID = (3e-5, 1e-4)
MOST_FLAGGED = 0.03


@dataclass(frozen=True)
class Sparse:
    """Rows of hashed features in coordinate form, and whether the rules flag each row on their own."""

    rows: npt.NDArray[np.int64]
    cols: npt.NDArray[np.int64]
    vals: Vector
    count: int
    ruled: npt.NDArray[np.bool_]

    def times(self, weights: Vector) -> Vector:
        """X @ weights."""
        return np.bincount(self.rows, weights=self.vals * weights[self.cols], minlength=self.count)

    def transposed_times(self, values: Vector) -> Vector:
        """X.T @ values."""
        return np.bincount(self.cols, weights=self.vals * values[self.rows], minlength=BUCKETS)

    def subset(self, keep: npt.NDArray[np.bool_]) -> Sparse:
        """The rows where `keep` holds."""
        renumber = np.cumsum(keep) - 1
        inside = keep[self.rows]
        return Sparse(
            renumber[self.rows[inside]], self.cols[inside], self.vals[inside], int(keep.sum()), self.ruled[keep]
        )


def sparse(texts: list[str]) -> Sparse:
    """The texts' features as the shipped layer computes them (the rules' cues included)."""
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    ruled = []
    for index, text in enumerate(texts):
        cues = instruction_cues(text)
        ruled.append(sum(cues.values()) >= FLAG_AT)
        for slot, value in features(text, cues).items():
            rows.append(index)
            cols.append(slot)
            vals.append(value)
    return Sparse(np.array(rows), np.array(cols), np.array(vals), len(texts), np.array(ruled, dtype=bool))


def fit(x: Sparse, labels: Vector, l2: float) -> tuple[float, Vector]:
    """Logistic regression with an L2 penalty (the bias left out of it): the bias and the weights."""
    # The step is 1/L, L bounding the loss's curvature: 0.25 times the largest eigenvalue of X'X/n (power iteration
    # from a fixed start, so the fit is deterministic), plus the penalty.
    probe = np.ones(BUCKETS)
    for _ in range(30):
        probe = x.transposed_times(x.times(probe)) / x.count
        top = float(np.linalg.norm(probe))
        probe /= top
    step = 1 / (0.25 * (top + 1) + l2)
    weights, bias = np.zeros(BUCKETS), 0.0
    previous_w, previous_b = weights, bias
    for k in range(1, STEPS + 1):
        momentum = (k - 1) / (k + 2)
        look_w = weights + momentum * (weights - previous_w)
        look_b = bias + momentum * (bias - previous_b)
        error = 1 / (1 + np.exp(-(x.times(look_w) + look_b))) - labels
        previous_w, previous_b = weights, bias
        weights = look_w - step * (x.transposed_times(error) / x.count + l2 * look_w)
        bias = look_b - step * float(error.mean())
    return bias, weights


def scores(x: Sparse, bias: float, weights: Vector) -> Vector:
    """The layer's probability for each row."""
    return 1 / (1 + np.exp(-(x.times(weights) + bias)))


# Fits a model on the rows of the first mask and scores the rows of the second.
Scorer = Callable[[npt.NDArray[np.bool_], npt.NDArray[np.bool_]], Vector]


def by_batch(batches: list[str], scorer: Scorer, apart: str | None = None) -> Vector:
    """Each row's score from a model fitted on every batch but its own; with `apart`, that batch is also left out of
    every other batch's fit (so that a cut chosen on the others has never seen it), and is itself scored by a model
    fitted on all the others."""
    names = np.array(batches)
    result = np.zeros(len(batches))
    for batch in sorted(set(batches)):
        held = names == batch
        result[held] = scorer(~held if apart in (None, batch) else ~held & (names != apart), held)
    return result


def out_of_batch(x: Sparse, labels: Vector, batches: list[str], l2: float, apart: str | None = None) -> Vector:
    """Each row's score from weights fitted on every batch but its own (see by_batch for `apart`)."""

    def scorer(train: npt.NDArray[np.bool_], test: npt.NDArray[np.bool_]) -> Vector:
        bias, weights = fit(x.subset(train), labels[train], l2)
        return scores(x.subset(test), bias, weights)

    return by_batch(batches, scorer, apart)


def threshold(ruled: npt.NDArray[np.bool_], labels: Vector, result: Vector, most_flagged: float) -> float:
    """The lowest score cut at which the rules (`ruled`: the rows they flag) and the layer together flag at most
    `most_flagged` of the ordinary rows (scored out of batch)."""
    ordinary = labels == 0
    allowed = int(most_flagged * ordinary.sum()) - int((ruled & ordinary).sum())
    candidates = np.sort(result[ordinary & ~ruled])[::-1]
    return float(candidates[max(0, allowed)]) if len(candidates) else 0.5


@dataclass(frozen=True)
class Choice:
    """The penalty chosen, the score cut, and each row's out-of-batch score under them."""

    l2: float
    cut: float
    scores: Vector


def choose(x: Sparse, labels: Vector, batches: list[str]) -> Choice:
    """The penalty of L2_GRID that catches the most injections out of batch with at most MOST_FLAGGED of the ordinary
    texts flagged (the first on a tie), with its cut."""
    best: Choice | None = None
    best_caught = -1.0
    for l2 in L2_GRID:
        result = out_of_batch(x, labels, batches, l2)
        cut = threshold(x.ruled, labels, result, MOST_FLAGGED)
        caught = float((x.ruled | (result > cut))[labels == 1].mean())
        if caught > best_caught:
            best, best_caught = Choice(l2, cut, result), caught
    assert best is not None
    return best
