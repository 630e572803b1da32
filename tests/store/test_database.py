"""The database file: pragmas, migrations run once from many processes, bad files, secrets never on disk."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import apsw
import pytest

from orcmem.host.workspace import locate
from orcmem.models.errors import StoreError
from orcmem.models.types import NewMemory, Source
from orcmem.service.memory_service import MemoryService
from orcmem.store.connection import Database
from orcmem.store.migrations import LATEST_VERSION, migrate, schema_version

TABLES = {
    "projects",
    "tasks",
    "runs",
    "events",
    "memories",
    "memory_files",
    "memories_fts",
    "memory_embeddings",
    "session_summaries",
    "extraction_jobs",
    "settings",
    "grants",
    "audit",
}


def test_new_database_has_every_table_and_pragma(tmp_path: Path) -> None:
    db = Database(tmp_path / "orcmem.db")
    names = {row[0] for row in db.query("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    assert names >= TABLES
    assert db.query_one("PRAGMA journal_mode")[0] == "wal"
    assert db.query_one("PRAGMA foreign_keys")[0] == 1
    assert schema_version(db.conn) == LATEST_VERSION
    db.close()


def test_database_file_is_private(tmp_path: Path) -> None:
    Database(tmp_path / "home" / "orcmem.db").close()
    assert stat.S_IMODE((tmp_path / "home" / "orcmem.db").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "home").stat().st_mode) == 0o700


def test_migrating_twice_changes_nothing(tmp_path: Path) -> None:
    db = Database(tmp_path / "orcmem.db")
    assert migrate(db.conn) == LATEST_VERSION
    db.close()
    Database(tmp_path / "orcmem.db").close()


def test_a_first_version_database_keeps_its_runs_and_how_far_they_were_distilled(tmp_path: Path) -> None:
    from orcmem.store.migrations import MIGRATION_1

    conn = apsw.Connection(str(tmp_path / "orcmem.db"))
    conn.execute(MIGRATION_1)
    conn.execute("PRAGMA user_version = 1")
    conn.execute("INSERT INTO projects VALUES ('prj_1', '/p', '/p', 'p', 0, 0)")
    for run, state in (("run_done", "done"), ("run_failed", "failed")):
        conn.execute(
            "INSERT INTO runs (id, project_id, agent, session_id, turns, started_at) "
            "VALUES (?, 'prj_1', 'claude', ?, 2, 0)",
            (run, run),
        )
        conn.execute(
            "INSERT INTO extraction_jobs (run_id, state, through_seq, policy_revision, queued_at) "
            "VALUES (?, ?, 7, 0, 0)",
            (run, state),
        )
    conn.close()
    db = Database(tmp_path / "orcmem.db")
    rows = dict(db.query("SELECT id, distilled_seq FROM runs"))
    assert rows == {"run_done": 7, "run_failed": 0}  # a failed pass leaves its events to the next one
    assert db.query_one("SELECT turns, pending_prompts, agent_command FROM runs WHERE id = 'run_done'") == (2, 0, None)
    db.close()


def test_memories_written_before_the_digest_column_are_found_as_repeats(tmp_path: Path) -> None:
    from orcmem.store.migrations import MIGRATIONS

    conn = apsw.Connection(str(tmp_path / "orcmem.db"))
    for version, sql in MIGRATIONS[:3]:
        conn.execute(sql)
        conn.execute(f"PRAGMA user_version = {version}")
    conn.execute("INSERT INTO projects VALUES ('prj_1', '/p', '/p', 'p', 0, 0)")
    conn.execute(
        "INSERT INTO memories (id, scope, project_id, type, title, body, confidence, status, source, "
        "created_at, updated_at, last_confirmed_at) "
        "VALUES ('mem_1', 'project', 'prj_1', 'lesson', 'Use the forks pool', 'threads crash', 0.6, 'active', "
        "'agent', 0, 0, 0)"
    )
    conn.close()
    db = Database(tmp_path / "orcmem.db")
    from orcmem.store.memories import MemoryRepository

    found = MemoryRepository(db).with_same_text("prj_1", "use the FORKS pool.", "Threads crash")
    assert found is not None and found.id == "mem_1"
    db.close()


def test_many_processes_opening_a_new_file_at_once(tmp_path: Path) -> None:
    path = tmp_path / "orcmem.db"
    code = f"from orcmem.store.connection import Database; Database(__import__('pathlib').Path({str(path)!r})).close()"
    procs = [subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE) for _ in range(4)]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
    conn = apsw.Connection(str(path))
    assert schema_version(conn) == LATEST_VERSION


def test_a_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "orcmem.db"
    Database(path).close()
    conn = apsw.Connection(str(path))
    conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 5}")
    conn.close()
    with pytest.raises(StoreError, match="newer orcmem"):
        Database(path)


def test_a_corrupt_file_is_a_clear_error_and_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "orcmem.db"
    garbage = b"this is not a database at all" * 100
    path.write_bytes(garbage)
    with pytest.raises(StoreError, match="not a readable orcmem database"):
        Database(path)
    assert path.read_bytes() == garbage


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_a_read_only_file_is_a_clear_error(tmp_path: Path) -> None:  # pragma: no cover - CI runs as root
    path = tmp_path / "orcmem.db"
    path.write_bytes(b"")
    path.chmod(0o400)
    with pytest.raises(StoreError):
        Database(path)


def test_a_folder_that_cannot_hold_the_file_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="Cannot open"):
        Database(blocker / "orcmem.db")


def test_secrets_never_reach_the_file(tmp_path: Path) -> None:
    token = "ghp_" + "Zx9" * 12
    aws = "AKIAIOSFODNN7EXAMPLE"
    password = "hunter2hunter2"
    svc = MemoryService.open(tmp_path)
    svc.settings.set_enabled(True)
    project = svc.project(locate(tmp_path))
    body = f"Deploy with token {token}, key {aws} and password={password} via the staging pipeline"
    memory = svc.record(
        project, NewMemory(type="command", title="Staging deploy", body=body, source=Source.USER)
    ).memory
    assert token not in memory.body and aws not in memory.body and password not in memory.body
    assert [h.memory.id for h in svc.search.hits(project, "staging pipeline")] == [memory.id]
    svc.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("orcmem.db*"))
    for secret in (token, aws, password):
        assert secret.encode() not in raw


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from orcmem.models.types import NewMemory, Source
    from orcmem.service.memory_service import MemoryService
    from orcmem.host.workspace import locate

    home, folder, tag, count = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    svc = MemoryService.open(home)
    project = svc.project(locate(folder))
    for i in range(count):
        svc.record(project, NewMemory(type="lesson", title=f"{tag} {i}", body="body", source=Source.AGENT))
        svc.record(project, NewMemory(type="lesson", title=f"{tag} shared", body=str(i), source=Source.AGENT,
                                      topic_key="shared"))
    svc.close()
    """
)


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    svc = MemoryService.open(tmp_path / "home")
    svc.settings.set_enabled(True)
    svc.close()
    count = 150
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path / "home"), str(tmp_path), tag, str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for tag in ("first", "second")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        assert b"locked" not in err
    svc = MemoryService.open(tmp_path / "home")
    project = svc.project(locate(tmp_path))
    rows = svc.store.db.query("SELECT title, evidence_count FROM memories")
    titles = {title for title, _ in rows}
    assert {f"first {i}" for i in range(count)} <= titles and {f"second {i}" for i in range(count)} <= titles
    shared = [evidence for title, evidence in rows if title.endswith("shared")]
    assert shared == [2 * count]  # every merge counted, none lost
    assert svc.count(project) == 2 * count + 1
    svc.close()


