"""The embedding pump: a short-lived process embeds what it wrote; a backfill embeds every memory lacking a vector;
a vector is stored only for the text the memory still has."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import apsw
import pytest

from orcmem.app.runtime import models_dir
from orcmem.embed.model_files import model_dir
from orcmem.embed.pypi_source import MINILM_INT8_PINS
from orcmem.host.workspace import locate
from orcmem.mcp_server.recall_socket import RecallSocket, recall_answer
from orcmem.models.constants import BUSY_TIMEOUT_MS
from orcmem.service.memory_service import MemoryService
from orcmem.store.facade import Store
from orcmem.store.vectors import PendingMemory
from tests.embedders import HashingEmbedder, StalledEmbedder
from tests.fakes import SynonymEmbedder
from tests.faults.support import orcmem
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


@pytest.fixture
def stalled(orcmem_home: Path, clock: Clock) -> Iterator[tuple[MemoryService, StalledEmbedder]]:
    """A service whose embedder holds each call until the test releases it (released from the start)."""
    embedder = StalledEmbedder(max_wait=10)
    embedder.release.set()
    service = MemoryService(Store.open(orcmem_home / "orcmem.db"), clock=clock, embedder=embedder)
    service.settings.set_enabled(True)
    if not service.store.vectors.available:
        pytest.skip(f"sqlite-vec unavailable: {service.store.db.vector_error}")
    yield service, embedder
    embedder.release.set()
    service.close(embed_wait=10)


def hold(embedder: StalledEmbedder) -> None:
    """Make the embedder's next call wait for `release`."""
    embedder.release.clear()
    embedder.entered.clear()


def vector_matches_text(service: MemoryService, memory_id: str) -> bool:
    """Whether the memory's stored vector is the one its current text makes."""
    memory = service.store.memories.get(memory_id)
    assert memory is not None and service.embedder is not None
    stored = service.store.vectors.vector_of(memory_id, service.embedder.model_id)
    assert stored is not None, "the memory has no vector"
    return stored == pytest.approx(HashingEmbedder().embed_documents([f"{memory.title}\n{memory.body}"])[0], abs=1e-6)


def test_an_edit_while_the_old_text_is_embedded_ends_with_the_new_texts_vector(
    stalled: tuple[MemoryService, StalledEmbedder], project_dir: Path
) -> None:
    svc, embedder = stalled
    project = svc.project(locate(project_dir))
    hold(embedder)
    memory = svc.record(project, user_memory("Pool", "use forks")).memory
    assert embedder.entered.wait(10)  # the pump holds the old text's vector, not yet stored
    svc.edit(project, memory.id, body="use threads when the suite is small")
    embedder.release.set()
    assert svc.pump is not None and svc.pump.wait(10)
    assert vector_matches_text(svc, memory.id)


def test_an_edit_undone_while_the_middle_text_is_embedded_ends_with_the_first_texts_vector(
    stalled: tuple[MemoryService, StalledEmbedder], project_dir: Path
) -> None:
    svc, embedder = stalled
    project = svc.project(locate(project_dir))
    memory = svc.record(project, user_memory("Pool", "use forks")).memory
    assert svc.pump is not None and svc.pump.wait(10) and vector_matches_text(svc, memory.id)
    hold(embedder)
    svc.edit(project, memory.id, body="use threads")
    assert embedder.entered.wait(10)  # embedding "use threads"
    svc.edit(project, memory.id, body="use forks")  # edited back
    embedder.release.set()
    assert svc.pump.wait(10)
    assert vector_matches_text(svc, memory.id)


def test_a_vector_of_a_text_the_memory_no_longer_has_is_refused(svc: MemoryService, project_dir: Path) -> None:
    project = svc.project(locate(project_dir))
    memory = svc.record(project, user_memory("Pool", "use forks"), embed=False).memory
    vectors, model = svc.store.vectors, "fake-hashing-v1"
    read = vectors.missing_among(model, [memory.id])[0]  # what a pump reads, then embeds outside any transaction
    svc.store.memories.update_fields(memory.id, {"body": "use threads"})  # another write, between the two
    assert not vectors.put(memory.id, HashingEmbedder().embed_documents([read.text])[0], model, 1, text=read.text)
    assert vectors.missing_among(model, [memory.id]) == [PendingMemory(memory.id, "Pool\nuse threads")]
    now = "Pool\nuse threads"
    assert vectors.put(memory.id, HashingEmbedder().embed_documents([now])[0], model, 2, text=now)
    assert vectors.missing_among(model, [memory.id]) == []


def test_a_command_editing_in_another_process_while_the_server_embeds_the_old_text(
    stalled: tuple[MemoryService, StalledEmbedder], project_dir: Path, orcmem_home: Path, int8_models_dir: Path
) -> None:
    """This process is the MCP server (its pump, its warm socket); `orcmem edit` runs as a process of its own, with
    a model installed, so it leaves the new text's vector to the server."""
    svc, embedder = stalled
    shutil.copytree(int8_models_dir / MINILM_INT8_PINS.name, model_dir(models_dir(orcmem_home), MINILM_INT8_PINS))
    svc.settings.set_embedding_model(MINILM_INT8_PINS.model_id)  # the command's model (never loaded: it defers)
    project = svc.project(locate(project_dir))
    server = RecallSocket(orcmem_home, recall_answer(orcmem_home, lambda: SimpleNamespace(memory=svc)))
    server.start()
    try:
        assert server.holding.wait(5)
        hold(embedder)
        memory = svc.record(project, user_memory("Pool", "use forks")).memory
        assert embedder.entered.wait(10)  # the server's pump embeds the old text
        result = orcmem(project_dir, "edit", memory.id, "--body", "use threads when the suite is small")
        assert result.returncode == 0, result.stderr
        embedder.release.set()
        assert svc.pump is not None and svc.pump.wait(10)
        assert vector_matches_text(svc, memory.id)  # the old text's refused, the new one's from the hand-off
    finally:
        server.close()


def test_a_vector_a_locked_store_would_not_take_is_made_at_the_next_schedule(
    stalled: tuple[MemoryService, StalledEmbedder], project_dir: Path, orcmem_home: Path
) -> None:
    svc, embedder = stalled
    project = svc.project(locate(project_dir))
    hold(embedder)
    memory = svc.record(project, user_memory("Pool", "use forks")).memory
    assert embedder.entered.wait(10)
    other = apsw.Connection(str(orcmem_home / "orcmem.db"))  # another process holds the write lock throughout
    other.execute("BEGIN IMMEDIATE")
    try:
        embedder.release.set()
        assert svc.pump is not None and svc.pump.wait(BUSY_TIMEOUT_MS / 1000 + 10)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert svc.pump.last_error is not None and "locked" in svc.pump.last_error
    assert svc.store.vectors.missing_among(embedder.model_id, [memory.id]) == [
        PendingMemory(memory.id, "Pool\nuse forks")
    ]
    svc.vectors_changed([memory.id])
    assert svc.pump.wait(10)
    assert vector_matches_text(svc, memory.id)
