"""Pairs of stored vectors close in meaning, found without comparing every pair: the store audit's near duplicates.

A small store is compared in full. A large one is cut into cells around centroids drawn from its own vectors (one
k-means step), each vector placed in its two closest cells, and pairs are compared only within a cell: two vectors
close enough to be duplicates almost always share one of their two closest centroids (measured in bench/audit.py).
A cell still larger than a small store is cut the same way again.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np  # loaded with the audit's pair search only (`service/audit.StoreAudit.pair_search`)

from orcmem.host.forking import ForkPool, Spread

EXACT_UP_TO = 3_000  # up to this many vectors (the whole store, or one cell) every pair is compared
MAX_SPLITS = 3  # a cell still crowded after this many cuts is compared in full
BLOCK = 1_024
CELLS_PER_SQRT = 1.0  # cells: this many times the square root of the count
PROBES = 2  # the closest cells each vector is placed in
PER_VECTOR = 4  # the closest partners kept for each vector: enough for a duplicate or a contradiction


def close_pairs(matrix: np.ndarray, min_similarity: float, seed: int = 7) -> list[tuple[int, int, float]]:
    """(i, j, cosine) with i < j for rows of unit `matrix` at least `min_similarity` close, at most PER_VECTOR
    partners per row, closest first per row."""
    low, high, values = close_pair_arrays(matrix, min_similarity, seed)
    return list(zip(low.tolist(), high.tolist(), values.tolist(), strict=True))


def close_pair_arrays(
    matrix: np.ndarray, min_similarity: float, seed: int = 7, spread: Spread | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`close_pairs` as three arrays (rows i, rows j, cosines), for a caller that keeps them as arrays; with `spread`,
    a large matrix's products run over forked workers (each product is the one this process would compute, on one
    BLAS thread: the same pairs to the last bit)."""
    count = matrix.shape[0]
    empty = np.zeros(0, dtype=np.int64)
    if count < 2:
        return empty, empty, np.zeros(0, dtype=np.float32)
    spread = spread or Spread(1, "")
    with ForkPool(_Search(matrix, min_similarity, seed), spread, use=spread.pays(count)) as pool:
        found = _searched(pool, count)
    if not found:
        return empty, empty, np.zeros(0, dtype=np.float32)
    firsts, seconds, values = (np.concatenate(part) for part in zip(*found, strict=True))
    low, high = np.minimum(firsts, seconds), np.maximum(firsts, seconds)
    # One entry per pair (found from both rows, or in two cells), its highest similarity; then closest first.
    order = np.lexsort((-values, high, low))
    low, high, values = low[order], high[order], values[order]
    first = np.ones(len(low), dtype=bool)
    first[1:] = (low[1:] != low[:-1]) | (high[1:] != high[:-1])
    low, high, values = low[first], high[first], values[first]
    order = np.lexsort((high, low, -values))
    return low[order], high[order], values[order]


Found = tuple[np.ndarray, np.ndarray, np.ndarray]  # rows, partners, cosines
Cell = tuple[np.ndarray, int]  # a cell's rows of the matrix, and how many cuts made it


class _Search:
    """What a search's workers share: the unit vectors, how close a pair must be, the seed of the cuts."""

    def __init__(self, matrix: np.ndarray, min_similarity: float, seed: int) -> None:
        self.matrix, self.min_similarity, self.seed = matrix, min_similarity, seed


def _searched(pool: ForkPool[_Search], count: int) -> list[Found]:
    """The close pairs of the whole matrix, cell by cell: the first cut's products and its cells spread over the
    pool's workers (their order does not matter: the pairs are sorted after)."""
    search = pool.shared
    if count <= EXACT_UP_TO:
        return _in_cells(search, [(np.arange(count), 0)])
    cells = _cells(search.matrix, search.seed, pool)
    return [found for part in pool.map(_in_cells, _shares(cells, pool.spread.workers)) for found in part]


def _shares(cells: list[np.ndarray], workers: int) -> list[list[Cell]]:
    """The cells in a few tasks per worker of about the same work each (a cell's products grow as its size
    squared), largest first: the worker that frees up first takes the next."""
    tasks = max(1, workers * 4)
    order = sorted(range(len(cells)), key=lambda n: -len(cells[n]))
    shares: list[list[Cell]] = [[] for _ in range(tasks)]
    loads = [0] * tasks
    for n in order:
        lightest = loads.index(min(loads))
        shares[lightest].append((cells[n], 1))
        loads[lightest] += len(cells[n]) ** 2
    return [share for share in shares if share]


def _in_cells(search: _Search, cells: list[Cell]) -> list[Found]:
    """The close pairs within each cell, a crowded one cut again around its own centroids (in this process)."""
    found: list[Found] = []
    waiting = list(cells)
    while waiting:
        members, depth = waiting.pop()
        if len(members) <= EXACT_UP_TO or depth == MAX_SPLITS:
            found.extend(_within(search.matrix, members, search.min_similarity))
            continue
        # A crowded cell (memories written from one mould crowd together) is cut again, around its own centroids.
        sub = search.matrix[members]
        waiting.extend((members[cell], depth + 1) for cell in _cells(sub, search.seed + depth))
    return found


