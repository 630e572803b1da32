"""Numbered schema migrations; each runs once, inside one immediate transaction, whatever the number of processes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import apsw

from orcmem.models.constants import SCHEMA_VERSION
from orcmem.models.errors import StoreError
from orcmem.text.duplicates import same_text_digest


def _queue(row: str, forgotten: int) -> str:
    """What a team outbox trigger does with the memory `row` (`new` or `old`): queue it, later than every queued one
    (a migration keeps its full SQL as history; this writes the statement its triggers share)."""
    return (
        "  INSERT INTO team_outbox (memory_id, project_id, queued_at, forgotten)\n"
        f"  VALUES ({row}.id, {row}.project_id, MAX(CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER),\n"
        f"    (SELECT COALESCE(MAX(queued_at), 0) + 1 FROM team_outbox)), {forgotten})\n"
        f"  ON CONFLICT (memory_id) DO UPDATE SET queued_at = excluded.queued_at, forgotten = {forgotten};"
    )


# Every table the design lists is created here, including those later capabilities fill, so the schema is
# designed once. `pk` columns are INTEGER PRIMARY KEYs: stable rowids that full-text and vector tables point at
# (an implicit rowid may change on VACUUM; AUTOINCREMENT never reuses one). Public ids are the TEXT `id` columns.
MIGRATION_1 = """
CREATE TABLE projects (
  id TEXT PRIMARY KEY,
  canonical_root TEXT NOT NULL UNIQUE,
  root_path TEXT NOT NULL,
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL
);

CREATE TABLE tasks (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  title TEXT NOT NULL,
  spec TEXT,
  status TEXT NOT NULL DEFAULT 'open',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX tasks_project_status ON tasks(project_id, status);

CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  task_id TEXT REFERENCES tasks(id) ON DELETE SET NULL,
  agent TEXT NOT NULL,
  session_id TEXT,
  kind TEXT NOT NULL DEFAULT 'conversation',
  title TEXT,
  model TEXT,
  cwd TEXT,
  transcript_path TEXT,
  transcript_offset INTEGER NOT NULL DEFAULT 0,
  turns INTEGER NOT NULL DEFAULT 0,
  skipped_lines INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL DEFAULT 'open',
  started_at INTEGER NOT NULL,
  last_turn_at INTEGER,
  ended_at INTEGER,
  UNIQUE (agent, session_id)
);
CREATE INDEX runs_project ON runs(project_id, started_at DESC);

CREATE TABLE events (
  pk INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  kind TEXT NOT NULL,
  role TEXT,
  message_id TEXT,
  tool_call_id TEXT,
  name TEXT,
  text TEXT,
  is_error INTEGER NOT NULL DEFAULT 0,
  redacted INTEGER NOT NULL DEFAULT 0,
  at INTEGER NOT NULL,
  UNIQUE (run_id, seq)
);
CREATE INDEX events_run_kind ON events(run_id, kind, seq);

CREATE TABLE memories (
  pk INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  scope TEXT NOT NULL DEFAULT 'project' CHECK (scope IN ('project', 'global')),
  project_id TEXT REFERENCES projects(id) ON DELETE CASCADE,
  origin_root TEXT,
  type TEXT NOT NULL,
  topic_key TEXT,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  confidence REAL NOT NULL DEFAULT 0.6,
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'stale', 'retracted')),
  source TEXT NOT NULL CHECK (source IN ('user', 'agent', 'extraction', 'tool')),
  source_run_id TEXT REFERENCES runs(id) ON DELETE SET NULL,
  source_task_id TEXT REFERENCES tasks(id) ON DELETE SET NULL,
  evidence_count INTEGER NOT NULL DEFAULT 1,
  flagged INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  last_confirmed_at INTEGER NOT NULL,
  CHECK ((scope = 'global') = (project_id IS NULL))
);
CREATE INDEX memories_project_status ON memories(project_id, status, type);
CREATE INDEX memories_scope_status ON memories(scope, status);
CREATE INDEX memories_updated ON memories(updated_at DESC);
CREATE INDEX memories_run ON memories(source_run_id);
CREATE INDEX memories_task ON memories(source_task_id);
-- One active memory per pool and topic key; global memories share the '' pool.
CREATE UNIQUE INDEX memories_topic ON memories(COALESCE(project_id, ''), topic_key)
  WHERE topic_key IS NOT NULL AND status = 'active';

