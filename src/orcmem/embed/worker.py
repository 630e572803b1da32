"""Run an Embedder in one background thread, so loading and embedding never block the caller.

The thread starts on the first call that has text to embed. A query waits at most its timeout and gets None when
the vector is late (the caller then searches by words). Any failure to load makes the embedder unavailable for
good: every pending and later call returns None, nothing is raised, and no new thread is started.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from orcmem.embed.embedder import Embedder, load_embedder
from orcmem.embed.model_files import MINILM_ARCHIVE, ModelSource
from orcmem.models.constants import EMBED_BATCH_SIZE, EMBEDDING_DIMENSIONS, QUERY_EMBED_TIMEOUT_S
from orcmem.models.errors import ModelError, OrcmemError

CLOSE_TIMEOUT_S = 5.0

_IDLE = "idle"
_LOADING = "loading"
_READY = "ready"
_FAILED = "failed"
_CLOSED = "closed"


class _Job:
    """Texts waiting for vectors, and the caller's way to learn the result."""

    __slots__ = ("texts", "query", "done", "result", "abandoned")

    def __init__(self, texts: list[str], query: bool) -> None:
        self.texts = texts
        self.query = query
        self.done = threading.Event()
        self.result: Any = None
        self.abandoned = False


class WorkerEmbedder:
    """An Embedder whose model loads and runs in one daemon thread; calls return None instead of waiting or raising."""

    def __init__(
        self,
        load: Callable[[], Embedder],
        *,
        model_id: str,
        dimensions: int = EMBEDDING_DIMENSIONS,
        batch_size: int = EMBED_BATCH_SIZE,
        query_timeout: float = QUERY_EMBED_TIMEOUT_S,
        thread_name: str = "orcmem-embedder",
    ) -> None:
        """Remember how to load the model; nothing is loaded until the first call with text.

        Args:
            load: builds the real embedder; runs in the worker thread, and anything it raises makes this unavailable.
            model_id: the id the loaded embedder must report (stored vectors are tagged with it).
            dimensions: the vector length the loaded embedder must report.
            batch_size: texts per model call; queries are served between batches of a long job.
            query_timeout: the default wait of `embed_query`, in seconds.
            thread_name: the worker thread's name.
        """
        self._load = load
        self._model_id = model_id
        self._dimensions = dimensions
        self._batch_size = batch_size
        self._query_timeout = query_timeout
        self._thread_name = thread_name
        self._cond = threading.Condition()
        self._queries: deque[_Job] = deque()
        self._documents: deque[_Job] = deque()
        self._current: _Job | None = None
        self._thread: threading.Thread | None = None
        self._state = _IDLE
        self._reason: str | None = None
        self._last_error: str | None = None
        self._shared: Embedder | None = None

    @property
    def model_id(self) -> str:
        """The id of the model this embedder runs."""
        return self._model_id

    @property
    def dimensions(self) -> int:
        """The length of every vector."""
        return self._dimensions

    @property
    def available(self) -> bool:
        """False once loading failed or the embedder was closed; True while it works or has not been tried."""
        with self._cond:
            return self._state not in (_FAILED, _CLOSED)

    @property
    def ready(self) -> bool:
        """True once the model has loaded and the embedder is open."""
        with self._cond:
            return self._state == _READY

    @property
    def unavailable_reason(self) -> str | None:
        """Why the embedder is unavailable (a user-readable sentence), or None while it is available."""
        with self._cond:
            return self._reason

    @property
    def last_error(self) -> str | None:
        """The error of the most recent embedding call that failed after the model had loaded, if any."""
        with self._cond:
            return self._last_error

    def start(self) -> None:
        """Begin loading the model now rather than on the first call (no-op if started, failed or closed)."""
        with self._cond:
            self._start_locked()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Start loading if needed and wait up to `timeout` seconds; True if the model is ready."""
        with self._cond:
            self._start_locked()
            self._cond.wait_for(lambda: self._state != _LOADING, timeout)
            return self._state == _READY

    def embed_documents(self, texts: Sequence[str], timeout: float | None = None) -> list[list[float]] | None:
        """One vector per text, or None if the embedder is unavailable, was closed, or `timeout` passed."""
        if not texts:
            return []
        result = self._submit(_Job(list(texts), query=False), timeout)
        return result if isinstance(result, list) else None

    def embed_query(self, text: str, timeout: float | None = None) -> list[float] | None:
        """The query's vector, or None if it is not ready within `timeout` (default: the query timeout, 0.5 s)."""
        wait = self._query_timeout if timeout is None else timeout
        result = self._submit(_Job([text], query=True), wait)
        return result if isinstance(result, list) else None

    def embed_query_here(self, text: str) -> list[float] | None:
        """The query's vector computed on the calling thread, or None while the model is not loaded (or cannot be
        shared between threads) or when it fails.

        For callers that bound the wait themselves (search runs this in a thread and waits with a timeout): it
        skips the queue and the worker thread, so a query never waits behind a batch of documents.
        """
        with self._cond:
            model = self._shared if self._state == _READY else None
        if model is None:
            return None
        vector: list[float] | None = self._embed(model, [text], query=True)
        return vector

    def close(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        """Refuse new work, answer pending calls with None, and wait at most `timeout` seconds for the thread."""
        with self._cond:
            if self._state != _FAILED:
                self._reason = "The embedder was closed."
            self._state = _CLOSED
            pending = self._drain_locked()
            self._cond.notify_all()
        for job in pending:
            self._finish(job, None)
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _submit(self, job: _Job, timeout: float | None) -> Any:
        """Queue `job`, wait for it up to `timeout`, and return its result (None on any failure)."""
        with self._cond:
            if self._state in (_FAILED, _CLOSED):
                return None
            self._start_locked()
            (self._queries if job.query else self._documents).append(job)
            self._cond.notify_all()
        if job.done.wait(timeout):
            return job.result
        with self._cond:
            if job.done.is_set():
                return job.result
            job.abandoned = True
            queue = self._queries if job.query else self._documents
            if job in queue:
                queue.remove(job)
        return None

    def _start_locked(self) -> None:
        if self._state != _IDLE:
            return
        self._state = _LOADING
        # A daemon thread never keeps the process alive; close() is still the polite way out.
        self._thread = threading.Thread(target=self._run, name=self._thread_name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        """The worker thread: load the model, then serve jobs until closed."""
        try:
            model = self._load()
            _check_model(model, self._model_id, self._dimensions)
        except BaseException as exc:  # any failure to load, even SystemExit from a library, means "unavailable"
            self._fail(str(exc) if isinstance(exc, OrcmemError) else _load_failure(exc))
            return
        with self._cond:
            if self._state != _LOADING:
                return
            self._state = _READY
            # Only a model that says its calls may overlap is ever called outside this thread.
            self._shared = model if getattr(model, "concurrent_calls", False) else None
            self._cond.notify_all()
        try:
            self._serve(model)
        except BaseException as exc:
            self._fail(f"The embedding worker stopped ({_describe(exc)}).")

    def _serve(self, model: Embedder) -> None:
        """Take jobs, queries first, until the embedder is closed."""
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._state != _READY or bool(self._queries or self._documents))
                if self._state != _READY:
                    return
                job = self._queries.popleft() if self._queries else self._documents.popleft()
                self._current = job
            try:
                if job.query:
                    self._finish(job, self._embed(model, job.texts, query=True))
                else:
                    self._run_documents(model, job)
            finally:
                with self._cond:
                    self._current = None

    def _run_documents(self, model: Embedder, job: _Job) -> None:
        """Embed a document job batch by batch, serving waiting queries between batches."""
        vectors: list[list[float]] = []
        for start in range(0, len(job.texts), self._batch_size):
            with self._cond:
                if self._state != _READY or job.abandoned:
                    break
                queries = list(self._queries)
                self._queries.clear()
            for query in queries:
                self._finish(query, self._embed(model, query.texts, query=True))
            batch = self._embed(model, job.texts[start : start + self._batch_size], query=False)
            if batch is None:
                break
            vectors.extend(batch)
        else:
            self._finish(job, vectors)
            return
        self._finish(job, None)

    def _embed(self, model: Embedder, texts: list[str], *, query: bool) -> Any:
        """Call the model; a failure is remembered in `last_error` and answered with None."""
        try:
            if query:
                vector = model.embed_query(texts[0])
                return None if vector is None else _as_floats(vector)
            vectors = model.embed_documents(texts)
            if vectors is None:
                return None
            rows = [_as_floats(vector) for vector in vectors]
            if len(rows) != len(texts):
                raise ValueError(f"the model returned {len(rows)} vectors for {len(texts)} texts")
            return rows
        except Exception as exc:
            with self._cond:
                self._last_error = _describe(exc)
            return None

    def _fail(self, reason: str) -> None:
        """Make the embedder unavailable for good and answer everything waiting with None."""
        with self._cond:
            if self._state != _CLOSED:
                self._state = _FAILED
                self._reason = reason
            pending = self._drain_locked()
            self._cond.notify_all()
        for job in pending:
            self._finish(job, None)

    def _drain_locked(self) -> list[_Job]:
        pending = [*self._queries, *self._documents]
        if self._current is not None:
            pending.append(self._current)
        self._queries.clear()
        self._documents.clear()
        return pending

    def _finish(self, job: _Job, result: Any) -> None:
        """Give `job` its result once; a later answer (say, after close) is dropped."""
        with self._cond:
            if job.done.is_set():
                return
            job.result = result
            job.done.set()


def worker_embedder(models_dir: Path, source: ModelSource = MINILM_ARCHIVE, *, install: bool = False) -> WorkerEmbedder:
    """A WorkerEmbedder that loads the pinned model of `source` from `models_dir` on first use, downloading or
    copying the files in its thread if `install` and they are missing or altered (`load_embedder`'s other options,
    wrapped in `WorkerEmbedder(partial(load_embedder, ...))`, when a caller needs them)."""
    return WorkerEmbedder(partial(load_embedder, models_dir, source, install=install), model_id=source.pins.model_id)


def _check_model(model: Embedder, model_id: str, dimensions: int) -> None:
    """Refuse a loaded model whose vectors would be stored under the wrong id or length."""
    if model.model_id != model_id:
        raise ModelError(f"The embedding model reports id {model.model_id!r}, expected {model_id!r}.")
    if model.dimensions != dimensions:
        raise ModelError(f"The embedding model makes {model.dimensions}-dimension vectors, expected {dimensions}.")


def _as_floats(vector: Any) -> list[float]:
    """A plain list of floats from a list or a numpy row."""
    values = vector.tolist() if hasattr(vector, "tolist") else vector
    return [float(value) for value in values]


def _load_failure(exc: BaseException) -> str:
    """The reason shown when loading raised something other than orcmem's own errors."""
    return f"The embedding model could not be loaded ({_describe(exc)})."


def _describe(exc: BaseException) -> str:
    """An exception as 'Type: message', or just the message for orcmem's own errors."""
    if isinstance(exc, OrcmemError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
