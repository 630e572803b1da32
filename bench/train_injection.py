"""Train the instruction flag's learned layer (orcmem/text/instructions_learned.py) on the labelled set's `tune` split.

Deterministic: full-batch gradient descent from zero weights, folds by position. The threshold is chosen on
out-of-fold scores (five folds of `tune`) so that at most 2 % of its ordinary texts are flagged by the layer; the
weights are then trained on all of `tune`. `python -m bench.train_injection` writes
src/orcmem/text/injection_weights.bin.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt

from bench.injection import DATA, ROOT, Item, load
from orcmem.text.instructions_learned import BUCKETS, Weights, features

OUT = ROOT / "src" / "orcmem" / "text" / "injection_weights.bin"
FOLDS = 5
# Of the ordinary texts, out of fold: the rules flag a few ordinary texts of each new batch on their own (4 of 147
# in the sixth), so the layer gets half of a 2 % share.
MAX_FLAGGED = 0.01
L2 = 1e-4
STEPS = 2000
RATE = 4.0

Matrix = npt.NDArray[np.float64]


def matrix(items: list[Item]) -> Matrix:
    """One row of hashed features per item."""
    rows = np.zeros((len(items), BUCKETS))
    for index, item in enumerate(items):
        for slot, weight in features(item.text).items():
            rows[index, slot] = weight
    return rows


def fit(rows: Matrix, labels: Matrix) -> tuple[float, Matrix]:
    """Logistic regression with an L2 penalty: the bias and the weights."""
    # Only the slots some text uses: an unused slot's weight stays zero, and the products are ten times smaller.
    used = np.flatnonzero(rows.any(axis=0))
    bias, compact = _fit(rows[:, used], labels)
    weights = np.zeros(rows.shape[1])
    weights[used] = compact
    return bias, weights


def _fit(rows: Matrix, labels: Matrix) -> tuple[float, Matrix]:
    bias, weights = 0.0, np.zeros(rows.shape[1])
    for _ in range(STEPS):
        predicted = 1 / (1 + np.exp(-(rows @ weights + bias)))
        error = predicted - labels
        weights -= RATE * (rows.T @ error / len(labels) + L2 * weights)
        bias -= RATE * float(error.mean())
    return bias, weights


def threshold(items: list[Item], rows: Matrix, labels: Matrix) -> float:
    """The out-of-fold score above which at most MAX_FLAGGED of the ordinary texts fall."""
    scores = np.zeros(len(items))
    for fold in range(FOLDS):
        test = np.arange(len(items)) % FOLDS == fold
        bias, weights = fit(rows[~test], labels[~test])
        scores[test] = 1 / (1 + np.exp(-(rows[test] @ weights + bias)))
    ordinary = np.sort(scores[labels == 0])[::-1]
    allowed = int(MAX_FLAGGED * len(ordinary))
    caught = float((scores[labels == 1] > ordinary[allowed]).mean())
    print(f"out of fold: {caught:.1%} of injections above {ordinary[allowed]:.3f}", file=sys.stderr)
    return float(ordinary[allowed])


def main() -> None:
    """Train on `tune` and write the weights file."""
    items = [item for item in load(DATA) if item.split == "tune"]
    rows, labels = matrix(items), np.array([float(item.injection) for item in items])
    cut = threshold(items, rows, labels)
    bias, weights = fit(rows, labels)
    OUT.write_bytes(Weights(bias, [float(value) for value in weights], cut).to_bytes())
    print(f"wrote {OUT.relative_to(Path.cwd()) if OUT.is_relative_to(Path.cwd()) else OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