CREATE TABLE memory_files (
  memory_pk INTEGER NOT NULL REFERENCES memories(pk) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  path_glob TEXT NOT NULL,
  PRIMARY KEY (memory_pk, position)
);

CREATE VIRTUAL TABLE memories_fts USING fts5(
  title, body, content='memories', content_rowid='pk', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts(rowid, title, body) VALUES (new.pk, new.title, new.body);
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, title, body) VALUES ('delete', old.pk, old.title, old.body);
END;
CREATE TRIGGER memories_au AFTER UPDATE OF title, body ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, title, body) VALUES ('delete', old.pk, old.title, old.body);
  INSERT INTO memories_fts(rowid, title, body) VALUES (new.pk, new.title, new.body);
END;

-- Which model made each stored vector, so vectors of two models are never mixed. `seq` rises with every
-- vector written, so an in-memory copy of the vectors can load only what is new.
CREATE TABLE memory_embeddings (
  memory_pk INTEGER PRIMARY KEY REFERENCES memories(pk) ON DELETE CASCADE,
  model TEXT NOT NULL,
  seq INTEGER NOT NULL,
  embedded_at INTEGER NOT NULL
);
CREATE INDEX memory_embeddings_seq ON memory_embeddings(model, seq);
-- New text makes the vector stale: forget which model made it, so the memory is embedded again.
CREATE TRIGGER memories_text_changed AFTER UPDATE OF title, body ON memories
WHEN old.title IS NOT new.title OR old.body IS NOT new.body BEGIN
  DELETE FROM memory_embeddings WHERE memory_pk = new.pk;
END;

