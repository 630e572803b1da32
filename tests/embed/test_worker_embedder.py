"""WorkerEmbedder: lazy start, bounded waits, unavailable for good after a load failure, never raises."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from orcmem.embed.embedder import Embedder
from orcmem.embed.worker import WorkerEmbedder
from orcmem.models.errors import ModelError
from tests.embedders import FailingEmbedder, HashingEmbedder, StalledEmbedder

FAKE_ID = "fake-hashing-v1"


@pytest.fixture
def make() -> Iterator[Callable[..., WorkerEmbedder]]:
    """Build workers and close them all at the end of the test."""
    made: list[WorkerEmbedder] = []

    def build(load: Callable[[], Embedder], **kwargs: object) -> WorkerEmbedder:
        kwargs.setdefault("model_id", FAKE_ID)
        worker = WorkerEmbedder(load, **kwargs)  # type: ignore[arg-type]
        made.append(worker)
        return worker

    yield build
    for worker in made:
        worker.close(timeout=1)


def counting_loader(embedder: Embedder) -> tuple[Callable[[], Embedder], list[int]]:
    """A loader returning `embedder`, and the list it appends to on every call."""
    calls: list[int] = []

    def load() -> Embedder:
        calls.append(1)
        return embedder

    return load, calls


def test_it_satisfies_the_protocol(make: Callable[..., WorkerEmbedder]) -> None:
    worker = make(HashingEmbedder)
    assert isinstance(worker, Embedder)
    assert worker.model_id == FAKE_ID
    assert worker.dimensions == 384


def test_nothing_starts_until_there_is_text(make: Callable[..., WorkerEmbedder]) -> None:
    load, calls = counting_loader(HashingEmbedder())
    worker = make(load, thread_name="orcmem-embedder-lazy-start-test")
    assert worker.embed_documents([]) == []  # answered on the caller's thread: no thread was started for it
    assert calls == []
    assert not worker.ready
    assert worker.available
    assert not any(t.name == "orcmem-embedder-lazy-start-test" for t in threading.enumerate())


def test_vectors_match_the_wrapped_embedder(make: Callable[..., WorkerEmbedder]) -> None:
    worker = make(HashingEmbedder)
    texts = [f"text number {i}" for i in range(70)]  # three batches
    assert worker.embed_documents(texts) == HashingEmbedder().embed_documents(texts)
    assert worker.embed_query("hello world", timeout=2) == HashingEmbedder().embed_query("hello world")
    assert worker.ready


def test_the_model_loads_once_in_one_daemon_thread(make: Callable[..., WorkerEmbedder]) -> None:
    load, calls = counting_loader(HashingEmbedder())
    seen_threads: list[threading.Thread] = []

    def spying_load() -> Embedder:
        seen_threads.append(threading.current_thread())
        return load()

    worker = make(spying_load)
    for _ in range(5):
        assert worker.embed_query("x", timeout=2) is not None
    assert calls == [1]
    assert seen_threads[0] is not threading.main_thread()
    assert seen_threads[0].daemon


def test_a_stalled_model_gives_none_within_the_query_timeout(make: Callable[..., WorkerEmbedder]) -> None:
    stalled = StalledEmbedder()
    worker = make(lambda: stalled)
    started = time.monotonic()
    assert worker.embed_query("where is the config") is None  # default timeout: 0.5 s
    elapsed = time.monotonic() - started
    assert 0.45 <= elapsed < 5  # the stalled model would hold it for thirty
    assert worker.available  # slow is not broken
    stalled.release.set()


def test_a_slow_load_gives_none_and_then_works(make: Callable[..., WorkerEmbedder]) -> None:
    release = threading.Event()

    def slow_load() -> Embedder:
        release.wait(10)
        return HashingEmbedder()

    worker = make(slow_load)
    started = time.monotonic()
    assert worker.embed_query("hi", timeout=0.2) is None
    assert time.monotonic() - started < 3  # the load itself waits ten seconds: the query did not
    release.set()
    assert worker.wait_ready(5)
    assert worker.embed_query("hi", timeout=2) == HashingEmbedder().embed_query("hi")


def test_a_failing_load_makes_it_unavailable_and_it_never_raises(make: Callable[..., WorkerEmbedder]) -> None:
    attempts: list[int] = []

    def broken() -> Embedder:
        attempts.append(1)
        raise ModelError("The embedding model download failed with HTTP 404.")

    worker = make(broken)
    assert worker.embed_query("anything", timeout=2) is None
    assert not worker.available
    assert worker.unavailable_reason == "The embedding model download failed with HTTP 404."
    assert worker.embed_documents(["a", "b"]) is None
    assert worker.embed_query("again") is None
    assert not worker.wait_ready(1)
    assert attempts == [1]  # no new thread, no second load


def test_an_unexpected_load_error_is_described(make: Callable[..., WorkerEmbedder]) -> None:
    def broken() -> Embedder:
        raise RuntimeError("onnxruntime exploded")

    worker = make(broken)
    assert not worker.wait_ready(2)
    assert worker.unavailable_reason == "The embedding model could not be loaded (RuntimeError: onnxruntime exploded)."


def test_pending_calls_get_none_when_loading_fails(make: Callable[..., WorkerEmbedder]) -> None:
    release, loading = threading.Event(), threading.Event()

    def fails_later() -> Embedder:
        loading.set()  # the load starts with the first text: the caller's call is pending now
        release.wait(10)
        raise ModelError("bad files")

    worker = make(fails_later)
    results: list[object] = []
    caller = threading.Thread(target=lambda: results.append(worker.embed_documents(["a"])))
    caller.start()
    assert loading.wait(5)
    release.set()
    caller.join(5)
    assert results == [None]


def test_a_model_with_the_wrong_id_is_refused(make: Callable[..., WorkerEmbedder]) -> None:
    worker = make(lambda: HashingEmbedder(model_id="something-else"))
    assert not worker.wait_ready(2)
    assert "reports id 'something-else'" in (worker.unavailable_reason or "")


def test_a_model_with_the_wrong_dimensions_is_refused(make: Callable[..., WorkerEmbedder]) -> None:
    worker = make(lambda: HashingEmbedder(dimensions=768))
    assert not worker.wait_ready(2)
    assert "768-dimension" in (worker.unavailable_reason or "")


def test_an_embedding_error_returns_none_but_keeps_it_available(make: Callable[..., WorkerEmbedder]) -> None:
    worker = make(lambda: FailingEmbedder("inference failed"))
    assert worker.embed_documents(["a"]) is None
    assert worker.embed_query("a", timeout=2) is None
    assert worker.available
    assert worker.last_error == "inference failed"


def test_close_answers_pending_calls_and_refuses_new_ones(make: Callable[..., WorkerEmbedder]) -> None:
    stalled = StalledEmbedder()
    worker = make(lambda: stalled)
    results: list[object] = []
    callers = [threading.Thread(target=lambda: results.append(worker.embed_documents(["a"]))) for _ in range(3)]
    for caller in callers:
        caller.start()
    assert stalled.entered.wait(5)
    started = time.monotonic()
    worker.close(timeout=0.2)
    assert time.monotonic() - started < 5  # bounded even though the model is stuck for thirty seconds
    for caller in callers:
        caller.join(2)
    assert results == [None, None, None]
    assert not worker.available
    assert worker.unavailable_reason == "The embedder was closed."
    assert worker.embed_query("late", timeout=1) is None
    stalled.release.set()


def test_close_stops_a_long_job_at_the_next_batch(make: Callable[..., WorkerEmbedder]) -> None:
    slow = StalledEmbedder()
    worker = make(lambda: slow)
    result: list[object] = []
    caller = threading.Thread(target=lambda: result.append(worker.embed_documents(["t"] * 320)))
    caller.start()
    assert slow.entered.wait(5)
    worker.close(timeout=0)
    slow.release.set()
    caller.join(2)
    assert result == [None]
    worker.close(timeout=5)  # waits for the worker's thread to end
    assert len(slow.calls) == 1  # the first batch finished; the other nine never ran


def test_close_on_an_idle_worker_is_quick(make: Callable[..., WorkerEmbedder]) -> None:
    worker = make(HashingEmbedder)
    worker.close()
    assert not worker.available
    assert worker.embed_documents(["a"]) is None


def test_queries_overtake_a_long_document_job(make: Callable[..., WorkerEmbedder]) -> None:
    batches = threading.Event()

    class Slow(HashingEmbedder):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:  # type: ignore[override]
            batches.set()
            time.sleep(0.05)  # the model's own time for a batch
            return super().embed_documents(texts)

    worker = make(Slow)
    assert worker.wait_ready(2)
    job = threading.Thread(target=lambda: worker.embed_documents(["doc"] * (32 * 40)))  # 40 batches, ~2 s
    job.start()
    assert batches.wait(5)
    started = time.monotonic()
    assert worker.embed_query("urgent", timeout=1) is not None
    assert time.monotonic() - started < 1.0  # behind the whole job it would take two seconds
    worker.close(timeout=1)
    job.join(5)


def test_a_timed_out_document_call_is_abandoned(make: Callable[..., WorkerEmbedder]) -> None:
    stalled = StalledEmbedder()
    worker = make(lambda: stalled)
    assert worker.embed_documents(["a"] * 100, timeout=0.2) is None
    stalled.release.set()
    assert worker.embed_documents(["b"], timeout=5) is not None  # documents run in order: the abandoned job is over
    assert [len(call) for call in stalled.calls] == [32, 1]  # it stopped after the batch in flight


def test_a_query_here_runs_beside_a_document_batch_when_the_model_allows_it(
    make: Callable[..., WorkerEmbedder],
) -> None:
    class Blocking(HashingEmbedder):
        """Its document batch holds until released; its queries answer at once."""

        concurrent_calls = True

        def __init__(self) -> None:
            super().__init__(model_id=FAKE_ID)
            self.entered, self.release = threading.Event(), threading.Event()

        def embed_documents(self, texts: list[str]) -> list[list[float]]:  # type: ignore[override]
            if len(texts) > 1:
                self.entered.set()
                self.release.wait(5)
            return super().embed_documents(texts)

    model = Blocking()
    worker = make(lambda: model)
    assert worker.wait_ready(2)
    job = threading.Thread(target=lambda: worker.embed_documents(["doc"] * 32))
    job.start()
    assert model.entered.wait(2)
    started = time.monotonic()
    assert worker.embed_query_here("urgent") == HashingEmbedder(model_id=FAKE_ID).embed_query("urgent")
    assert time.monotonic() - started < 3  # not queued behind the five-second batch the worker thread is in
    model.release.set()
    job.join(5)


def test_a_query_here_is_none_before_loading_or_for_a_model_that_cannot_be_shared(
    make: Callable[..., WorkerEmbedder],
) -> None:
    worker = make(HashingEmbedder)
    assert worker.embed_query_here("q") is None  # not loaded yet: the caller falls back to the queue
    assert worker.wait_ready(2)
    assert worker.embed_query_here("q") is None  # HashingEmbedder does not say its calls may overlap
