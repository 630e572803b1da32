"""Each source read as its owner writes it: Claude Code's auto memory folder, Codex's memories, claude-mem's
database (made here with claude-mem's own tables and columns) and its JSON export."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from orcmem.importing.agent_memories import claude_memory_items, codex_blocks, codex_memory_items
from orcmem.importing.claude_mem import claude_mem_items, observations_in_export
from orcmem.importing.instructions import instruction_items
from orcmem.models.errors import ValidationError
from orcmem.models.types import MemoryType, Provenance, Scope, Source
from orcmem.store.claude_mem import read_observations

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "importing"

# claude-mem's sdk_sessions and observations tables with the columns its schema (src/services/sqlite/schema.sql,
# migration 35) gives them, written out here: the import reads a database claude-mem itself would have made.
CLAUDE_MEM_TABLES = """
CREATE TABLE sdk_sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT, content_session_id TEXT UNIQUE NOT NULL, memory_session_id TEXT UNIQUE,
  project TEXT NOT NULL, platform_source TEXT NOT NULL DEFAULT 'claude', user_prompt TEXT, started_at TEXT NOT NULL,
  started_at_epoch INTEGER NOT NULL, completed_at TEXT, completed_at_epoch INTEGER,
  status TEXT NOT NULL DEFAULT 'active' CHECK(status IN ('active', 'completed', 'failed')), worker_port INTEGER,
  prompt_counter INTEGER DEFAULT 0, custom_title TEXT
);
CREATE TABLE observations (
  id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT NOT NULL, project TEXT NOT NULL, text TEXT,
  type TEXT NOT NULL, title TEXT, subtitle TEXT, facts TEXT, narrative TEXT, concepts TEXT, files_read TEXT,
  files_modified TEXT, prompt_number INTEGER, discovery_tokens INTEGER DEFAULT 0, content_hash TEXT,
  agent_type TEXT, agent_id TEXT, merged_into_project TEXT, generated_by_model TEXT, metadata TEXT,
  created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY(memory_session_id) REFERENCES sdk_sessions(memory_session_id) ON DELETE CASCADE ON UPDATE CASCADE,
  UNIQUE(memory_session_id, content_hash)
);
"""
OBSERVATION_FIELDS = (
    "id", "memory_session_id", "project", "text", "type", "title", "subtitle", "facts", "narrative", "concepts",
    "files_read", "files_modified", "prompt_number", "discovery_tokens", "created_at", "created_at_epoch",
)  # fmt: skip


def claude_mem_db(path: Path) -> Path:
    """A claude-mem database holding the export fixture's observations and their sessions."""
    rows = json.loads((FIXTURES / "claude-mem-export.json").read_text())["observations"]
    with sqlite3.connect(path) as db:
        db.executescript(CLAUDE_MEM_TABLES)
        for session in dict.fromkeys(row["memory_session_id"] for row in rows):
            project = next(row["project"] for row in rows if row["memory_session_id"] == session)
            db.execute(
                "INSERT INTO sdk_sessions (content_session_id, memory_session_id, project, started_at, "
                "started_at_epoch, status) VALUES (?, ?, ?, '2026-11-01T00:00:00Z', 1793577600000, 'completed')",
                (f"content-{session}", session, project),
            )
        for row in rows:
            db.execute(
                f"INSERT INTO observations ({', '.join(OBSERVATION_FIELDS)}) VALUES ({', '.join('?' * 16)})",
                [row.get(name) for name in OBSERVATION_FIELDS],
            )
    db.close()
    return path