def _cells(matrix: np.ndarray, seed: int, pool: ForkPool[_Search] | None = None) -> list[np.ndarray]:
    """The rows of each cell: centroids drawn from the rows, moved once to their members' mean, each row placed in
    its PROBES closest (with `pool`, whose workers hold this matrix, the rows' products spread over them)."""
    closest_to = _closest if pool is None else _pool_closest(pool)
    count = matrix.shape[0]
    rng = np.random.default_rng(seed)
    cells = max(2, int(CELLS_PER_SQRT * count**0.5))
    centroids = matrix[rng.choice(count, cells, replace=False)]
    nearest = closest_to(matrix, centroids, 1)[:, 0]
    sums = np.zeros_like(centroids)
    # Each cell's members summed in one slice (np.add.at, row by row, took ten times as long at 100,000).
    by_cell = np.argsort(nearest, kind="stable")
    edges = np.searchsorted(nearest[by_cell], np.arange(cells + 1))
    for cell in np.flatnonzero(edges[1:] > edges[:-1]).tolist():
        sums[cell] = matrix[by_cell[edges[cell] : edges[cell + 1]]].sum(axis=0)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    centroids = np.where(norms > 0, sums / np.maximum(norms, 1e-12), centroids)
    placed = closest_to(matrix, centroids, PROBES)
    rows = np.repeat(np.arange(count), PROBES)
    cell_of = placed.reshape(-1)
    order = np.argsort(cell_of, kind="stable")
    bounds = np.searchsorted(cell_of[order], np.arange(cells + 1))
    return [rows[order[bounds[c] : bounds[c + 1]]] for c in range(cells) if bounds[c + 1] - bounds[c] > 1]


def _pool_closest(pool: ForkPool[_Search]) -> Callable[[np.ndarray, np.ndarray, int], np.ndarray]:
    """`_closest` over the rows of the pool's matrix, in slices of whole blocks spread over its workers (each
    block's product the one this process would compute)."""

    def closest_spread(matrix: np.ndarray, centroids: np.ndarray, probes: int) -> np.ndarray:
        blocks = -(-matrix.shape[0] // (BLOCK * 8))
        step = BLOCK * 8 * max(1, -(-blocks // (pool.spread.workers * 2)))
        tasks = [(start, start + step, centroids, probes) for start in range(0, matrix.shape[0], step)]
        return np.concatenate(pool.map(_closest_rows, tasks))

    return closest_spread


def _closest_rows(search: _Search, task: tuple[int, int, np.ndarray, int]) -> np.ndarray:
    """`_closest` for one slice of the shared matrix's rows."""
    start, end, centroids, probes = task
    return _closest(search.matrix[start:end], centroids, probes)


def _closest(matrix: np.ndarray, centroids: np.ndarray, probes: int) -> np.ndarray:
    """Each row's `probes` most similar centroids."""
    out = np.empty((matrix.shape[0], probes), dtype=np.int64)
    for start in range(0, matrix.shape[0], BLOCK * 8):
        sims = matrix[start : start + BLOCK * 8] @ centroids.T
        lines = np.arange(sims.shape[0])
        for probe in range(probes):  # argmax, probe by probe: cheaper than a partial sort for a probe or two
            out[start : start + BLOCK * 8, probe] = best = np.argmax(sims, axis=1)
            sims[lines, best] = -np.inf
    return out


def _within(
    matrix: np.ndarray, members: np.ndarray, min_similarity: float
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The close pairs among `members` (row numbers of `matrix`), PER_VECTOR per row: (rows, partners, cosines)
    arrays for each block of rows."""
    sub = matrix[members]
    keep = min(PER_VECTOR, len(members) - 1)
    found = []
    for start in range(0, len(members), BLOCK):
        sims = sub[start : start + BLOCK] @ sub.T
        local = np.arange(sims.shape[0])
        sims[local, start + local] = -1.0  # not a pair with itself
        best = np.argpartition(-sims, keep - 1, axis=1)[:, :keep]
        values = np.take_along_axis(sims, best, axis=1)
        rows, slots = np.nonzero(values >= min_similarity)
        if rows.size:
            found.append((members[start + rows], members[best[rows, slots]], values[rows, slots]))
    return found


def closest(
    queries: np.ndarray, candidates: np.ndarray, selves: np.ndarray, min_similarity: float, keep: int
) -> list[list[tuple[int, float]]]:
    """For each row of unit `queries`, its `keep` most similar rows of unit `candidates` at least `min_similarity`
    close, closest first, as (candidate row, cosine); `selves[q]` is query q's own row among the candidates (-1:
    none), never its partner. The few memories an edit changed, against the stored ones, block by block."""
    found: list[list[tuple[int, float]]] = []
    if candidates.shape[0] == 0:
        return [[] for _ in range(queries.shape[0])]
    for start in range(0, queries.shape[0], 64):  # 64 rows at a time: a block of sims stays a few MB per 10,000
        sims = queries[start : start + 64] @ candidates.T
        lines = np.arange(sims.shape[0])
        own = selves[start : start + 64]
        sims[lines[own >= 0], own[own >= 0]] = -1.0
        top = min(keep, sims.shape[1])
        best = np.argpartition(-sims, top - 1, axis=1)[:, :top] if top < sims.shape[1] else np.argsort(-sims, axis=1)
        values = np.take_along_axis(sims, best, axis=1)
        for line in range(sims.shape[0]):
            order = np.argsort(-values[line], kind="stable")
            found.append(
                [(int(best[line, n]), float(values[line, n])) for n in order if values[line, n] >= min_similarity]
            )
    return found
