"""Work over forked processes (`host/forking.py`): each task in a worker that inherited the shared data (never
sent), results in order, and the same results in this process when the pool cannot start."""

from __future__ import annotations

import multiprocessing
import os
import threading
from multiprocessing import popen_fork

import pytest

from orcmem.host.forking import ForkPool, Spread

FAILED = "the work goes on in one process"


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
        alone = pool.map(_sum_where, [(0, 1_000)])  # one task: every worker starts all the same
        assert len(multiprocessing.active_children()) == 2 and alone[0][0] == sum(range(1_000))
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
        assert pool.map(_sum_where, [(0, 3)]) == [(3, os.getpid())]
        assert multiprocessing.active_children() == []


def test_spread_pays_from_its_threshold_with_two_cores_and_a_start_method() -> None:
    assert Spread(2, "fork", pool_from=10).pays(10) and not Spread(2, "fork", pool_from=10).pays(9)
    assert not Spread(1, "fork", pool_from=1).pays(10) and not Spread(2, "", pool_from=1).pays(10)
    assert Spread(2, "fork", chunk=4).ranges(10) == [(0, 4), (4, 8), (8, 10)]


def _fails(_shared: Shared, _task: int) -> int:
    raise ValueError("a task's own error")


def test_a_tasks_own_error_is_raised_as_it_is_not_taken_for_a_broken_pool(caplog: pytest.LogCaptureFixture) -> None:
    with ForkPool(Shared(), Spread(2, "fork", pool_from=1)) as pool, pytest.raises(ValueError, match="own error"):
        pool.map(_fails, [1, 2, 3])
    assert FAILED not in caplog.text  # not worked out again here as if the pool had broken


def test_a_fork_that_fails_midway_leaves_no_worker_behind(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real_fork, forks = os.fork, []

    def second_fork_fails() -> int:  # out of memory after the first worker started
        forks.append(1)
        if len(forks) == 2:
            raise OSError(12, "Cannot allocate memory")
        return real_fork()

    monkeypatch.setattr(popen_fork.os, "fork", second_fork_fails)
    spread = Spread(2, "fork", pool_from=1, chunk=100)
    with ForkPool(Shared(), spread) as pool:
        found = pool.map(_sum_where, spread.ranges(1_000))
    assert [total for total, _pid in found] == [sum(range(n, n + 100)) for n in range(0, 1_000, 100)]
    assert FAILED in caplog.text and len(forks) == 2
    assert multiprocessing.active_children() == []  # the first worker ended: the process can exit