CREATE TABLE session_summaries (
  run_id TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  task_id TEXT REFERENCES tasks(id) ON DELETE SET NULL,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  request TEXT NOT NULL,
  work_done TEXT NOT NULL,
  outcome TEXT NOT NULL,
  open_items TEXT NOT NULL DEFAULT '[]',
  model TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX session_summaries_project ON session_summaries(project_id, created_at DESC);

CREATE TABLE extraction_jobs (
  run_id TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed', 'skipped')),
  error TEXT,
  memories_written INTEGER NOT NULL DEFAULT 0,
  through_seq INTEGER NOT NULL DEFAULT 0,
  provider TEXT,
  model TEXT,
  policy_revision INTEGER NOT NULL DEFAULT 0,
  worker_pid INTEGER,
  heartbeat_at INTEGER,
  queued_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER
);
CREATE INDEX extraction_jobs_state ON extraction_jobs(state, queued_at);

CREATE TABLE settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE grants (
  pk INTEGER PRIMARY KEY,
  project_id TEXT REFERENCES projects(id) ON DELETE CASCADE,
  session_id TEXT,
  action TEXT NOT NULL,
  scope TEXT NOT NULL CHECK (scope IN ('session', 'workspace')),
  created_at INTEGER NOT NULL
);
CREATE INDEX grants_lookup ON grants(action, project_id, session_id);

CREATE TABLE audit (
  pk INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  resource_type TEXT,
  resource_id TEXT,
  project_id TEXT,
  decision TEXT,
  metadata TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_at ON audit(at DESC);
"""

# Learning that survives real hook order: prompts still unanswered when an ingest ends (Claude Code writes a turn's
# last answer after its Stop hook), how far the run has been distilled (a later pass reads only what came after),
# and the agent command found in the hook's parent processes (used to distil when the agent is not on PATH).
MIGRATION_2 = """
ALTER TABLE runs ADD COLUMN pending_prompts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN pending_sidechain_prompts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN distilled_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN agent_command TEXT;
UPDATE runs SET distilled_seq = COALESCE(
  (SELECT through_seq FROM extraction_jobs j WHERE j.run_id = runs.id AND j.state = 'done'), 0);
"""

# Erasing: a deleted or changed memory's words leave the full-text index at once (FTS5's secure-delete), instead of
# staying in older index segments until a merge.
MIGRATION_3 = """
INSERT INTO memories_fts(memories_fts, rank) VALUES ('secure-delete', 1);
"""

# A repeat of the same words is found by an index instead of a full-text query, which costs a write as much as a
# search does at 100,000 memories. `orcmem_text_digest` is `text.duplicates.same_text_digest`, given to the
# migration alone.
MIGRATION_4 = """
ALTER TABLE memories ADD COLUMN text_digest INTEGER;
UPDATE memories SET text_digest = orcmem_text_digest(title, body);
CREATE INDEX memories_text_digest ON memories(text_digest);
"""

# The team pool (docs/team.md): who wrote each memory (a person's id, and the agent that wrote it on their behalf), the
# projects shared with the team, and an outbox the triggers fill with every change to a shared project's memories,
# whichever path made it. `team_applying` is 1 only inside the transaction that applies the server's changes, so
# what came from the team is not sent back. `queued_at` always rises (a millisecond clock can repeat or step back):
# a push drops an entry only if it was not queued again meanwhile. `team_revision` is the server's revision this
# copy was last equal to.
MIGRATION_5 = f"""
ALTER TABLE memories ADD COLUMN author TEXT;
ALTER TABLE memories ADD COLUMN author_agent TEXT;
ALTER TABLE memories ADD COLUMN team_revision INTEGER NOT NULL DEFAULT 0;

CREATE TABLE team_projects (
  project_id TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
  team_key TEXT NOT NULL,
  pulled_through INTEGER NOT NULL DEFAULT 0,
  shared_at INTEGER NOT NULL
);
CREATE TABLE team_outbox (
  memory_id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  queued_at INTEGER NOT NULL,
  forgotten INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE team_applying (applying INTEGER NOT NULL);
INSERT INTO team_applying VALUES (0);

CREATE TRIGGER team_outbox_insert AFTER INSERT ON memories
WHEN new.project_id IN (SELECT project_id FROM team_projects) AND (SELECT applying FROM team_applying) = 0 BEGIN
{_queue("new", 0)}
END;
CREATE TRIGGER team_outbox_update AFTER UPDATE OF type, topic_key, title, body, confidence, status, evidence_count,
  flagged, updated_at, last_confirmed_at, author, author_agent ON memories
WHEN new.project_id IN (SELECT project_id FROM team_projects) AND (SELECT applying FROM team_applying) = 0 BEGIN
{_queue("new", 0)}
END;
CREATE TRIGGER team_outbox_delete AFTER DELETE ON memories
WHEN old.project_id IN (SELECT project_id FROM team_projects) AND (SELECT applying FROM team_applying) = 0 BEGIN
{_queue("old", 1)}
END;
-- A vector made after the memory was queued (or pushed) goes to the team too, from its author's profile only: a
-- profile that pulled a memory before its vector and embedded it itself does not send it back.
CREATE TRIGGER team_outbox_vector AFTER INSERT ON memory_embeddings
WHEN (SELECT applying FROM team_applying) = 0 BEGIN
  INSERT INTO team_outbox (memory_id, project_id, queued_at, forgotten)
  SELECT m.id, m.project_id, MAX(CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER),
    (SELECT COALESCE(MAX(queued_at), 0) + 1 FROM team_outbox)), 0 FROM memories m
  WHERE m.pk = new.memory_pk AND m.project_id IN (SELECT project_id FROM team_projects)
    AND (m.team_revision = 0 OR m.author IS (SELECT value FROM settings WHERE key = 'team.person'))
  ON CONFLICT (memory_id) DO UPDATE SET queued_at = excluded.queued_at;
END;
"""

# Memories that know when the code moved on (docs/freshness.md): what each cited file and program was when the
# memory was written or confirmed, the cited files' last seen state (re-read only when their size or time changes),
# and each checked memory's outcome.
MIGRATION_6 = """
CREATE TABLE citations (
  memory_pk INTEGER NOT NULL REFERENCES memories(pk) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('file', 'program', 'none')),
  target TEXT NOT NULL,
  blob TEXT,
  symbols TEXT NOT NULL DEFAULT '[]',
  commit_id TEXT,
  at INTEGER NOT NULL,
  PRIMARY KEY (memory_pk, kind, target)
);
CREATE TABLE cited_files (
  root TEXT NOT NULL,
  path TEXT NOT NULL,
  mtime_ns INTEGER NOT NULL,
  size INTEGER NOT NULL,
  blob TEXT,
  PRIMARY KEY (root, path)
);
CREATE TABLE freshness (
  memory_pk INTEGER PRIMARY KEY REFERENCES memories(pk) ON DELETE CASCADE,
  state TEXT NOT NULL CHECK (state IN ('fresh', 'stale')),
  reason TEXT NOT NULL,
  since INTEGER NOT NULL,
  checked_at INTEGER NOT NULL
);
"""

# Where each memory's words came from (docs/security.md, Untrusted text), a stored field every write path sets.
# Memories from before it get the value their source implies: a person's own are `person`, an agent's `agent`, and a
# distilled one `tool_text` (its digest was not fenced, so nothing tells the user's words from a tool's); a person's
# memory pulled from another person's profile is `teammate`. A change of provenance is a change the team hears of.
MIGRATION_7 = f"""
ALTER TABLE memories ADD COLUMN provenance TEXT NOT NULL DEFAULT 'tool_text'
  CHECK (provenance IN ('person', 'user_words', 'agent', 'tool_text', 'teammate'));
UPDATE memories SET provenance = CASE source WHEN 'user' THEN 'person' WHEN 'agent' THEN 'agent' ELSE 'tool_text' END;
UPDATE memories SET provenance = 'teammate' WHERE provenance = 'person' AND team_revision > 0
  AND author IS NOT NULL AND author IS NOT (SELECT value FROM settings WHERE key = 'team.person');
CREATE INDEX memories_provenance ON memories(provenance);

DROP TRIGGER team_outbox_update;
CREATE TRIGGER team_outbox_update AFTER UPDATE OF type, topic_key, title, body, confidence, status, evidence_count,
  flagged, updated_at, last_confirmed_at, author, author_agent, provenance ON memories
WHEN new.project_id IN (SELECT project_id FROM team_projects) AND (SELECT applying FROM team_applying) = 0 BEGIN
{_queue("new", 0)}
END;
"""

# Past sessions brought in by `orcmem import sessions`: when each run was imported (NULL for a run the hooks saw
# live), and the memories those runs created (not those they only confirmed), so the import can be listed and
# undone without touching what was learned live.
MIGRATION_8 = """
ALTER TABLE runs ADD COLUMN imported_at INTEGER;
CREATE INDEX runs_imported ON runs(project_id, imported_at) WHERE imported_at IS NOT NULL;
CREATE TABLE imported_memories (
  memory_id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL
);
CREATE INDEX imported_memories_run ON imported_memories(run_id);
"""

# The review inbox (docs/learning.md, The review inbox): a learned memory the project's policy holds waits with status
# `pending`, out of the brief, recall, search and the team pool, until a person accepts it (or it expires). The status
# CHECK gains the value by SQLite's documented way to loosen a constraint without rebuilding the table (a rebuild
# would cascade the delete to its files, citations and vectors): the table's SQL is rewritten and the schema cookie
# bumped, inside the migration's transaction. The team outbox's triggers pass over a pending memory, which is sent
# once accepted; a partial index keeps the expiry check at open as cheap as the inbox is small.
_STATUS_BEFORE = "CHECK (status IN ('active', 'stale', 'retracted'))"
_STATUS_AFTER = "CHECK (status IN ('active', 'stale', 'retracted', 'pending'))"
MIGRATION_9_SQL = f"""
CREATE INDEX memories_pending ON memories(created_at) WHERE status = 'pending';

DROP TRIGGER team_outbox_insert;
CREATE TRIGGER team_outbox_insert AFTER INSERT ON memories
WHEN new.status != 'pending' AND new.project_id IN (SELECT project_id FROM team_projects)
  AND (SELECT applying FROM team_applying) = 0 BEGIN
{_queue("new", 0)}
END;
DROP TRIGGER team_outbox_update;
CREATE TRIGGER team_outbox_update AFTER UPDATE OF type, topic_key, title, body, confidence, status, evidence_count,
  flagged, updated_at, last_confirmed_at, author, author_agent, provenance ON memories
WHEN new.status != 'pending' AND new.project_id IN (SELECT project_id FROM team_projects)
  AND (SELECT applying FROM team_applying) = 0 BEGIN
{_queue("new", 0)}
END;
DROP TRIGGER team_outbox_delete;
CREATE TRIGGER team_outbox_delete AFTER DELETE ON memories
WHEN old.status != 'pending' AND old.project_id IN (SELECT project_id FROM team_projects)
  AND (SELECT applying FROM team_applying) = 0 BEGIN
{_queue("old", 1)}
END;
"""


def _loosen_status(conn: apsw.Connection, before: str, after: str) -> None:
    """Rewrite the memories table's status CHECK from `before` to `after` in place (https://sqlite.org/
    lang_altertable.html, "simpler procedure": no stored row changes) and bump the schema cookie so every connection
    reads the new text; inside the migration's transaction."""
    cookie: Any = conn.execute("PRAGMA schema_version").fetchall()[0][0]
    conn.execute("PRAGMA writable_schema = ON")
    try:
        conn.execute(
            "UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE type = 'table' AND name = 'memories'",
            (before, after),
        )
        if conn.changes() != 1:
            raise StoreError("The memories table is not the one this migration expects.")
        conn.execute(f"PRAGMA schema_version = {int(cookie) + 1}")
    finally:
        conn.execute("PRAGMA writable_schema = OFF")


