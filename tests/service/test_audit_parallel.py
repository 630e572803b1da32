"""The store audit's per-memory work over a pool of processes (`service/audit_parallel.py`): the same traits as in
this process, in order, and the same when the pool cannot start."""

from __future__ import annotations

import multiprocessing
import os
import signal

import pytest

from orcmem.host.forking import Spread
from orcmem.service.audit_parallel import Pending, Text, traits_of, work_out
from orcmem.text.facts import unpack
from tests.abuse.fake_secrets import corpus

FAILED = "the work goes on in one process"


def _texts() -> list[Text]:
    """Secrets of every kind (one not asked about), generic memories, and memories stating facts."""
    texts: list[Text] = [(f"Deploy key {n}", f"Set it with {fake.text}", True) for n, fake in enumerate(corpus())]
    texts.append(("Old token", f"Set it with {corpus()[0].text}", False))  # found clean before: not scanned again
    texts += [("Be careful", "Always test your changes.", True), ("Note", "ok", True)]
    texts += [
        (f"The API listens on {port}", f"`make dev` serves it on localhost:{port}; tests use PORT={port + 1}.", True)
        for port in range(8000, 8040)
    ]
    return texts


def test_the_pool_gives_each_texts_traits_in_order_as_this_process_does(caplog: pytest.LogCaptureFixture) -> None:
    texts = _texts()
    alone = traits_of(texts)
    pooled = work_out(texts, Spread(2, "fork", pool_from=1, chunk=7))
    assert pooled == alone
    assert FAILED not in caplog.text  # the pool ran
    secret = [found for found, _generic, _facts in pooled]
    assert secret[: len(corpus())] == [True] * len(corpus()) and secret[len(corpus())] is False
    assert [generic for _secret, generic, _facts in pooled[len(corpus()) + 1 : len(corpus()) + 3]] == [True, True]
    packed = pooled[-1][2]
    assert packed is not None and {"8039", "8040", "localhost:8039", "make dev"} <= unpack(packed)


def test_a_pool_that_cannot_start_leaves_the_work_to_this_process(caplog: pytest.LogCaptureFixture) -> None:
    texts = _texts()
    assert work_out(texts, Spread(2, "no-such-start-method", pool_from=1)) == traits_of(texts)
    assert FAILED in caplog.text


def test_few_texts_or_one_core_stay_in_this_process(caplog: pytest.LogCaptureFixture) -> None:
    texts = _texts()
    # A start method that cannot work would log its failure: none is logged, so no pool was started.
    assert work_out(texts, Spread(2, "no-such-start-method", pool_from=len(texts) + 1)) == traits_of(texts)
    assert work_out(texts, Spread(1, "no-such-start-method", pool_from=1)) == traits_of(texts)
    assert FAILED not in caplog.text


def test_a_worker_killed_midway_leaves_the_work_to_this_process(caplog: pytest.LogCaptureFixture) -> None:
    texts = _texts()[len(corpus()) :] * 200  # no secret: about half a second of work, still going when killed
    with Pending(texts, Spread(2, "fork", pool_from=1, chunk=50)) as pending:
        workers = multiprocessing.active_children()
        assert workers  # the pool started
        for worker in workers:
            os.kill(worker.pid or 0, signal.SIGKILL)
        assert pending.result() == traits_of(texts)
    assert FAILED in caplog.text
