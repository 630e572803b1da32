"""A full disk under ORCMEM_HOME: writes fail with one line, nothing stored before is lost, and space brings it back.

As root the profile sits on a small tmpfs that is really filled (mounted and unmounted per test). Without mount
rights those tests skip, and the file-size-limit test (RLIMIT_FSIZE in the child, which always runs) is the one
that exercises a disk that refuses to grow.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from orcmem.host.workspace import locate
from orcmem.models.errors import StoreError
from orcmem.models.types import NewMemory, Source
from orcmem.service.memory_service import MemoryService
from tests.faults.support import DB_NAME, assert_one_line_error, can_mount, fill, integrity, orcmem, tmpfs

KEPT = [(f"Kept lesson {i}", f"stored before the disk filled up, number {i}") for i in range(3)]
LONG_BODY = "a body long enough to need new pages " * 20


def add(project_dir: Path, title: str, body: str = LONG_BODY, **kw) -> subprocess.CompletedProcess:
    """`orcmem add` of one lesson."""
    return orcmem(project_dir, "add", "--type", "lesson", "--title", title, "--body", body, **kw)


def listed(project_dir: Path) -> dict[str, str]:
    """Title -> body of every memory `orcmem list --json` shows."""
    result = orcmem(project_dir, "list", "--json")
    assert result.returncode == 0, result.stderr
    return {m["title"]: m["body"] for m in json.loads(result.stdout)}


def store_kept(project_dir: Path) -> None:
    """Turn memory on and save the memories that must survive."""
    assert orcmem(project_dir, "memory", "on").returncode == 0
    for title, body in KEPT:
        result = add(project_dir, title, body)
        assert result.returncode == 0, result.stderr


@pytest.fixture
def small_home(orcmem_home: Path) -> Iterator[Path]:
    """ORCMEM_HOME on its own 4 MiB tmpfs."""
    if not can_mount():
        pytest.skip("mounting a tmpfs needs root with CAP_SYS_ADMIN; test_a_file_size_limit covers this machine")
    with tmpfs(orcmem_home, "4m") as home:
        yield home


@pytest.mark.long
def test_a_full_disk_with_no_other_process_on_the_database(small_home: Path, project_dir: Path) -> None:
    store_kept(project_dir)
    before = (small_home / DB_NAME).read_bytes()
    filler = fill(small_home)
    # Opening needs a shared-memory file beside the database, and there is no room for it: both commands say so.
    for result in (add(project_dir, "Lost to a full disk"), orcmem(project_dir, "list")):
        assert_one_line_error(result, "is full", "Free some space")
    assert (small_home / DB_NAME).read_bytes() == before
    filler.unlink()
    assert add(project_dir, "Written after freeing space").returncode == 0
    memories = listed(project_dir)
    assert {title: memories[title] for title, _ in KEPT} == dict(KEPT)
    assert set(memories) == {title for title, _ in KEPT} | {"Written after freeing space"}
    assert integrity(small_home / DB_NAME) == ["ok"]


@pytest.mark.long
def test_a_full_disk_while_another_process_holds_the_database(small_home: Path, project_dir: Path) -> None:
    store_kept(project_dir)
    # A long-lived process (an MCP server, the Memory page) keeps the database and its WAL index open, so a new
    # command opens fine and fails only when the WAL must grow.
    holder = MemoryService.open(small_home)
    try:
        project = holder.project(locate(project_dir), create=False)
        assert len(holder.list(project)) == len(KEPT)
        filler = fill(small_home)
        for title in ("Lost to a full disk", "Lost again"):
            assert_one_line_error(add(project_dir, title), "The disk holding", "is full")
        with pytest.raises(StoreError, match="is full"):  # the same error for a caller of the service
            holder.record(project, NewMemory(type="lesson", title="Lost", body=LONG_BODY, source=Source.AGENT))
        assert set(listed(project_dir)) == {title for title, _ in KEPT}  # reads still work, nothing half-written
        filler.unlink()
        result = add(project_dir, "Written after freeing space")
        assert result.returncode == 0, result.stderr
        holder.record(project, NewMemory(type="lesson", title="From the holder", body="ok", source=Source.AGENT))
    finally:
        holder.close()
    memories = listed(project_dir)
    assert {title: memories[title] for title, _ in KEPT} == dict(KEPT)
    assert set(memories) == {title for title, _ in KEPT} | {"Written after freeing space", "From the holder"}
    assert integrity(small_home / DB_NAME) == ["ok"]


def _limited(max_bytes: int) -> None:
    # Runs in the child before exec: files it writes may not grow past max_bytes (Python ignores SIGXFSZ, so a
    # write past the limit fails with EFBIG instead of killing the process).
    resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))


@pytest.mark.long
def test_a_file_size_limit(orcmem_home: Path, project_dir: Path) -> None:
    store_kept(project_dir)
    path = orcmem_home / DB_NAME
    # 32 KiB lets SQLite size its shared-memory file; the WAL then cannot hold the pages one new memory touches.
    child = subprocess.run(
        [sys.executable, "-m", "orcmem", "--project", str(project_dir), "add", "--type", "lesson"]
        + ["--title", "Too big to write", "--body", LONG_BODY],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
        preexec_fn=lambda: _limited(32 * 1024 + 4096),
    )
    assert_one_line_error(child, str(path), "file size limit")
    assert add(project_dir, "Written without the limit").returncode == 0
    memories = listed(project_dir)
    assert {title: memories[title] for title, _ in KEPT} == dict(KEPT)
    assert "Too big to write" not in memories and "Written without the limit" in memories
    assert integrity(path) == ["ok"]