def migration_9(conn: apsw.Connection) -> None:
    """Let a memory's status be `pending`, then the index and the triggers."""
    _loosen_status(conn, _STATUS_BEFORE, _STATUS_AFTER)
    conn.execute(MIGRATION_9_SQL)


# What was imported from elsewhere (docs/importing.md): one batch per `orcmem import` command (what it read, when,
# what it found and added), each memory it added linked to it, so `orcmem import undo` erases exactly those; `item_key`
# names the item in its source, so importing the same thing again adds nothing. A link leaves with its memory.
MIGRATION_10 = """
CREATE TABLE import_batches (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  source_path TEXT NOT NULL,
  project_id TEXT REFERENCES projects(id) ON DELETE SET NULL,
  at INTEGER NOT NULL,
  found INTEGER NOT NULL DEFAULT 0,
  added INTEGER NOT NULL DEFAULT 0,
  skipped INTEGER NOT NULL DEFAULT 0,
  undone_at INTEGER
);
CREATE TABLE import_batch_memories (
  memory_pk INTEGER PRIMARY KEY REFERENCES memories(pk) ON DELETE CASCADE,
  batch_id INTEGER NOT NULL REFERENCES import_batches(id) ON DELETE CASCADE,
  item_key TEXT NOT NULL
);
CREATE INDEX import_batch_memories_batch ON import_batch_memories(batch_id);
CREATE INDEX import_batch_memories_key ON import_batch_memories(item_key);
"""

