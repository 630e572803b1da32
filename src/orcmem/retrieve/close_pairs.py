"""Pairs of stored vectors close in meaning, found without comparing every pair: the store audit's near duplicates.

A small store is compared in full. A large one is cut into cells around centroids drawn from its own vectors (one
k-means step), each vector placed in its two closest cells, and pairs are compared only within a cell: two vectors
close enough to be duplicates almost always share one of their two closest centroids (measured in bench/audit.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

EXACT_UP_TO = 6_000  # up to this many vectors every pair is compared (blocks of BLOCK rows)
BLOCK = 1_024
CELLS_PER_SQRT = 1.0  # cells: this many times the square root of the count
PROBES = 2  # the closest cells each vector is placed in
PER_VECTOR = 4  # the closest partners kept for each vector: enough for a duplicate or a contradiction


def close_pairs(matrix: np.ndarray, min_similarity: float, seed: int = 7) -> list[tuple[int, int, float]]:
    """(i, j, cosine) with i < j for rows of unit `matrix` at least `min_similarity` close, at most PER_VECTOR
    partners per row, closest first per row."""
    import numpy as np

    count = matrix.shape[0]
    if count < 2:
        return []
    found: dict[tuple[int, int], float] = {}
    if count <= EXACT_UP_TO:
        _within(matrix, np.arange(count), min_similarity, found)
    else:
        for members in _cells(matrix, seed):
            _within(matrix, members, min_similarity, found)
    return sorted(((i, j, s) for (i, j), s in found.items()), key=lambda p: (-p[2], p[0], p[1]))


def _cells(matrix: np.ndarray, seed: int) -> list[np.ndarray]:
    """The rows of each cell: centroids drawn from the rows, moved once to their members' mean, each row placed in
    its PROBES closest."""
    import numpy as np

    count = matrix.shape[0]
    rng = np.random.default_rng(seed)
    cells = max(2, int(CELLS_PER_SQRT * count**0.5))
    centroids = matrix[rng.choice(count, cells, replace=False)]
    nearest = _closest(matrix, centroids, 1)[:, 0]
    sums = np.zeros_like(centroids)
    np.add.at(sums, nearest, matrix)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    centroids = np.where(norms > 0, sums / np.maximum(norms, 1e-12), centroids)
    placed = _closest(matrix, centroids, PROBES)
    rows = np.repeat(np.arange(count), PROBES)
    cell_of = placed.reshape(-1)
    order = np.argsort(cell_of, kind="stable")
    bounds = np.searchsorted(cell_of[order], np.arange(cells + 1))
    return [rows[order[bounds[c] : bounds[c + 1]]] for c in range(cells) if bounds[c + 1] - bounds[c] > 1]


def _closest(matrix: np.ndarray, centroids: np.ndarray, probes: int) -> np.ndarray:
    """Each row's `probes` most similar centroids."""
    import numpy as np

    out = np.empty((matrix.shape[0], probes), dtype=np.int64)
    for start in range(0, matrix.shape[0], BLOCK * 8):
        sims = matrix[start : start + BLOCK * 8] @ centroids.T
        if probes == 1:
            out[start : start + BLOCK * 8, 0] = np.argmax(sims, axis=1)
        else:
            out[start : start + BLOCK * 8] = np.argpartition(-sims, probes - 1, axis=1)[:, :probes]
    return out


def _within(
    matrix: np.ndarray, members: np.ndarray, min_similarity: float, found: dict[tuple[int, int], float]
) -> None:
    """Add the close pairs among `members` (row numbers of `matrix`) to `found`, PER_VECTOR per row."""
    import numpy as np

    sub = matrix[members]
    for start in range(0, len(members), BLOCK):
        sims = sub[start : start + BLOCK] @ sub.T
        local = np.arange(start, min(start + BLOCK, len(members)))
        sims[np.arange(len(local)), local] = -1.0  # not a pair with itself
        rows, cols = np.nonzero(sims >= min_similarity)
        if rows.size == 0:
            continue
        values = sims[rows, cols]
        order = np.lexsort((-values, rows))
        kept_per_row: dict[int, int] = {}
        for r, c, v in zip(rows[order].tolist(), cols[order].tolist(), values[order].tolist(), strict=True):
            if kept_per_row.get(r, 0) >= PER_VECTOR:
                continue
            kept_per_row[r] = kept_per_row.get(r, 0) + 1
            i, j = int(members[start + r]), int(members[c])
            key = (i, j) if i < j else (j, i)
            if key not in found or found[key] < v:
                found[key] = float(v)
