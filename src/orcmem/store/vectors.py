"""The vectors repository: sqlite-vec's `memory_vec` is the stored truth; an in-memory copy answers k-NN fast."""

from __future__ import annotations

import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from orcmem.models.data_shapes import Row
from orcmem.models.errors import ValidationError
from orcmem.store.connection import VECTOR_DIMENSIONS, Database, Repository
from orcmem.store.visibility import VISIBLE, VISIBLE_UNINDEXED_AT

if TYPE_CHECKING:
    import numpy as np

_VISIBLE = f"m.status = 'active' AND {VISIBLE}"
_TEXT = "m.title || char(10) || m.body"  # what a memory's vector is made from, in SQL (`embedded_text`)
_blas_limited = False


def _one_blas_thread() -> None:
    """Keep numpy's BLAS to one thread, once per process.

    The scan is a single matrix-vector product of a millisecond or less, and search runs it in a background
    thread beside the word search. A second BLAS thread must first be scheduled, which on a busy two-core machine
    took 6-7 ms per scan at 10,000 memories (one thread: 0.6 ms).
    """
    global _blas_limited
    if _blas_limited:
        return
    _blas_limited = True
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

        threadpool_limits(limits=1, user_api="blas")
    except Exception:  # noqa: BLE001 - without the limit the scan is only slower
        pass


def pack(vector: Sequence[float]) -> bytes:
    """Little-endian float32 bytes, the form sqlite-vec stores."""
    if len(vector) != VECTOR_DIMENSIONS:
        raise ValidationError(f"expected {VECTOR_DIMENSIONS} dimensions, got {len(vector)}")
    return struct.pack(f"<{VECTOR_DIMENSIONS}f", *(float(x) for x in vector))


def embedded_text(title: str, body: str) -> str:
    """What a memory's vector is made from: its title, a newline, its body."""
    return f"{title}\n{body}"


def unpack(blob: bytes) -> list[float]:
    """A stored vector's floats."""
    return list(struct.unpack(f"<{VECTOR_DIMENSIONS}f", blob))


@dataclass(frozen=True, slots=True)
class PendingMemory:
    """A memory that needs a vector: its public id and the text to embed."""

    id: str
    text: str


@dataclass(frozen=True, slots=True)
class Scan:
    """A query's similarity to every stored vector of one model (row i belongs to memory pk `pks[i]`)."""

    model: str
    pks: np.ndarray
    similarities: np.ndarray


@dataclass(frozen=True, slots=True)
class VectorHit:
    """A k-NN neighbour: the memory's public id and its cosine distance (1 - cosine)."""

    memory_id: str
    distance: float


class _Snapshot:
    """Vectors of one model held in memory, refreshed by loading only rows with a higher `seq`."""

    def __init__(self, model: str) -> None:
        import numpy as np

        self.model = model
        self.last_seq = 0
        self.pks = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, VECTOR_DIMENSIONS), dtype=np.float32)

    def absorbed(self, rows: list[Row]) -> tuple[np.ndarray, np.ndarray, int]:
        """The keys, matrix and last seq once `rows` (memory_pk, seq, embedding) are taken in; self is unchanged."""
        import numpy as np

        if not rows:
            return self.pks, self.matrix, self.last_seq
        new_pks = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        new_matrix = np.frombuffer(b"".join(row[2] for row in rows), dtype="<f4").reshape(len(rows), -1)
        keep = ~np.isin(self.pks, new_pks)  # a re-embedded memory replaces its old vector
        return (
            np.concatenate([self.pks[keep], new_pks]),
            np.concatenate([self.matrix[keep], new_matrix.astype(np.float32)]),
            max(self.last_seq, max(int(row[1]) for row in rows)),
        )