# The cost of learning (docs/learning.md, Cost and budget): one row per distillation call, kept when its run is
# deleted (the bill stays true); a job refused for a rate limit waits in the queue until `not_before`.
MIGRATION_11 = """
CREATE TABLE distill_usage (
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL,
  project_id TEXT NOT NULL,
  provider TEXT NOT NULL,
  model TEXT,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens INTEGER NOT NULL DEFAULT 0,
  cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL,
  wall_ms INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  finished_at INTEGER NOT NULL,
  status TEXT NOT NULL,
  headroom REAL,
  rate_limit_low INTEGER NOT NULL DEFAULT 0,
  resets_at INTEGER
);
CREATE INDEX distill_usage_started ON distill_usage(started_at);
CREATE INDEX distill_usage_run ON distill_usage(run_id);
ALTER TABLE extraction_jobs ADD COLUMN not_before INTEGER;
ALTER TABLE extraction_jobs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
"""

# The audit's "never recalled" (docs/audit.md): when recall last gave each memory. Kept
# apart from the memory row so noting a recall never touches the row, its full-text entry or the team outbox.
MIGRATION_12 = """
CREATE TABLE memory_recalls (
  memory_pk INTEGER PRIMARY KEY REFERENCES memories(pk) ON DELETE CASCADE,
  last_at INTEGER NOT NULL
);
"""

