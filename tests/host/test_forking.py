"""Work over forked processes (`host/forking.py`): each task in a worker that inherited the shared data (never
sent), results in order, and the same results in this process when the pool cannot start."""

from __future__ import annotations

import os
import threading

import pytest

from orcmem.host.forking import ForkPool, Spread

FAILED = "works in one process"


class Shared:
    """Shared data that cannot be pickled (a lock): a worker can only have it by inheriting it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.numbers = list(range(1_000))


def _sum_where(shared: Shared, bounds: tuple[int, int]) -> tuple[int, int]:
    """The sum of one slice of the shared numbers, and the process that worked it out."""
    return sum(shared.numbers[bounds[0] : bounds[1]]), os.getpid()


def test_tasks_run_in_forked_workers_over_what_they_inherited_in_order(caplog: pytest.LogCaptureFixture) -> None:
    spread = Spread(2, "fork", pool_from=1, chunk=100)
    with ForkPool(Shared(), spread) as pool:
        first = pool.map(_sum_where, spread.ranges(1_000))
        again = pool.map_later(_sum_where, [(0, 10)]).result()  # the same workers, a second time
    assert [total for total, _pid in first] == [sum(range(n, n + 100)) for n in range(0, 1_000, 100)]
    assert os.getpid() not in {pid for _total, pid in first + again}
    assert again[0][0] == sum(range(10))
    assert FAILED not in caplog.text


@pytest.mark.parametrize("spread", [Spread(2, "no-such-start-method", pool_from=1), Spread(1, "fork"), Spread(2, "")])
def test_without_a_usable_pool_every_task_runs_here(spread: Spread, caplog: pytest.LogCaptureFixture) -> None:
    with ForkPool(Shared(), spread) as pool:
        found = pool.map(_sum_where, [(0, 500), (500, 1_000)])
    assert found == [(sum(range(500)), os.getpid()), (sum(range(500, 1_000)), os.getpid())]
    assert (FAILED in caplog.text) == (spread.method == "no-such-start-method")


def test_a_pool_not_asked_for_runs_here() -> None:
    with ForkPool(Shared(), Spread(2, "fork", pool_from=1), use=False) as pool:
        assert not pool.parallel
        assert pool.map(_sum_where, [(0, 3)]) == [(3, os.getpid())]


def test_spread_pays_from_its_threshold_with_two_cores_and_a_start_method() -> None:
    assert Spread(2, "fork", pool_from=10).pays(10) and not Spread(2, "fork", pool_from=10).pays(9)
    assert not Spread(1, "fork", pool_from=1).pays(10) and not Spread(2, "", pool_from=1).pays(10)
    assert Spread(2, "fork", chunk=4).ranges(10) == [(0, 4), (4, 8), (8, 10)]
