"""Work spread over this machine's cores by forked processes that inherit what they read (the store audit's per-memory
work, its close-pair search and its pairs' verdicts: docs/audit.md, Speed).

A worker is forked with the work's shared data already in memory (a hundred thousand texts or vectors are read, not
sent: a pickled copy would cost what the work saves); only each task's few numbers travel. A pool that cannot start
or breaks (no fork, a sandbox, memory, a killed worker) leaves the work to this process: the same results, later.
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
import pickle
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

POOL_FROM = 8_000  # items: below this many texts a pool's start cost what it saved (docs/benchmarks.md, Round 5);
# kept for vectors and pairs, whose tasks cost as much or more per item
CHUNK = 2_500  # items a worker takes at a time (a few: the pool's processes share the work as they free up)

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")

log = logging.getLogger("orcmem.host.forking")
# How a pool fails while its results are gathered: a worker killed or out of memory, the pool ended, a result that
# cannot travel back. Any other exception is a task's own and is raised as it is.
_POOL_FAILURES = (BrokenProcessPool, CancelledError, OSError, EOFError, pickle.PicklingError)
_inherited: list[object] = []  # what a forked worker reads: set only while a pool forks (under `_forking`)
_forking = threading.Lock()  # one pool forks at a time (the Memory page may audit two projects at once)


@dataclass(frozen=True, slots=True)
class Spread:
    """How work is spread: over `workers` processes started by `method` ("": none), from `pool_from` items on, in
    tasks of `chunk` items."""

    workers: int
    method: str
    pool_from: int = POOL_FROM
    chunk: int = CHUNK

    @classmethod
    def here(cls) -> Spread:
        """This machine's: a process per core this process may use, started by fork on Linux (a forked worker
        inherits the data and the code already loaded, and runs only pure functions of them); elsewhere none
        (macOS's system libraries are not safe to fork, and a fresh interpreter per worker would import the
        program's main module again)."""
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        usable = sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods()
        return cls(cores, "fork" if usable else "")

    def pays(self, items: int) -> bool:
        """Whether `items` are enough work for a pool here."""
        return items >= self.pool_from and self.workers >= 2 and bool(self.method)

    def ranges(self, items: int) -> list[tuple[int, int]]:
        """`items` cut into tasks of `chunk`: (start, end) each."""
        return [(start, min(start + self.chunk, items)) for start in range(0, items, self.chunk)]


def _run(task: tuple[Callable[[object, object], object], object]) -> object:
    """A task in a forked worker: the function over what the worker inherited."""
    function, argument = task
    return function(_inherited[0], argument)


class Later(Generic[R]):
    """Results being worked out by a pool, in order, gathered when first asked for (this process is free meanwhile);
    worked out here instead if the pool fails."""

    def __init__(
        self, parts: Iterator[R] | None, here: Callable[[], list[R]], give_up: Callable[[Exception], None]
    ) -> None:
        """Over the pool's `parts` (None: no pool), `here` to work them out in this process, and the pool's
        `give_up`."""
        self._parts, self._here, self._give_up = parts, here, give_up
        self._done: list[R] | None = None

    def result(self) -> list[R]:
        """Every task's result, in order."""
        if self._done is None:
            try:
                if self._parts is not None:
                    self._done = list(self._parts)
            except _POOL_FAILURES as exc:  # a worker killed, the pool broken (a task's own error is raised as is)
                self._give_up(exc)
            if self._done is None:
                self._done = self._here()
        return self._done


class ForkPool(Generic[S]):
    """Workers forked from this process, each holding `shared` as it was at the fork, over which tasks run. A context
    manager: leaving it ends the workers. Without a usable pool (`use` False, one core, no start method, a failure),
    every task runs in this process."""

    def __init__(self, shared: S, spread: Spread, *, use: bool = True) -> None:
        """Workers for `shared`, forked at the first `map` (none when `use` is False or `spread` has no pool)."""
        self.shared = shared
        self.spread = spread
        self._pool: ProcessPoolExecutor | None = None
        self._usable = use and spread.workers >= 2 and bool(spread.method)

    def map_later(self, function: Callable[[S, T], R], tasks: Sequence[T]) -> Later[R]:
        """`function(shared, task)` for each task, started now on the workers (forked at the first call, which
        holds `shared` for them), gathered by `Later.result`."""

        def here() -> list[R]:
            return [function(self.shared, task) for task in tasks]

        if not self._usable or not tasks:
            return Later(None, here, self.give_up)
        sent = [(function, task) for task in tasks]
        try:
            if self._pool is not None:
                return Later(cast(Iterator[R], self._pool.map(_run, sent)), here, self.give_up)
            with _forking:  # the workers fork within `map`: a fork pool starts them all at the first task
                _inherited[:] = [self.shared]
                gc.freeze()  # a worker's collections then skip the inherited objects (touching each copies its page)
                try:
                    context = multiprocessing.get_context(self.spread.method)
                    # All the workers at once, whatever this first map's tasks: later maps reuse them.
                    self._pool = ProcessPoolExecutor(self.spread.workers, mp_context=context)
                    parts = cast(Iterator[R], self._pool.map(_run, sent))
                finally:
                    gc.unfreeze()
                    _inherited.clear()
            return Later(parts, here, self.give_up)
        except Exception as exc:  # noqa: BLE001 - any failure of the pool (no fork, a sandbox, memory)
            self.give_up(exc)
            return Later(None, here, self.give_up)

    def map(self, function: Callable[[S, T], R], tasks: Sequence[T]) -> list[R]:
        """`function(shared, task)` for each task, in order (on the workers, or here)."""
        return self.map_later(function, tasks).result()

    def give_up(self, exc: Exception) -> None:
        """Leave the rest of the work to this process, and say so once."""
        log.warning("the work goes on in one process: %s: %s", type(exc).__name__, exc)
        self._usable = False
        self.close()

    def close(self) -> None:
        """End the workers, if any (work not gathered yet is dropped)."""
        if self._pool is None:
            return
        pool, self._pool = self._pool, None
        started = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=True, cancel_futures=True)
        # A pool whose second fork failed never started the thread that ends its workers: the first one would wait
        # for work forever, and the process could not exit.
        for worker in started:
            if worker.is_alive():
                worker.terminate()
                worker.join()

    def __enter__(self) -> ForkPool[S]:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
