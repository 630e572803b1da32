"""The store audit's per-memory work (today's secret rules, the generic rule, the facts: pure functions of a
memory's text), spread over the machine's cores when there is enough of it to pay for the processes' start, for the
audit and `StoreAudit.prepare` alike (docs/audit.md, Speed).

A pool that cannot start or breaks (no fork, a sandbox, memory, a killed worker) leaves the work to this process:
the same result, later.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from orcmem.rules.audit import is_generic
from orcmem.service.duplicates import memory_text
from orcmem.text.facts import facts_of, pack
from orcmem.text.redact import Redaction, redact_text

POOL_FROM = 8_000  # texts: below this the pool's start costs what it saves (docs/benchmarks.md, Round 5)
CHUNK = 2_500  # texts a worker takes at a time (a few: the pool's processes share the work as they free up)

# One memory's title, body and whether today's secret rules must look at it (not found clean by them yet).
Text = tuple[str, str, bool]
# What the audit works out of it: whether today's secret rules redact something in it (False when not asked), the
# generic rule's verdict (`rules/audit.is_generic`), its facts packed (`text/facts.pack`; None: not packable).
Traits = tuple[bool, bool, str | None]

log = logging.getLogger("orcmem.service.audit_parallel")
_forked: list[Text] = []  # the texts a forked worker reads (inherited, not sent: a pickled chunk costs its copy)
_forking = threading.Lock()  # one pool forks at a time (the Memory page may audit two projects at once)


@dataclass(frozen=True, slots=True)
class Spread:
    """How the work is spread: over `workers` processes started by `method` ("" : none), from `pool_from` texts."""

    workers: int
    method: str
    pool_from: int = POOL_FROM
    chunk: int = CHUNK

    @classmethod
    def here(cls) -> Spread:
        """This machine's: a process per core this process may use, started by fork on Linux (a forked worker
        inherits the texts and the rules already loaded, and runs only pure text functions); elsewhere none
        (macOS's system libraries are not safe to fork, and a fresh interpreter per worker would import the
        program's main module again)."""
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        usable = sys.platform == "linux" and "fork" in multiprocessing.get_all_start_methods()
        return cls(cores, "fork" if usable else "")


def secret_in(title: str, body: str) -> tuple[Redaction, Redaction] | None:
    """Today's rules over a memory's title and body, each on its own as the fix redacts them; None when neither
    holds a secret."""
    if not redact_text(f"{title}\n{body}").changed:  # one pass over both; each again only when one fired
        return None
    redacted = redact_text(title), redact_text(body)
    return redacted if any(part.changed for part in redacted) else None


def traits_of(texts: list[Text]) -> list[Traits]:
    """Each text's traits, in this process."""
    return [
        (scan and secret_in(title, body) is not None, is_generic(title, body), pack(facts_of(memory_text(title, body))))
        for title, body, scan in texts
    ]


def _forked_traits(start: int, end: int) -> list[Traits]:
    """The traits of the inherited texts from `start` to `end` (in a forked worker)."""
    return traits_of(_forked[start:end])


class Pending:
    """Traits being worked out: by a pool of processes started at once (this process is free meanwhile: the audit
    searches its close pairs), or in this process when they are asked for. A context manager: leaving it ends the
    pool."""

    def __init__(self, texts: list[Text], spread: Spread) -> None:
        """Start on `texts` as `spread` says (below `spread.pool_from` texts, on one core or without a start method:
        nothing starts, they are worked out here when asked)."""
        self.texts = texts
        self._pool: ProcessPoolExecutor | None = None
        self._parts: Iterator[list[Traits]] | None = None
        self._done: list[Traits] | None = None
        if len(texts) < spread.pool_from or spread.workers < 2 or not spread.method:
            return
        starts = list(range(0, len(texts), spread.chunk))
        ends = [min(start + spread.chunk, len(texts)) for start in starts]
        try:
            context = multiprocessing.get_context(spread.method)
            redact_text("warm up: the rules' index, built once here and inherited by the workers")
            with _forking:  # the workers fork within `map` (a fork pool starts them all at the first task)
                _forked[:] = texts
                try:
                    self._pool = ProcessPoolExecutor(min(spread.workers, len(starts)), mp_context=context)
                    self._parts = self._pool.map(_forked_traits, starts, ends)
                finally:
                    _forked.clear()
        except Exception as exc:  # noqa: BLE001 - any failure of the pool (no fork, a sandbox, memory)
            self._give_up(exc)

    def result(self) -> list[Traits]:
        """Each text's traits, in order (the pool's, else this process's)."""
        if self._done is None:
            try:
                if self._parts is not None:
                    self._done = [traits for part in self._parts for traits in part]
            except Exception as exc:  # noqa: BLE001 - a worker killed, the pool broken
                self._give_up(exc)
            finally:
                self.close()
            if self._done is None:
                self._done = traits_of(self.texts)
        return self._done

    def _give_up(self, exc: Exception) -> None:
        log.warning("the audit works in one process: %s: %s", type(exc).__name__, exc)
        self._parts = None
        self.close()

    def close(self) -> None:
        """End the pool, if any (work not gathered yet is dropped)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> Pending:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def work_out(texts: list[Text], spread: Spread | None = None) -> list[Traits]:
    """Each text's traits, in order: over a pool of processes from `spread.pool_from` texts on (`Spread.here()` by
    default); in this process below that, on one core, or when the pool fails."""
    with Pending(texts, spread or Spread.here()) as pending:
        return pending.result()
