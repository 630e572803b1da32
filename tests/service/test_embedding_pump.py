"""The embedding pump: a short-lived process embeds what it wrote; a backfill embeds every memory lacking a vector."""

from __future__ import annotations

from pathlib import Path

import pytest

from orcmem.host.workspace import locate
from orcmem.service.memory_service import MemoryService
from orcmem.store.facade import Store
from tests.fakes import SynonymEmbedder
from tests.helpers import Clock, user_memory


@pytest.fixture
def svc(orcmem_home: Path, clock: Clock) -> MemoryService:
    service = MemoryService(Store.open(orcmem_home / "orcmem.db"), clock=clock, embedder=SynonymEmbedder())
    service.settings.set_enabled(True)
    if not service.store.vectors.available:
        pytest.skip(f"sqlite-vec unavailable: {service.store.db.vector_error}")
    yield service
    service.close()


def test_a_record_embeds_only_itself_not_the_backlog_others_left(svc: MemoryService, project_dir: Path) -> None:
    project = svc.project(locate(project_dir))
    backlog = [svc.record(project, user_memory(f"Old note {i}", f"body {i}"), embed=False).memory for i in range(40)]
    mine = svc.record(project, user_memory("Fresh note", "the car will not start")).memory
    assert svc.pump is not None and svc.pump.wait(10)
    model = svc.embedder.model_id
    assert svc.store.vectors.missing_among(model, [mine.id]) == []
    assert svc.store.vectors.count_missing(model) == len(backlog)  # another process's backlog is left alone

    svc.vectors_changed()  # what a long-lived server does when it starts: backfill everything
    assert svc.pump.wait(10)
    assert svc.store.vectors.count_missing(model) == 0


def test_an_edit_re_embeds_the_edited_memory(svc: MemoryService, project_dir: Path) -> None:
    project = svc.project(locate(project_dir))
    memory = svc.record(project, user_memory("Pool", "use forks")).memory
    assert svc.pump.wait(10)
    svc.edit(project, memory.id, body="use threads when the suite is small")
    assert svc.pump.wait(10)
    assert svc.store.vectors.missing_among(svc.embedder.model_id, [memory.id]) == []