# Contradictions resolved with their history (docs/learning.md): a replaced memory becomes `superseded`, kept and
# linked to its successor; `refines` and `conflicts` are links between two memories, a conflict open until a person
# settles it. The status CHECK gains the value the way migration 9 loosened it.
_STATUS_BEFORE_13 = _STATUS_AFTER
_STATUS_AFTER_13 = "CHECK (status IN ('active', 'stale', 'retracted', 'pending', 'superseded'))"
MIGRATION_13_SQL = """
CREATE TABLE memory_links (
  pk INTEGER PRIMARY KEY,
  from_pk INTEGER NOT NULL REFERENCES memories(pk) ON DELETE CASCADE,
  to_pk INTEGER NOT NULL REFERENCES memories(pk) ON DELETE CASCADE,
  relation TEXT NOT NULL CHECK (relation IN ('replaces', 'refines', 'conflicts')),
  at INTEGER NOT NULL,
  by TEXT NOT NULL,
  open INTEGER NOT NULL DEFAULT 0,
  settled_at INTEGER,
  settled_by TEXT,
  UNIQUE (from_pk, to_pk)
);
CREATE INDEX memory_links_to ON memory_links(to_pk);
CREATE INDEX memory_links_open ON memory_links(open) WHERE open = 1;
"""


# The contradiction judgement's cost (docs/learning.md, Cost and budget): each ledger row says which call of its
# run it was; the rows before this are all distillations.
MIGRATION_14 = """
ALTER TABLE distill_usage ADD COLUMN call TEXT NOT NULL DEFAULT 'distill' CHECK (call IN ('distill', 'judgement'));
"""


def migration_13(conn: apsw.Connection) -> None:
    """Let a memory's status be `superseded`, then the links table."""
    _loosen_status(conn, _STATUS_BEFORE_13, _STATUS_AFTER_13)
    conn.execute(MIGRATION_13_SQL)


# The audit's secret scan, remembered (docs/audit.md, Speed): the version of the redaction rules each memory was
# last found clean by. A memory is scanned again only when its text changed since (the trigger forgets the scan, as
# new text forgets the vector) or the rules did.
MIGRATION_15 = """
CREATE TABLE memory_scans (
  memory_pk INTEGER PRIMARY KEY REFERENCES memories(pk) ON DELETE CASCADE,
  rules INTEGER NOT NULL
);
CREATE TRIGGER memory_scans_text_changed AFTER UPDATE OF title, body ON memories
WHEN old.title IS NOT new.title OR old.body IS NOT new.body BEGIN
  DELETE FROM memory_scans WHERE memory_pk = new.pk;
END;
"""

# The audit's pair findings, remembered (docs/audit.md, Speed): the near duplicates and possible contradictions
# the last audit of a project found, under a key of everything they follow from (which memories were compared,
# their vectors' write order, the pair rules' code). The next audit whose key is the same shows them again without
# comparing vectors; any new, edited, re-embedded or retired memory changes the key.
MIGRATION_16 = """
CREATE TABLE audit_pair_sets (
  project_id TEXT PRIMARY KEY,
  key TEXT NOT NULL,
  compared INTEGER NOT NULL
);
CREATE TABLE audit_pairs (
  project_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  kind TEXT NOT NULL,
  memory_pk INTEGER NOT NULL,
  other_pk INTEGER NOT NULL,
  similarity REAL NOT NULL,
  PRIMARY KEY (project_id, position)
) WITHOUT ROWID;
"""

# Links travel through the team pool (docs/team.md, History): each link says who stated it when the team sent it
# (`person`; NULL for this profile's own) and whether the team holds it as it is (`team_state` 1; a new or changed
# link is 0 until pushed). Each shared project keeps how far the team's links were pulled, apart from its memories'
# cursor. A link pulled before one of its memories is here waits in `team_links_waiting` and applies when it arrives.
MIGRATION_17 = """
ALTER TABLE memory_links ADD COLUMN person TEXT;
ALTER TABLE memory_links ADD COLUMN team_state INTEGER NOT NULL DEFAULT 0;
ALTER TABLE team_projects ADD COLUMN links_pulled_through INTEGER NOT NULL DEFAULT 0;
CREATE TABLE team_links_waiting (
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  from_id TEXT NOT NULL,
  to_id TEXT NOT NULL,
  person TEXT NOT NULL,
  relation TEXT NOT NULL,
  by TEXT NOT NULL,
  open INTEGER NOT NULL,
  settled INTEGER NOT NULL,
  at INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (from_id, to_id, person)
);
CREATE INDEX memory_links_unshared ON memory_links(team_state) WHERE team_state = 0;
"""


