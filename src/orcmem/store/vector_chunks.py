"""Every stored vector of a model at once, for the store audit: read from sqlite-vec's own chunk tables, a few large
blobs, instead of row by row through `memory_vec` (about half the time at 100,000: docs/benchmarks.md, The store
audit, Round 7).

Those tables are sqlite-vec's storage, not its interface: `memory_vec_chunks` (each chunk's size),
`memory_vec_vector_chunks00` (a chunk's vectors as one float32 blob) and `memory_vec_rowids` (where each row sits:
chunk and offset). So the read checks what it can (each blob's length, each offset) and compares a few vectors with
what `memory_vec` itself gives; any difference, or a sqlite-vec that stores them otherwise, and the vectors are read
through `memory_vec` as before.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

import apsw
import numpy as np  # this module is imported by the audit's read of the vectors only (`AuditScanRepository.vectors`)

from orcmem.models.constants import EMBEDDING_DIMENSIONS
from orcmem.models.errors import StoreError
from orcmem.store.vectors import _one_blas_thread

if TYPE_CHECKING:
    from orcmem.store.connection import Database

log = logging.getLogger("orcmem.store.vector_chunks")
CHECKED = 4  # vectors compared with what `memory_vec` gives for them

_CHUNKS = (
    "SELECT c.chunk_id, c.size, v.vectors FROM memory_vec_chunks c "
    "JOIN memory_vec_vector_chunks00 v ON v.rowid = c.chunk_id ORDER BY c.chunk_id"
)
_PLACES = (
    "SELECT e.memory_pk, r.chunk_id, r.chunk_offset FROM memory_embeddings e "
    "JOIN memory_vec_rowids r ON r.rowid = e.memory_pk WHERE e.model = ? ORDER BY e.memory_pk"
)
_THROUGH_VEC0 = (
    "SELECT e.memory_pk, v.embedding FROM memory_embeddings e JOIN memory_vec v ON v.memory_pk = e.memory_pk "
    "WHERE e.model = ? ORDER BY e.memory_pk"
)


def vectors_of(db: Database, pks: list[int], model: str) -> tuple[np.ndarray, np.ndarray]:
    """The stored vectors of `model` for the memories `pks`: (their pks, ascending, a unit-row float32 matrix); empty
    without sqlite-vec. numpy's BLAS is kept to one thread, as for search: the audit's many small products ran four
    times slower on two threads of a busy two-core machine."""
    _one_blas_thread()
    none = np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
    if not db.has_vectors or not pks:
        return none
    keys, matrix = model_vectors(db, model)
    wanted = np.isin(keys, np.array(pks, dtype=np.int64))
    if wanted.all():  # the usual case: no second copy of the matrix
        return keys, matrix
    return (keys[wanted], matrix[wanted]) if wanted.any() else none


def model_vectors(db: Database, model: str) -> tuple[np.ndarray, np.ndarray]:
    """(the pks, ascending, a float32 matrix of their vectors, a row each) of every stored vector of `model`."""
    try:
        found = _from_chunks(db, model)
    except (apsw.SQLError, StoreError, ValueError, TypeError):  # no such table or column, a NULL: another layout
        found = None
    if found is None:
        log.info("the vectors are read through memory_vec: sqlite-vec's chunk tables do not hold what it gives")
        return _through_vec0(db, model)
    return found


def _from_chunks(db: Database, model: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The vectors from the chunk tables, None when they do not hold what `memory_vec` gives."""
    with db.lock, _one_snapshot(db):  # where each vector sits, and the chunks, as one state of the store
        laid_out = db.query(_CHUNKS)
        places = np.array(db.query(_PLACES, (model,)), dtype=np.int64).reshape(-1, 3)
    if not len(places):  # no vector of this model
        return np.zeros(0, dtype=np.int64), np.zeros((0, EMBEDDING_DIMENSIONS), dtype=np.float32)
    if not laid_out:
        return None
    chunks = []
    for _chunk, size, blob in laid_out:
        vectors = np.frombuffer(blob, dtype="<f4")
        if vectors.size != int(size) * EMBEDDING_DIMENSIONS:
            return None
        chunks.append(vectors.reshape(-1, EMBEDDING_DIMENSIONS))
    ids = [int(chunk) for chunk, _size, _blob in laid_out]
    sizes = np.array([len(vectors) for vectors in chunks], dtype=np.int64)
    size_of = np.zeros(ids[-1] + 1, dtype=np.int64)
    size_of[ids] = sizes
    keys, chunk, offset = places[:, 0], places[:, 1], places[:, 2]
    if chunk.min() < 0 or chunk.max() > ids[-1] or (offset < 0).any() or (offset >= size_of[chunk]).any():
        return None
    matrix = np.empty((len(keys), EMBEDDING_DIMENSIONS), dtype=np.float32)
    by_chunk = np.argsort(chunk, kind="stable")  # each chunk's rows copied straight from its blob: no joined copy
    bounds = np.searchsorted(chunk[by_chunk], np.arange(ids[-1] + 2))
    for number, vectors in zip(ids, chunks, strict=True):
        rows = by_chunk[bounds[number] : bounds[number + 1]]
        matrix[rows] = vectors[offset[rows]]
    step = max(1, len(keys) // CHECKED)
    for row in range(0, len(keys), step)[:CHECKED]:
        stored = db.query_one("SELECT embedding FROM memory_vec WHERE memory_pk = ?", (int(keys[row]),))
        if stored is None or bytes(stored[0]) != matrix[row].astype("<f4").tobytes():
            return None
    return keys, matrix


@contextlib.contextmanager
def _one_snapshot(db: Database) -> Iterator[None]:
    """A read transaction around the statements inside (joined to the caller's transaction, if any)."""
    if db.conn.in_transaction:
        yield
        return
    db.conn.execute("BEGIN")
    try:
        yield
    finally:
        db.conn.execute("COMMIT")


def _through_vec0(db: Database, model: str) -> tuple[np.ndarray, np.ndarray]:
    """The vectors row by row through `memory_vec`."""
    rows = db.query(_THROUGH_VEC0, (model,))
    keys = np.fromiter((int(pk) for pk, _blob in rows), dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(blob for _pk, blob in rows), dtype="<f4").reshape(len(rows), EMBEDDING_DIMENSIONS)
    return keys, matrix.astype(np.float32, copy=False)