class VectorRepository(Repository):
    """Stores vectors in `memory_vec` (tagged with their model) and finds nearest neighbours."""

    def __init__(self, db: Database) -> None:
        """Wrap an open database; the in-memory copy of the vectors is made on first use."""
        super().__init__(db)
        self._snapshot: _Snapshot | None = None
        self._snapshot_lock = threading.Lock()  # held only to read or swap the arrays
        self._refresh_lock = threading.Lock()  # one refresh at a time

    @property
    def available(self) -> bool:
        """Whether sqlite-vec loaded."""
        return self.db.has_vectors

    def put(self, memory_id: str, vector: Sequence[float], model: str, now: int, *, text: str | None = None) -> bool:
        """Store (or replace) a memory's vector, made from `text` (`embedded_text`); False when vectors are
        unavailable, the memory is gone, or its text is no longer `text`. Without `text` it is stored unchecked: only
        for a vector not made from a text read before this call (a benchmark's or a test's made-up one)."""
        if not self.available:
            return False
        blob = pack(vector)
        with self.db.transaction():
            # The text is compared in the write's own transaction: a vector embedded while another write (in this
            # process or another) changed the text would otherwise outlive the trigger that dropped the old one,
            # and the memory, no longer missing a vector, would keep the old meaning until its next edit.
            row = self.db.query_one(
                f"SELECT pk FROM memories m WHERE m.id = ? AND (? IS NULL OR {_TEXT} = ?)", (memory_id, text, text)
            )
            if row is None:
                return False
            pk = row[0]
            # vec0 has no upsert: delete, then insert.
            self.db.query("DELETE FROM memory_vec WHERE memory_pk = ?", (pk,))
            self.db.query("INSERT INTO memory_vec (memory_pk, embedding) VALUES (?, ?)", (pk, blob))
            # The write order from a counter (migration 18): MAX(seq) + 1 gave a re-embedded newest memory, its
            # row deleted by the edit, its old number again.
            self.db.query("UPDATE vector_seq SET last = last + 1")
            self.db.query(
                "INSERT INTO memory_embeddings (memory_pk, model, seq, embedded_at) VALUES "
                "(?, ?, (SELECT last FROM vector_seq), ?) "
                "ON CONFLICT(memory_pk) DO UPDATE SET model = excluded.model, seq = excluded.seq, "
                "embedded_at = excluded.embedded_at",
                (pk, model, now),
            )
        return True

    def vector_of(self, memory_id: str, model: str) -> list[float] | None:
        """A memory's stored vector from `model`; None when it has none (or vectors are unavailable)."""
        if not self.available:
            return None
        row = self.db.query_one(
            "SELECT v.embedding FROM memories m JOIN memory_embeddings e ON e.memory_pk = m.pk AND e.model = ? "
            "JOIN memory_vec v ON v.memory_pk = m.pk WHERE m.id = ?",
            (model, memory_id),
        )
        return unpack(row[0]) if row is not None else None

    def missing(self, model: str, limit: int) -> list[PendingMemory]:
        """Active memories with no vector from `model` (none at all, or one from another model)."""
        rows = self.db.query(
            f"SELECT m.id, {_TEXT} FROM memories m "
            "LEFT JOIN memory_embeddings e ON e.memory_pk = m.pk "
            "WHERE m.status = 'active' AND (e.memory_pk IS NULL OR e.model != ?) ORDER BY m.pk LIMIT ?",
            (model, limit),
        )
        return [PendingMemory(row[0], row[1]) for row in rows]

    def missing_among(self, model: str, memory_ids: Sequence[str]) -> list[PendingMemory]:
        """Those of `memory_ids` (at most 900) that are active and have no vector from `model`."""
        if not memory_ids:
            return []
        marks = ", ".join("?" * len(memory_ids))
        rows = self.db.query(
            f"SELECT m.id, {_TEXT} FROM memories m "
            "LEFT JOIN memory_embeddings e ON e.memory_pk = m.pk "
            f"WHERE m.id IN ({marks}) AND m.status = 'active' AND (e.memory_pk IS NULL OR e.model != ?) "
            "ORDER BY m.pk",
            (*memory_ids, model),
        )
        return [PendingMemory(row[0], row[1]) for row in rows]

    def count_missing(self, model: str) -> int:
        """How many active memories have no vector from `model`."""
        row = self.db.query_one(
            "SELECT count(*) FROM memories m LEFT JOIN memory_embeddings e ON e.memory_pk = m.pk "
            "WHERE m.status = 'active' AND (e.memory_pk IS NULL OR e.model != ?)",
            (model,),
        )
        return int(row[0]) if row else 0

    def count(self, model: str | None = None) -> int:
        """How many vectors are stored (of one model when given)."""
        if model is None:
            row = self.db.query_one("SELECT count(*) FROM memory_embeddings")
        else:
            row = self.db.query_one("SELECT count(*) FROM memory_embeddings WHERE model = ?", (model,))
        return int(row[0]) if row else 0

    # --- nearest neighbours ------------------------------------------------------------------------------------
    def nearest_sqlite(self, query: Sequence[float], model: str, project_id: str | None, k: int) -> list[VectorHit]:
        """k-NN through sqlite-vec's own scan, filtered after the k-NN step (the stored truth: docs/search.md)."""
        if not self.available:
            return []
        rows = self.db.query(
            "SELECT m.id, v.distance FROM memory_vec v JOIN memories m ON m.pk = v.memory_pk "
            "JOIN memory_embeddings e ON e.memory_pk = m.pk "
            f"WHERE v.embedding MATCH :query AND k = :k AND e.model = :model AND {_VISIBLE} "
            "ORDER BY v.distance",
            {"query": pack(query), "k": k, "model": model, "project": project_id or ""},
        )
        # sqlite-vec reports L2 distance; for unit vectors cosine distance = L2² / 2.
        return [VectorHit(row[0], float(row[1]) ** 2 / 2) for row in rows]

    def nearest(self, query: Sequence[float], model: str, project_id: str | None, k: int) -> list[VectorHit]:
        """Exact k-NN over the active memories visible to a project, scanning an in-memory copy with numpy.

        The copy loads only vectors written since the last call, so the scan costs a matrix product; candidates
        are then checked against the database (status and project), widening until k survive or none are left.
        """
        found = self.scan(query, model)
        return self.pick(found, project_id, k) if found is not None else []

    def refresh(self, model: str) -> None:
        """Bring the in-memory copy up to date with the database (only vectors written since the last refresh)."""
        if self.available:
            self._refresh(model)

    def scan(self, query: Sequence[float], model: str, *, refresh: bool = True) -> Scan | None:
        """The query's similarity to every vector of `model`; None when vectors are unavailable.

        With `refresh=False` the copy is used as it is, without touching the database (unless there is none yet):
        search refreshes first, then scans in a background thread while the word search holds the connection.
        """
        if not self.available:
            return None
        import numpy as np

        _one_blas_thread()
        with self._snapshot_lock:
            current = self._snapshot
        snapshot = current if not refresh and current is not None and current.model == model else self._refresh(model)
        with self._snapshot_lock:
            pks, matrix = snapshot.pks, snapshot.matrix  # replaced together by absorb, never changed in place
        return Scan(model, pks, matrix @ np.asarray(query, dtype=np.float32))

    def pick(self, found: Scan, project_id: str | None, k: int) -> list[VectorHit]:
        """The `k` most similar of a scan that are active and visible to the project, closest first."""
        import numpy as np

        pks, similarities = found.pks, found.similarities
        if pks.size == 0:
            return []
        order_all: np.ndarray | None = None
        window = min(pks.size, k * 2)
        while True:
            if window >= pks.size:
                if order_all is None:
                    order_all = np.argsort(-similarities, kind="stable")
                order = order_all
            else:
                part = np.argpartition(-similarities, window - 1)[:window]
                order = part[np.argsort(-similarities[part], kind="stable")]
            hits = self._visible(pks[order], similarities[order], found.model, project_id, k)
            if len(hits) >= k or window >= pks.size:
                return hits
            window = min(pks.size, window * 8)

    def _visible(
        self, pks: np.ndarray, similarities: np.ndarray, model: str, project_id: str | None, k: int
    ) -> list[VectorHit]:
        ids: dict[int, str] = {}
        pk_list = [int(pk) for pk in pks]
        for start in range(0, len(pk_list), 900):  # stay under SQLite's variable limit
            chunk = pk_list[start : start + 900]
            marks = ", ".join("?" * len(chunk))
            rows = self.db.query(
                # Look the few candidates up by key: without the CROSS JOIN and the unary `+`, SQLite walks every
                # vector of the model, or every memory of the project, to find them.
                "SELECT m.pk, m.id FROM memories m CROSS JOIN memory_embeddings e ON e.memory_pk = m.pk "
                f"WHERE m.pk IN ({marks}) AND +e.model = ? AND +m.status = 'active' "
                f"AND {VISIBLE_UNINDEXED_AT}",
                (*chunk, model, project_id or ""),
            )
            ids.update({int(pk): memory_id for pk, memory_id in rows})
        hits = []
        for pk, similarity in zip(pk_list, similarities, strict=True):
            if pk in ids:
                hits.append(VectorHit(ids[pk], 1.0 - float(similarity)))
                if len(hits) == k:
                    break
        return hits

    def _refresh(self, model: str) -> _Snapshot:
        # The connection's lock first: a write that checks for a repeat refreshes inside its transaction, which
        # already holds it, while a search refreshes before its query; the other order deadlocked the two.
        with self.db.lock, self._refresh_lock:
            with self._snapshot_lock:
                if self._snapshot is None or self._snapshot.model != model:
                    self._snapshot = _Snapshot(model)
                snapshot = self._snapshot
            rows = self.db.query(
                "SELECT e.memory_pk, e.seq, v.embedding FROM memory_embeddings e "
                "JOIN memory_vec v ON v.memory_pk = e.memory_pk WHERE e.model = ? AND e.seq > ? ORDER BY e.seq",
                (model, snapshot.last_seq),
            )
            pks, matrix, last_seq = snapshot.absorbed(rows)
            with self._snapshot_lock:
                snapshot.pks, snapshot.matrix, snapshot.last_seq = pks, matrix, last_seq
            return snapshot