def test_a_database_from_before_the_inbox_keeps_every_memory_and_accepts_pending(tmp_path: Path) -> None:
    from orcmem.store.migrations import MIGRATIONS

    path = tmp_path / "orcmem.db"
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA foreign_keys = ON")
    conn.create_scalar_function("orcmem_text_digest", lambda title, body: 0, 2, deterministic=True)
    for version, sql in MIGRATIONS:
        if not isinstance(sql, str):
            break  # the inbox's migration, the first one written in Python: stop before it
        conn.execute(sql)
        conn.execute(f"PRAGMA user_version = {version}")
    conn.execute("INSERT INTO projects VALUES ('prj_1', '/p', '/p', 'p', 0, 0)")
    conn.execute("INSERT INTO team_projects VALUES ('prj_1', 'key', 0, 0)")
    conn.execute(
        "INSERT INTO memories (id, scope, project_id, type, title, body, confidence, status, source, "
        "created_at, updated_at, last_confirmed_at) VALUES ('mem_old', 'project', 'prj_1', 'lesson', "
        "'Use the forks pool', 'threads crash', 0.6, 'active', 'agent', 0, 0, 0)"
    )
    conn.execute("INSERT INTO memory_files VALUES (1, 0, 'vitest.config.ts')")
    with pytest.raises(apsw.ConstraintError):
        conn.execute("UPDATE memories SET status = 'pending'")
    conn.execute("DELETE FROM team_outbox")
    conn.close()

    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA foreign_keys = ON")
    assert migrate(conn) == LATEST_VERSION
    assert conn.execute("SELECT id, status FROM memories").fetchall() == [("mem_old", "active")]
    assert conn.execute("SELECT path_glob FROM memory_files").fetchall() == [("vitest.config.ts",)]  # no cascade
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.execute(
        "INSERT INTO memories (id, scope, project_id, type, title, body, confidence, status, source, "
        "created_at, updated_at, last_confirmed_at) VALUES ('mem_new', 'project', 'prj_1', 'lesson', "
        "'Waiting', 'for review', 0.3, 'pending', 'extraction', 0, 0, 0)"
    )
    assert conn.execute("SELECT count(*) FROM team_outbox").fetchall() == [(0,)]  # waiting: not shared
    conn.execute("UPDATE memories SET status = 'active' WHERE id = 'mem_new'")
    assert conn.execute("SELECT memory_id FROM team_outbox").fetchall() == [("mem_new",)]  # accepted: shared
    with pytest.raises(apsw.ConstraintError):
        conn.execute("UPDATE memories SET status = 'gossip'")
    conn.close()
