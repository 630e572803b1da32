"""A corrupt or read-only database: every CLI command fails with one line, exit code 1, and the file keeps its bytes.

Database-level checks of the same files are in tests/store/test_database.py (a garbage file, a newer schema);
these run the real `orcmem` program, where a stray apsw exception would print a traceback.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from orcmem.host.workspace import locate
from orcmem.models.types import NewMemory, Source
from orcmem.service.memory_service import MemoryService
from tests.faults.support import (
    DB_NAME,
    assert_one_line_error,
    can_mount,
    orcmem,
    read_only,
    root_page,
)

ADD = ("add", "--type", "lesson", "--title", "A new lesson", "--body", "written to a bad file")
COMMANDS = {"list": ("list",), "add": ADD, "search": ("search", "pool")}

needs_mount = pytest.mark.skipif(not can_mount(), reason="mounting a file system needs root with CAP_SYS_ADMIN")


@pytest.fixture
def stored(orcmem_home: Path, project_dir: Path) -> Path:
    """A real profile database with memory on and two memories of `project_dir`; returns the file."""
    service = MemoryService.open(orcmem_home)
    service.settings.set_enabled(True)
    project = service.project(locate(project_dir))
    for title in ("Use the forks pool", "Run the linter first"):
        service.record(project, NewMemory(type="lesson", title=title, body=f"{title} in CI", source=Source.USER))
    service.close()
    assert sorted(p.name for p in orcmem_home.iterdir()) == [DB_NAME]  # the WAL was folded back in on close
    return orcmem_home / DB_NAME


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_file_that_is_not_a_database(orcmem_home: Path, project_dir: Path, command: str) -> None:
    orcmem_home.mkdir()
    path = orcmem_home / DB_NAME
    garbage = b"these are notes, not an orcmem database\n" * 300
    path.write_bytes(garbage)
    result = orcmem(project_dir, *COMMANDS[command])
    assert_one_line_error(result, str(path), "is not a readable orcmem database", "left untouched")
    assert path.read_bytes() == garbage
    assert sorted(p.name for p in orcmem_home.iterdir()) == [DB_NAME]  # no WAL or shared-memory file beside it


def test_a_damaged_page_found_while_reading(stored: Path, project_dir: Path) -> None:
    # The schema still reads, so the file opens; the damage shows only when `list` reaches the memories table.
    data = bytearray(stored.read_bytes())
    page = root_page(stored, "memories")
    data[(page - 1) * 4096 : page * 4096] = b"\xa5" * 4096
    stored.write_bytes(bytes(data))
    for command in ("list", "search"):
        result = orcmem(project_dir, *COMMANDS[command])
        assert_one_line_error(result, "is not a readable orcmem database", "database disk image is malformed")
        assert stored.read_bytes() == bytes(data)


def test_a_damaged_page_found_while_writing(stored: Path, project_dir: Path) -> None:
    data = bytearray(stored.read_bytes())
    memories = root_page(stored, "memories")
    data[(memories - 1) * 4096 : memories * 4096] = b"\xa5" * 4096
    damaged = bytes(data)
    stored.write_bytes(damaged)
    result = orcmem(project_dir, *ADD)
    assert_one_line_error(result, "is not a readable orcmem database")
    # The project's "last used" time and the memory are saved in one transaction: nothing of it is kept.
    assert stored.read_bytes() == damaged


@needs_mount
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_database_on_a_read_only_mount(stored: Path, project_dir: Path, command: str) -> None:
    before = stored.read_bytes()
    with read_only(stored.parent):
        result = orcmem(project_dir, *COMMANDS[command])
    assert_one_line_error(result, str(stored), "cannot be written")
    assert stored.read_bytes() == before


@pytest.fixture
def immutable(stored: Path) -> Iterator[Path]:
    """The database file made immutable with `chattr +i`, which stops root too (chmod 0400 does not)."""
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed")
    made = subprocess.run(["chattr", "+i", str(stored)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"this file system has no immutable flag: {made.stderr.strip()}")
    yield stored
    subprocess.run(["chattr", "-i", str(stored)], check=True)


def test_a_read_only_file_refuses_writes_and_still_reads(immutable: Path, project_dir: Path) -> None:
    before = immutable.read_bytes()
    result = orcmem(project_dir, *ADD)
    assert_one_line_error(result, str(immutable), "cannot be written", "attempt to write a readonly database")
    # Reading needs no write: the memories are still listed (only a read-only folder or disk stops that).
    listed = orcmem(project_dir, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert sorted(m["title"] for m in json.loads(listed.stdout)) == ["Run the linter first", "Use the forks pool"]
    assert immutable.read_bytes() == before
