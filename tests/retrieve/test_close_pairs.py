"""Close pairs of vectors: the full comparison of a small store, and the cells of a large one finding the same."""

from __future__ import annotations

import numpy as np

from orcmem.host.forking import Spread
from orcmem.retrieve.close_pairs import EXACT_UP_TO, PER_VECTOR, close_pair_arrays, close_pairs


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _store(count: int, copies: int, seed: int) -> tuple[np.ndarray, set[tuple[int, int]]]:
    """Random unit vectors, the last `copies` of them a slightly moved copy of an earlier one."""
    rng = np.random.default_rng(seed)
    base = _unit(rng.normal(size=(count, 384)))
    originals = rng.choice(count, copies, replace=False)
    moved = _unit(base[originals] + 0.25 * _unit(rng.normal(size=(copies, 384))))
    planted = {(int(o), count + n) for n, o in enumerate(originals)}
    return np.vstack([base, moved]), planted


def test_a_small_store_is_compared_in_full() -> None:
    matrix, planted = _store(500, 20, seed=1)
    found = close_pairs(matrix, 0.9)
    assert {(i, j) for i, j, _s in found} == planted
    assert all(s >= 0.9 for _i, _j, s in found)
    assert close_pairs(matrix[:1], 0.9) == []


def test_a_large_store_is_cut_into_cells_and_misses_nothing_planted() -> None:
    matrix, planted = _store(EXACT_UP_TO * 3, 60, seed=2)
    found = close_pairs(matrix, 0.9)
    assert {(i, j) for i, j, _s in found} == planted


def test_each_vector_keeps_its_closest_partners() -> None:
    rng = np.random.default_rng(3)
    one = _unit(rng.normal(size=(1, 384)))
    crowd = _unit(one + 0.05 * rng.normal(size=(PER_VECTOR + 6, 384)))
    found = close_pairs(crowd, 0.5)
    per_row = np.bincount([i for i, _j, _s in found] + [j for _i, j, _s in found], minlength=len(crowd))
    assert per_row.max() <= 2 * PER_VECTOR and per_row.min() >= PER_VECTOR


def test_spread_over_forked_workers_the_search_gives_the_same_pairs_to_the_last_bit() -> None:
    matrix, _planted = _store(EXACT_UP_TO * 3, 60, seed=4)
    crowd = _unit(matrix[:1] + 0.02 * np.random.default_rng(5).normal(size=(EXACT_UP_TO + 500, 384)))
    matrix = np.vstack([matrix, crowd])  # a crowded cell too: cut again inside a worker
    alone = close_pair_arrays(matrix, 0.5)
    spread = close_pair_arrays(matrix, 0.5, spread=Spread(2, "fork", pool_from=1))
    assert len(alone[0]) > EXACT_UP_TO
    for one, other in zip(alone, spread, strict=True):
        assert one.dtype == other.dtype and one.tobytes() == other.tobytes()
    # A start method that cannot work: the same pairs, worked out here.
    failed = close_pair_arrays(matrix, 0.5, spread=Spread(2, "no-such-start-method", pool_from=1))
    assert all(one.tobytes() == other.tobytes() for one, other in zip(alone, failed, strict=True))
