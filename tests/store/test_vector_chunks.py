"""Every vector of a model read from sqlite-vec's chunk tables (`store/vector_chunks.py`): exactly what `memory_vec`
gives, row by row, over several chunks, after deletes and re-embeddings, and the row-by-row read whenever the chunks
do not hold what `memory_vec` gives."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from orcmem.models.types import Project, new_memory_id
from orcmem.service.memory_service import MemoryService
from orcmem.store import vector_chunks
from orcmem.store.vector_chunks import model_vectors
from tests.helpers import user_memory

MODEL = "test-model"


def _unit(rng: np.random.Generator) -> np.ndarray:
    vector = rng.normal(size=384).astype(np.float32)
    return vector / np.linalg.norm(vector)


@pytest.fixture
def filled(service: MemoryService, project: Project) -> list[str]:
    """1,300 memories (two of sqlite-vec's chunks), each with a vector of MODEL, a few with another model's, some
    deleted and some embedded again since."""
    if not service.store.vectors.available:
        pytest.skip(f"sqlite-vec unavailable: {service.store.db.vector_error}")
    template = service.record(project, user_memory("Template", "A plain fact.")).memory
    memories = [replace(template, id=new_memory_id(), title=f"Note {n}", body=f"Fact {n}.") for n in range(1_300)]
    rng = np.random.default_rng(1)
    with service.store.db.transaction():
        service.store.memories.delete(template.id)
        for n, memory in enumerate(memories):
            service.store.memories.insert(memory)
            service.store.vectors.put(memory.id, _unit(rng).tolist(), MODEL if n % 50 else "other-model", 1)
    for memory in memories[::97]:
        service.store.memories.delete(memory.id)
    for memory in memories[5::89]:
        service.store.vectors.put(memory.id, _unit(rng).tolist(), MODEL, 2)
    return [memory.id for memory in memories]


def _row_by_row(service: MemoryService) -> tuple[np.ndarray, np.ndarray]:
    rows = service.store.db.query(
        "SELECT e.memory_pk, v.embedding FROM memory_embeddings e JOIN memory_vec v ON v.memory_pk = e.memory_pk "
        "WHERE e.model = ? ORDER BY e.memory_pk",
        (MODEL,),
    )
    keys = np.array([pk for pk, _blob in rows], dtype=np.int64)
    return keys, np.frombuffer(b"".join(blob for _pk, blob in rows), dtype="<f4").reshape(len(rows), 384)


def test_the_chunks_give_every_vector_of_the_model_as_memory_vec_does(
    service: MemoryService, filled: list[str]
) -> None:
    chunks = service.store.db.query("SELECT count(*) FROM memory_vec_chunks")[0][0]
    assert chunks >= 2
    keys, matrix = _row_by_row(service)
    assert 1_200 < len(keys) < 1_300  # the other model's and the deleted ones left out
    found = vector_chunks._from_chunks(service.store.db, MODEL)
    assert found is not None  # read from the chunks, not through the fallback
    assert found[0].tobytes() == keys.tobytes() and found[1].tobytes() == matrix.tobytes()


def test_chunks_that_do_not_hold_what_memory_vec_gives_are_not_used(
    service: MemoryService, filled: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    keys, matrix = _row_by_row(service)
    # A sqlite-vec that lays its rows out otherwise: the places read are not where the vectors sit.
    shifted = vector_chunks._PLACES.replace("r.chunk_offset", "(r.chunk_offset + 1) % 1024")
    monkeypatch.setattr(vector_chunks, "_PLACES", shifted)
    assert vector_chunks._from_chunks(service.store.db, MODEL) is None  # the sampled vectors differ
    found = model_vectors(service.store.db, MODEL)  # through `memory_vec` instead
    assert found[0].tobytes() == keys.tobytes() and found[1].tobytes() == matrix.tobytes()
    monkeypatch.undo()
    first = service.store.db.query("SELECT min(chunk_id) FROM memory_vec_chunks")[0][0]
    with service.store.db.transaction():  # a chunk stored at another length
        service.store.db.query(
            "UPDATE memory_vec_vector_chunks00 SET vectors = zeroblob(100) WHERE rowid = ?", (first,)
        )
    assert vector_chunks._from_chunks(service.store.db, MODEL) is None


def test_a_store_without_the_chunk_tables_reads_row_by_row(
    service: MemoryService, filled: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    keys, matrix = _row_by_row(service)
    monkeypatch.setattr(vector_chunks, "_CHUNKS", "SELECT chunk_id, size, vectors FROM no_such_chunks")
    found = model_vectors(service.store.db, MODEL)
    assert found[0].tobytes() == keys.tobytes() and found[1].tobytes() == matrix.tobytes()
