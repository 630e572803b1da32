"""Vectors: stored in sqlite-vec, tagged with their model, found exactly, gone with their memory."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from orcmem.host.workspace import locate
from orcmem.models.errors import ValidationError
from orcmem.models.types import Project
from orcmem.service.memory_service import MemoryService
from tests.helpers import user_memory

DIMS = 384


def unit(seed: int) -> list[float]:
    rng = random.Random(seed)
    raw = [rng.gauss(0, 1) for _ in range(DIMS)]
    norm = math.sqrt(sum(x * x for x in raw))
    return [x / norm for x in raw]


def near(vector: list[float], seed: int, noise: float = 0.05) -> list[float]:
    rng = random.Random(seed)
    raw = [x + rng.gauss(0, noise / math.sqrt(DIMS)) for x in vector]
    norm = math.sqrt(sum(x * x for x in raw))
    return [x / norm for x in raw]


@pytest.fixture
def stored(service: MemoryService, project: Project) -> list[str]:
    if not service.store.vectors.available:
        pytest.skip(f"sqlite-vec unavailable: {service.store.db.vector_error}")
    ids = []
    for i in range(60):
        memory = service.record(project, user_memory(f"memory {i}", f"body {i}")).memory
        assert service.store.vectors.put(memory.id, unit(i), "model-a", service.clock())
        ids.append(memory.id)
    return ids


def test_exact_scan_matches_sqlite_vec(service: MemoryService, project: Project, stored: list[str]) -> None:
    vectors = service.store.vectors
    for probe in (3, 17, 42):
        query = near(unit(probe), seed=1000 + probe)
        fast = vectors.nearest(query, "model-a", project.id, 10)
        slow = vectors.nearest_sqlite(query, "model-a", project.id, 10)
        assert [h.memory_id for h in fast] == [h.memory_id for h in slow]
        assert fast[0].memory_id == stored[probe]
        for a, b in zip(fast, slow, strict=True):
            assert a.distance == pytest.approx(b.distance, abs=1e-4)


def test_only_active_memories_of_the_project_are_returned(
    service: MemoryService, project: Project, stored: list[str], tmp_path: Path
) -> None:
    other_dir = tmp_path / "elsewhere"
    other_dir.mkdir()
    other = service.project(locate(other_dir))
    foreign = service.record(other, user_memory("foreign", "x")).memory
    service.store.vectors.put(foreign.id, unit(5), "model-a", service.clock())
    service.feedback(project, stored[5], "wrong")
    hits = service.store.vectors.nearest(unit(5), "model-a", project.id, 40)
    ids = [h.memory_id for h in hits]
    assert stored[5] not in ids and foreign.id not in ids
    assert len(ids) == 40


def test_the_in_memory_copy_sees_new_and_replaced_vectors(
    service: MemoryService, project: Project, stored: list[str]
) -> None:
    vectors = service.store.vectors
    assert vectors.nearest(unit(7), "model-a", project.id, 1)[0].memory_id == stored[7]
    vectors.put(stored[8], unit(7), "model-a", service.clock())  # memory 8 now sits where 7 is
    assert {h.memory_id for h in vectors.nearest(unit(7), "model-a", project.id, 2)} == {stored[7], stored[8]}
    fresh = service.record(project, user_memory("fresh", "x")).memory
    vectors.put(fresh.id, unit(999), "model-a", service.clock())
    assert vectors.nearest(unit(999), "model-a", project.id, 1)[0].memory_id == fresh.id


def test_the_in_memory_copy_sees_the_newest_memory_edited_and_embedded_again(
    service: MemoryService, project: Project, stored: list[str]
) -> None:
    vectors = service.store.vectors
    newest = stored[-1]
    assert vectors.nearest(unit(59), "model-a", project.id, 1)[0].memory_id == newest  # the copy holds it
    service.edit(project, newest, body="body 59, edited")  # its vector forgotten: the newest write order freed
    vectors.put(newest, unit(500), "model-a", service.clock())
    assert vectors.nearest(unit(500), "model-a", project.id, 1)[0].memory_id == newest
    assert newest not in [h.memory_id for h in vectors.nearest(unit(59), "model-a", project.id, 3)]


def test_forget_removes_the_vector(service: MemoryService, project: Project, stored: list[str]) -> None:
    vectors = service.store.vectors
    vectors.nearest(unit(0), "model-a", project.id, 1)  # warm the in-memory copy
    service.forget(project, stored[0])
    assert stored[0] not in [h.memory_id for h in vectors.nearest(unit(0), "model-a", project.id, 5)]
    assert service.store.db.query_one("SELECT count(*) FROM memory_vec")[0] == 59
    assert vectors.count("model-a") == 59


def test_vectors_of_another_model_are_never_mixed(service: MemoryService, project: Project, stored: list[str]) -> None:
    vectors = service.store.vectors
    assert vectors.count_missing("model-a") == 0
    assert vectors.count_missing("model-b") == 60
    assert vectors.nearest(unit(1), "model-b", project.id, 5) == []
    vectors.put(stored[1], unit(1), "model-b", service.clock())
    assert [h.memory_id for h in vectors.nearest(unit(1), "model-b", project.id, 5)] == [stored[1]]
    assert vectors.count_missing("model-a") == 1


def test_a_wrong_dimension_is_refused(service: MemoryService, project: Project, stored: list[str]) -> None:
    with pytest.raises(ValidationError):
        service.store.vectors.put(stored[0], [0.1] * 10, "model-a", 0)


def test_a_write_checking_for_a_repeat_and_a_search_never_wait_on_each_other(
    service: MemoryService, project: Project, stored: list[str]
) -> None:
    """A write refreshes the vector copy inside its transaction; a search refreshes it before its query. Under load
    the two took the connection's lock and the copy's lock in opposite orders and waited for ever."""
    import threading

    vectors, db = service.store.vectors, service.store.db
    failures: list[BaseException] = []

    def writes() -> None:
        try:
            for seed in range(200):
                with db.transaction():
                    vectors.put(stored[seed % len(stored)], unit(seed), "model-a", seed)
                    vectors.scan(unit(seed), "model-a")
        except BaseException as exc:  # reported by the assertion below
            failures.append(exc)

    def searches() -> None:
        try:
            for _ in range(200):
                vectors.refresh("model-a")
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=writes, daemon=True), threading.Thread(target=searches, daemon=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(thread.is_alive() for thread in threads), "the write and the search deadlocked"
    assert failures == []
