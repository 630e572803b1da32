"""The profile is private: its folder is 0700 and the database, its WAL and its SHM are 0600 (the settings live in
the database), from the first write, under a permissive umask, after a migration of an older file, and after an
export. Checked while the database is open, since the WAL and SHM files exist only then.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from orcmem.host.workspace import locate
from orcmem.models.types import NewMemory, Project, Source
from orcmem.service.memory_service import MemoryService
from orcmem.store.migrations import LATEST_VERSION, schema_version

DB_FILES = ("orcmem.db", "orcmem.db-wal", "orcmem.db-shm")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def assert_private(home: Path) -> None:
    """The folder shuts out everyone else, and each database file is the owner's alone."""
    assert mode(home) == 0o700, oct(mode(home))
    for name in DB_FILES:
        assert (home / name).exists(), f"{name} is missing: check while the database is open"
        assert mode(home / name) == 0o600, (name, oct(mode(home / name)))


def run_umask(args: list[str], home: Path, umask: int, stdin: str = "") -> str:
    """Run `python -m orcmem ...` as a new process under the given umask; its stdout."""
    result = subprocess.run(
        [sys.executable, "-m", "orcmem", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        umask=umask,
        env={**os.environ, "ORCMEM_HOME": str(home)},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_new_profile_is_private_from_the_first_write(orcmem_home: Path, project_dir: Path) -> None:
    old = os.umask(0o022)
    try:
        service = MemoryService.open(orcmem_home)
        service.settings.set_enabled(True)
        project = service.project(locate(project_dir))
        service.record(project, NewMemory(type="lesson", title="Private", body="to the owner", source=Source.USER))
        assert_private(orcmem_home)
        service.close()
    finally:
        os.umask(old)


@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_real_processes_under_a_permissive_umask(orcmem_home: Path, project_dir: Path, umask: int) -> None:
    run_umask(["memory", "on"], orcmem_home, umask)
    run_umask(
        ["--project", str(project_dir), "add", "--type", "lesson", "--title", "T", "--body", "B"], orcmem_home, umask
    )
    # A hook that fails writes its log; the folder it goes in must be private too.
    run_umask(
        ["hook", "stop"], orcmem_home, umask, stdin=json.dumps({"cwd": str(project_dir), "transcript_path": "/x"})
    )
    service = MemoryService.open(orcmem_home)  # keeps the WAL and SHM in place while checking
    try:
        assert_private(orcmem_home)
        assert (orcmem_home / "logs" / "hooks.log").exists()  # the hook did write its log
        assert mode(orcmem_home / "logs") == 0o700
    finally:
        service.close()


def test_an_older_database_is_made_private_when_it_is_migrated(orcmem_home: Path, project_dir: Path) -> None:
    # What an older orcmem, or a copy with `cp`, could leave: a readable folder and a schema-0 file of mode 0644.
    orcmem_home.mkdir(mode=0o755)
    os.chmod(orcmem_home, 0o755)
    conn = apsw.Connection(str(orcmem_home / "orcmem.db"))
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE leftover (x)")
    conn.close()
    os.chmod(orcmem_home / "orcmem.db", 0o644)
    assert schema_version(apsw.Connection(str(orcmem_home / "orcmem.db"))) == 0
    service = MemoryService.open(orcmem_home)
    try:
        assert schema_version(service.store.db.conn) == LATEST_VERSION
        service.settings.set_enabled(True)
        assert_private(orcmem_home)
    finally:
        service.close()


def test_a_read_only_database_stays_read_only(orcmem_home: Path) -> None:
    MemoryService.open(orcmem_home).close()
    os.chmod(orcmem_home / "orcmem.db", 0o444)
    try:
        MemoryService.open(orcmem_home, vectors=False).close()
        assert mode(orcmem_home / "orcmem.db") == 0o400  # narrowed for others, never widened for the owner
    finally:
        os.chmod(orcmem_home / "orcmem.db", 0o600)


@pytest.mark.parametrize("existing", [None, 0o600, 0o640, 0o644])
def test_an_export_leaves_the_profile_private_and_the_file_mode_as_it_was(
    service: MemoryService, project: Project, project_dir: Path, orcmem_home: Path, existing: int | None
) -> None:
    target = project_dir / "CLAUDE.md"
    if existing is not None:
        target.write_text("# Notes\n")
        os.chmod(target, existing)
    memory = service.record(project, NewMemory(type="lesson", title="Export me", body="please", source=Source.USER))
    service.export(project, memory.memory.id, "CLAUDE.md", project_dir)
    assert_private(orcmem_home)
    assert mode(target) == (existing if existing is not None else 0o644)  # a project file, meant to be shared
    assert sorted(p.name for p in project_dir.iterdir()) == ["CLAUDE.md"]  # no temporary file left behind


def test_the_logs_and_the_model_folder_are_private_under_umask_000(tmp_path: Path, project_dir: Path) -> None:
    home = tmp_path / "wide"
    run_umask(["memory", "on"], home, 0)
    payload = json.dumps({"session_id": "s", "transcript_path": str(tmp_path / "gone.jsonl"), "cwd": str(project_dir)})
    run_umask(["hook", "stop"], home, 0, stdin=payload)  # logs "no transcript", and nothing else
    assert mode(home / "logs") == 0o700 and mode(home / "logs" / "hooks.log") == 0o600
    code = (
        "import sys; from pathlib import Path; from orcmem.embed.staging import staging_dir\n"
        "with staging_dir(Path(sys.argv[1]), 'm'): pass\n"
    )
    subprocess.run([sys.executable, "-c", code, str(home / "models")], check=True, umask=0, timeout=60)
    assert mode(home / "models") == 0o700