# The audit's close pairs, remembered so an audit after a few edits searches only around what changed
# (docs/audit.md, Speed); replaces migration 16's whole-audit findings. Per project: the pair rules and model they
# follow from and every close pair the search gave, with its similarity, the pair rules' verdict once judged and
# whether the last audit reported it, as one array (`service/audit_pairs.PAIR_FIELDS`: read and written whole, it
# costs milliseconds where 350,000 rows cost seconds); and each memory compared, with its id, its vector's write
# order and its source (`audit_compared`). And the vectors' write order from a counter that never goes back: taken
# as MAX(seq) + 1, a re-embedded newest memory (its row deleted by an edit) got its old number again, so neither the
# audit nor search's in-memory copy saw the new vector.
MIGRATION_18 = """
CREATE TABLE vector_seq (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  last INTEGER NOT NULL
);
INSERT INTO vector_seq (id, last) SELECT 1, COALESCE(MAX(seq), 0) FROM memory_embeddings;
DROP TABLE audit_pairs;
DROP TABLE audit_pair_sets;
CREATE TABLE audit_close_pairs (
  project_id TEXT PRIMARY KEY,
  key TEXT NOT NULL,
  pairs BLOB NOT NULL
);
CREATE TABLE audit_compared (
  project_id TEXT NOT NULL,
  memory_pk INTEGER NOT NULL,
  memory_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  source TEXT NOT NULL,
  PRIMARY KEY (project_id, memory_pk)
) WITHOUT ROWID;
"""

# What the store audit works out of each memory's text alone, kept (docs/audit.md, Speed): the facts the pair rules
# compare (NULL: not worked out yet) and whether the memory is empty or generic, under the version of the code they
# follow from (`service/audit.traits_version`). New text forgets them, as it forgets the secret scan.
MIGRATION_19 = """
CREATE TABLE memory_traits (
  memory_pk INTEGER PRIMARY KEY REFERENCES memories(pk) ON DELETE CASCADE,
  version INTEGER NOT NULL,
  generic INTEGER NOT NULL,
  facts TEXT
);
CREATE TRIGGER memory_traits_text_changed AFTER UPDATE OF title, body ON memories
WHEN old.title IS NOT new.title OR old.body IS NOT new.body BEGIN
  DELETE FROM memory_traits WHERE memory_pk = new.pk;
END;
"""

MIGRATIONS: tuple[tuple[int, str | Callable[[apsw.Connection], None]], ...] = (
    (1, MIGRATION_1),
    (2, MIGRATION_2),
    (3, MIGRATION_3),
    (4, MIGRATION_4),
    (5, MIGRATION_5),
    (6, MIGRATION_6),
    (7, MIGRATION_7),
    (8, MIGRATION_8),
    (9, migration_9),
    (10, MIGRATION_10),
    (11, MIGRATION_11),
    (12, MIGRATION_12),
    (13, migration_13),
    (14, MIGRATION_14),
    (15, MIGRATION_15),
    (16, MIGRATION_16),
    (17, MIGRATION_17),
    (18, MIGRATION_18),
    (19, MIGRATION_19),
)
LATEST_VERSION = MIGRATIONS[-1][0]
# The prompt hook checks the version without importing this module; the two must agree.
assert LATEST_VERSION == SCHEMA_VERSION, "set SCHEMA_VERSION in models/constants.py to the newest migration"


def schema_version(conn: apsw.Connection) -> int:
    """The schema version recorded in the file (0 for a new file)."""
    version: Any = conn.execute("PRAGMA user_version").fetchall()[0][0]
    return int(version)


def migrate(conn: apsw.Connection) -> int:
    """Bring the schema up to date; safe to call twice and from several processes at once."""
    if schema_version(conn) == LATEST_VERSION:
        return LATEST_VERSION
    # BEGIN IMMEDIATE takes the write lock first, so a second process waits here (busy timeout) and then
    # re-reads the version instead of running the same migration again.
    conn.create_scalar_function("orcmem_text_digest", same_text_digest, 2, deterministic=True)
    conn.execute("BEGIN IMMEDIATE")
    try:
        current = schema_version(conn)
        if current > LATEST_VERSION:
            raise StoreError(
                f"The database was made by a newer orcmem (schema {current}, this one knows {LATEST_VERSION}). "
                "Upgrade orcmem to use it."
            )
        for version, sql in MIGRATIONS:
            if version > current:
                if callable(sql):
                    sql(conn)
                else:
                    conn.execute(sql)
                conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return LATEST_VERSION
