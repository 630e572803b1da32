"""Forget and edit erase: no byte of the old text stays in the database file or its WAL."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from orcmem.models.types import Project
from orcmem.service.memory_service import MemoryService
from tests.helpers import user_memory


def marker() -> str:
    """A word no other text holds (letters only, so the full-text index keeps it as one token)."""
    return "zq" + "".join(secrets.choice("abcdefghijklmnopqrstuvwxy") for _ in range(22))


def on_disk(home: Path) -> bytes:
    """The database file and its WAL, lowercased (the full-text index stores its tokens in lowercase)."""
    data = b""
    for name in ("orcmem.db", "orcmem.db-wal"):
        path = home / name
        if path.exists():
            data += path.read_bytes()
    return data.lower()


@pytest.fixture
def written(service: MemoryService, project: Project, orcmem_home: Path) -> tuple[str, str, str]:
    """A memory whose title and body hold two markers, stored and checkpointed into the file."""
    title_word, body_word = marker(), marker()
    memory = service.record(project, user_memory(f"Deploy key {title_word}", f"The key is {body_word} for prod"))
    service.record(project, user_memory("Unrelated", "other text that stays"))  # the page keeps other rows
    service.store.db.erase_old_pages()
    assert title_word.encode() in on_disk(orcmem_home)
    return memory.memory.id, title_word, body_word


def test_forget_leaves_no_byte_of_the_text(service, project, orcmem_home: Path, written) -> None:
    memory_id, title_word, body_word = written
    service.forget(project, memory_id)
    data = on_disk(orcmem_home)
    assert title_word.encode() not in data and body_word.encode() not in data
    assert service.search.hits(project, "unrelated")  # the rest is intact


def test_an_edit_leaves_no_byte_of_the_old_text(service, project, orcmem_home: Path, written) -> None:
    memory_id, title_word, body_word = written
    new_word = marker()
    service.edit(project, memory_id, title="Deploy key rotated", body=f"Now {new_word}")
    data = on_disk(orcmem_home)
    assert title_word.encode() not in data and body_word.encode() not in data
    assert new_word.encode() in data
    assert [hit.memory.id for hit in service.search.hits(project, new_word)] == [memory_id]


def test_forget_run_erases_the_transcript_events(service, project, orcmem_home: Path, project_dir: Path, run) -> None:
    import json

    from orcmem.service.learning import Learning

    service.settings.set_enabled(True)
    word = marker()
    transcript = project_dir / "session.jsonl"
    lines = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": f"the deploy word is {word}"}},
        {"type": "assistant", "uuid": "a1", "message": {"id": "m1", "role": "assistant", "content": "noted"}},
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    ingested = Learning(service).ingest(project, transcript, session_id="s", ended=True)
    service.store.db.erase_old_pages()
    assert word.encode() in on_disk(orcmem_home)
    assert run("forget-run", ingested.run.id).stdout == f"deleted run {ingested.run.id} and its events\n"
    assert word.encode() not in on_disk(orcmem_home)
    assert "No run" in run("forget-run", ingested.run.id, ok=False).stderr
