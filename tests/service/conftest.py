"""Fixtures for the service tests that need the real embedding model."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from orcmem.host.workspace import locate
from orcmem.models.types import Project
from orcmem.service.memory_service import MemoryService
from orcmem.store.facade import Store
from tests.helpers import Clock, user_memory

Embedded = tuple[MemoryService, Project, list[str]]


@pytest.fixture
def embedded(orcmem_home: Path, clock: Clock, project_dir: Path, minilm) -> Iterator[Callable[..., Embedded]]:
    """Make a service over the real MiniLM holding these (title, body) user memories, every one embedded.

    Returns (service, project, memory ids); the service is closed after the test.
    """
    opened: list[MemoryService] = []

    def make(memories: Sequence[tuple[str, str]]) -> Embedded:
        svc = MemoryService(Store.open(orcmem_home / "orcmem.db"), clock=clock, embedder=minilm)
        opened.append(svc)
        svc.settings.set_enabled(True)
        if not svc.store.vectors.available:
            pytest.skip(f"sqlite-vec unavailable: {svc.store.db.vector_error}")
        project = svc.project(locate(project_dir))
        ids = [svc.record(project, user_memory(title, body)).memory.id for title, body in memories]
        assert svc.pump is not None and svc.pump.wait(30)
        return svc, project, ids

    yield make
    for svc in opened:
        svc.close()