def test_claude_code_auto_memory_folder() -> None:
    items = claude_memory_items(FIXTURES / "claude-memory")
    by_title = {item.title: item for item in items}
    assert {item.source for item in items} == {Source.AGENT}
    assert {item.provenance for item in items} == {Provenance.AGENT}
    # MEMORY.md's pointers to topic files are not memories; its own line is.
    assert not any("Testing approach" in item.title for item in items)
    assert "Billing jobs log to `logs/billing.log`; grep it for `INVOICE_FAILED` first." in by_title
    # A topic file with front matter is one memory: its name, its description and its text.
    testing = by_title["Integration tests use a real database"]
    assert testing.type is MemoryType.CONVENTION  # feedback, though it names the command that follows it
    assert testing.body.startswith("Integration tests must hit a real Postgres database, not mocks\n\nThe user was")
    assert by_title["User is a backend engineer"].type is MemoryType.PREFERENCE
    assert by_title["Invoice freeze at month end"].type is MemoryType.FACT
    assert by_title["Billing dashboards"].type is MemoryType.FACT
    # A topic file without front matter is cut into entries.
    debugging = [item for item in items if item.origin.startswith(str(FIXTURES / "claude-memory" / "debugging.md"))]
    assert [item.title[:22] for item in debugging] == ["A stuck invoice run us", "Webhook signature fail"]
    assert len(items) == 7


def test_codex_memories_of_this_project_and_with_all(tmp_path: Path) -> None:
    project = tmp_path / "billing"
    folder = tmp_path / "memories"
    folder.mkdir()
    handbook = (FIXTURES / "codex-memories" / "MEMORY.md").read_text().replace("{PROJECT}", str(project / "api"))
    (folder / "MEMORY.md").write_text(handbook)
    (folder / "memory_summary.md").write_text((FIXTURES / "codex-memories" / "memory_summary.md").read_text())
    blocks = codex_blocks(handbook)
    assert [(b.description, b.cwds) for b in blocks] == [
        ("Fixing rounding errors in invoice totals", [str(project / "api")]),
        ("Deploying the personal blog", ["/home/someone/blog"]),
    ]
    mine = codex_memory_items(folder, (str(project),))
    assert [(item.type, item.scope) for item in mine] == [
        (MemoryType.FACT, Scope.PROJECT),
        (MemoryType.COMMAND, Scope.PROJECT),
    ]
    assert mine[0].files == ("src/money/round.ts",) and mine[0].origin.endswith("MEMORY.md:8")
    everything = codex_memory_items(folder, (str(project),), everything=True)
    assert len(everything) == 5
    assert [item.scope for item in everything[2:]] == [Scope.GLOBAL] * 3
    assert everything[3].title == "Keep answers short: a summary first, details only when asked."
    assert codex_memory_items(folder, (str(tmp_path / "other"),)) == []


def test_claude_mem_database_and_export_read_alike(tmp_path: Path) -> None:
    from_db = read_observations(claude_mem_db(tmp_path / "claude-mem.db"))
    from_export = observations_in_export(json.loads((FIXTURES / "claude-mem-export.json").read_text()))
    assert claude_mem_items(from_db) == claude_mem_items(from_export)
    items = claude_mem_items(from_db)
    assert [item.type for item in items] == [
        MemoryType.LESSON,  # bugfix
        MemoryType.DECISION,  # decision
        MemoryType.FACT,  # discovery
        MemoryType.FACT,  # feature
    ]
    rounding = items[0]
    assert rounding.title == "Invoice totals drifted by a cent"
    assert rounding.body.endswith(
        "- Line amounts stay in fractional cents until the total\n- round.ts uses banker's rounding"
    )
    assert rounding.files == ("src/money/round.ts", "src/invoice/total.ts", "src/money/cents.ts")
    assert rounding.provenance is Provenance.AGENT


def test_claude_mem_refuses_what_is_not_its_own(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="no list of observations"):
        observations_in_export({"memories": []})
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(ValidationError, match="no claude-mem observations table"):
        read_observations(other)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(ValidationError, match="claude-mem database"):
        read_observations(junk)


def test_instruction_files_leave_out_what_orcmem_exported() -> None:
    items = instruction_items((FIXTURES / "project" / "CLAUDE.md").read_text(), "CLAUDE.md")
    titles = [item.title for item in items]
    assert not any("forks pool" in title or "webhooks retry" in title for title in titles)
    assert all(item.provenance is Provenance.PERSON and item.source is Source.USER for item in items)
    assert "Commands: `pnpm db:migrate`" in titles and "Commands: `pnpm dev`" in titles
    assert not any("Service" in title or "TODO" in title or "architecture.md" in title for title in titles)
    assert [item.type for item in items if item.title.startswith("Money")] == [MemoryType.CONVENTION]
    assert items[-1].title.startswith("Before you open a pull request")
