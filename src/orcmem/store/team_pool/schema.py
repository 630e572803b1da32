"""The team pool's PostgreSQL schema: versioned migrations orcmem applies itself, safely from several clients at once.

Everything lives in the `orcmem` schema. Rows carry their team; row-level security lets a database role read the
teams it is a member of and write those it may write (docs/team.md, Roles). Members never delete rows: forgetting
is an update that empties the text (a tombstone), so every profile learns of it through the change sequence.
"""

from __future__ import annotations

from typing import Any

from orcmem.models.errors import TeamError

SCHEMA = "orcmem"
# Any fixed number: held for the length of one migration, so two clients never migrate at once.
MIGRATION_LOCK = 7_160_414
EMBEDDING_DIMENSIONS = 384


def _members_only(table: str) -> str:
    """Row-level security on a team table: a role reads the rows of its teams and writes those it may write."""
    members = f"SELECT team_id FROM {SCHEMA}.members WHERE role_name = current_user"
    return f"""ALTER TABLE {SCHEMA}.{table} ENABLE ROW LEVEL SECURITY;
CREATE POLICY {table}_read ON {SCHEMA}.{table} FOR SELECT
  USING (team_id IN ({members}));
CREATE POLICY {table}_insert ON {SCHEMA}.{table} FOR INSERT
  WITH CHECK (team_id IN ({members} AND can_write));
CREATE POLICY {table}_update ON {SCHEMA}.{table} FOR UPDATE
  USING (team_id IN ({members} AND can_write))
  WITH CHECK (team_id IN ({members} AND can_write));"""


MIGRATION_1 = f"""
CREATE TABLE {SCHEMA}.teams (
  id text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9_-]{{0,62}}$'),
  created_at timestamptz NOT NULL DEFAULT now()
);
-- Which database roles belong to which team; a row-level policy lets a role see only its own rows here.
CREATE TABLE {SCHEMA}.members (
  role_name name NOT NULL,
  team_id text NOT NULL REFERENCES {SCHEMA}.teams(id) ON DELETE CASCADE,
  can_write boolean NOT NULL DEFAULT true,
  PRIMARY KEY (role_name, team_id)
);
ALTER TABLE {SCHEMA}.members ENABLE ROW LEVEL SECURITY;
CREATE POLICY members_own ON {SCHEMA}.members FOR SELECT USING (role_name = current_user);

-- One number that rises with every change to any memory; a profile pulls what is above its cursor. Writers of one
-- team hold that team's advisory lock while they write, so numbers are committed in order within a team.
CREATE SEQUENCE {SCHEMA}.change_seq;

CREATE TABLE {SCHEMA}.memories (
  team_id text NOT NULL REFERENCES {SCHEMA}.teams(id) ON DELETE CASCADE,
  project_key text NOT NULL,
  id text NOT NULL,
  type text NOT NULL,
  topic_key text,
  title text NOT NULL,
  body text NOT NULL,
  confidence real NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'stale', 'retracted')),
  source text NOT NULL CHECK (source IN ('user', 'agent', 'extraction', 'tool')),
  evidence_count integer NOT NULL,
  flagged boolean NOT NULL DEFAULT false,
  files jsonb NOT NULL DEFAULT '[]',
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  last_confirmed_at bigint NOT NULL,
  author text,
  author_agent text,
  model_id text,
  embedding vector({EMBEDDING_DIMENSIONS}),
  revision bigint NOT NULL DEFAULT 1,
  seq bigint NOT NULL,
  forgotten boolean NOT NULL DEFAULT false,
  merged_into text,
  changed_by text,
  changed_at timestamptz NOT NULL DEFAULT now(),
  tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', body), 'B')
  ) STORED,
  PRIMARY KEY (team_id, id)
);
CREATE INDEX memories_changes ON {SCHEMA}.memories (team_id, project_key, seq);
CREATE UNIQUE INDEX memories_topic ON {SCHEMA}.memories (team_id, project_key, topic_key)
  WHERE topic_key IS NOT NULL AND status = 'active' AND NOT forgotten;
CREATE INDEX memories_words ON {SCHEMA}.memories USING gin (tsv);
CREATE INDEX memories_meaning ON {SCHEMA}.memories USING hnsw (embedding vector_cosine_ops);

{_members_only("memories")}

-- Only you can overrule you, across the team: what a person wrote is changed only with that person's id, and
-- forgetting always empties the text.
CREATE FUNCTION {SCHEMA}.guard_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.source = 'user' AND OLD.author IS NOT NULL AND NOT OLD.forgotten
     AND NEW.changed_by IS DISTINCT FROM OLD.author THEN
    RAISE EXCEPTION 'orcmem: only % can change memory %', OLD.author, OLD.id USING ERRCODE = '42501';
  END IF;
  IF NEW.forgotten THEN
    NEW.title := ''; NEW.body := ''; NEW.files := '[]'; NEW.embedding := NULL; NEW.topic_key := NULL;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER memories_guard BEFORE UPDATE ON {SCHEMA}.memories
  FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.guard_change();
"""

# How many of a project's memories hold each word (lexeme), so word search can weigh a word by its rarity (as BM25
# does) and leave out words most memories hold: ranking every memory that holds "test" or "fails" costs hundreds of
# milliseconds at a million memories. Kept by statement-level triggers over each statement's changed rows; their
# function runs as the schema's owner, so members need no right on the table beyond reading their teams' rows. The
# empty lexeme counts the project's memories.
MIGRATION_2 = f"""
CREATE TABLE {SCHEMA}.lexemes (
  team_id text NOT NULL REFERENCES {SCHEMA}.teams(id) ON DELETE CASCADE,
  project_key text NOT NULL,
  lexeme text NOT NULL,
  memories bigint NOT NULL,
  PRIMARY KEY (team_id, project_key, lexeme)
);
ALTER TABLE {SCHEMA}.lexemes ENABLE ROW LEVEL SECURITY;
CREATE POLICY lexemes_read ON {SCHEMA}.lexemes FOR SELECT
  USING (team_id IN (SELECT team_id FROM {SCHEMA}.members WHERE role_name = current_user));

-- An update counts only the rows whose words or project changed (moving a vector changes neither).
CREATE FUNCTION {SCHEMA}.count_lexemes() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, {SCHEMA} AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO {SCHEMA}.lexemes AS l (team_id, project_key, lexeme, memories)
    SELECT c.team_id, c.project_key, w.lexeme, sum(c.delta)
    FROM (
      SELECT o.team_id, o.project_key, o.tsv AS words, -1 AS delta FROM old_rows o JOIN new_rows n
        ON n.team_id = o.team_id AND n.id = o.id WHERE (o.tsv, o.project_key) IS DISTINCT FROM (n.tsv, n.project_key)
      UNION ALL
      SELECT n.team_id, n.project_key, n.tsv, 1 FROM old_rows o JOIN new_rows n
        ON n.team_id = o.team_id AND n.id = o.id WHERE (o.tsv, o.project_key) IS DISTINCT FROM (n.tsv, n.project_key)
    ) AS c, unnest(tsvector_to_array(c.words) || ARRAY['']) AS w(lexeme)
    GROUP BY 1, 2, 3 HAVING sum(c.delta) != 0
    ON CONFLICT (team_id, project_key, lexeme) DO UPDATE SET memories = l.memories + excluded.memories;
    -- A word no memory holds any more (a forgotten one's) leaves the table.
    DELETE FROM {SCHEMA}.lexemes l
    USING (SELECT team_id, project_key FROM new_rows UNION SELECT team_id, project_key FROM old_rows) AS p
    WHERE l.team_id = p.team_id AND l.project_key = p.project_key AND l.memories <= 0;
    RETURN NULL;
  END IF;
  IF TG_OP = 'DELETE' THEN
    INSERT INTO {SCHEMA}.lexemes AS l (team_id, project_key, lexeme, memories)
    SELECT o.team_id, o.project_key, w.lexeme, -count(*)
    FROM old_rows o, unnest(tsvector_to_array(o.tsv) || ARRAY['']) AS w(lexeme) GROUP BY 1, 2, 3
    ON CONFLICT (team_id, project_key, lexeme) DO UPDATE SET memories = l.memories + excluded.memories;
  ELSE
    INSERT INTO {SCHEMA}.lexemes AS l (team_id, project_key, lexeme, memories)
    SELECT n.team_id, n.project_key, w.lexeme, count(*)
    FROM new_rows n, unnest(tsvector_to_array(n.tsv) || ARRAY['']) AS w(lexeme) GROUP BY 1, 2, 3
    ON CONFLICT (team_id, project_key, lexeme) DO UPDATE SET memories = l.memories + excluded.memories;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER memories_lexemes_insert AFTER INSERT ON {SCHEMA}.memories
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION {SCHEMA}.count_lexemes();
CREATE TRIGGER memories_lexemes_update AFTER UPDATE ON {SCHEMA}.memories
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION {SCHEMA}.count_lexemes();
CREATE TRIGGER memories_lexemes_delete AFTER DELETE ON {SCHEMA}.memories
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION {SCHEMA}.count_lexemes();

INSERT INTO {SCHEMA}.lexemes (team_id, project_key, lexeme, memories)
SELECT m.team_id, m.project_key, w.lexeme, count(*)
FROM {SCHEMA}.memories m, unnest(tsvector_to_array(m.tsv) || ARRAY['']) AS w(lexeme) GROUP BY 1, 2, 3;
"""

# Pushes that do not wait for the vector index: a pushed vector lands in `fresh_embedding` (no index), and the
# syncing clients move fresh vectors into the HNSW-indexed `embedding` in batches afterwards (`move_fresh_vectors`);
# meaning search reads both. Inserting into HNSW costs about a millisecond a row, which would make a push of 10,000
# memories wait for it. Moving a vector is not a change: the guard lets an update through without a new revision
# only when nothing but the two vector columns differs (the word counts' trigger skips rows whose words did not change).
MIGRATION_3 = f"""
ALTER TABLE {SCHEMA}.memories ADD COLUMN fresh_embedding vector({EMBEDDING_DIMENSIONS});
CREATE INDEX memories_fresh ON {SCHEMA}.memories (team_id, project_key) WHERE fresh_embedding IS NOT NULL;

CREATE OR REPLACE FUNCTION {SCHEMA}.guard_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.revision = OLD.revision THEN
    -- Only moving a pushed vector into the index, as it is, goes without a new revision.
    IF (to_jsonb(NEW) - 'embedding' - 'fresh_embedding' - 'tsv')
       IS DISTINCT FROM (to_jsonb(OLD) - 'embedding' - 'fresh_embedding' - 'tsv')
       OR OLD.fresh_embedding IS NULL OR NEW.fresh_embedding IS NOT NULL
       OR NEW.embedding IS DISTINCT FROM OLD.fresh_embedding THEN
      RAISE EXCEPTION 'orcmem: a change to memory % must raise its revision', OLD.id USING ERRCODE = '42501';
    END IF;
    RETURN NEW;
  END IF;
  IF OLD.source = 'user' AND OLD.author IS NOT NULL AND NOT OLD.forgotten
     AND NEW.changed_by IS DISTINCT FROM OLD.author THEN
    RAISE EXCEPTION 'orcmem: only % can change memory %', OLD.author, OLD.id USING ERRCODE = '42501';
  END IF;
  IF NEW.forgotten THEN
    NEW.title := ''; NEW.body := ''; NEW.files := '[]'; NEW.embedding := NULL; NEW.fresh_embedding := NULL;
    NEW.topic_key := NULL;
  END IF;
  RETURN NEW;
END $$;

"""

# How `guard_person` begins, in its first version and as migration 5 replaces it: a role bound to no one, or a vector
# moved into the index, passes.
_UNBOUND_OR_VECTOR = f"""DECLARE
  bound text := {SCHEMA}.role_person(NEW.team_id);
BEGIN
  IF bound IS NULL OR (TG_OP = 'UPDATE' AND NEW.revision = OLD.revision) THEN
    RETURN NEW;  -- an unbound role, or a vector moved into the index (guard_change allows nothing else)
  END IF;"""

# A role bound to one person (`orcmem team grant ROLE --person ID`) writes as that person only: its changes must carry
# that id, and what it stores as a person's own memory must be that person's. A role bound to no one (a shared or CI
# role) is trusted with the ids its profiles claim (docs/team.md, Roles).
MIGRATION_4 = f"""
ALTER TABLE {SCHEMA}.members ADD COLUMN person text;

CREATE FUNCTION {SCHEMA}.role_person(team text) RETURNS text LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, {SCHEMA} AS $$
  SELECT person FROM {SCHEMA}.members WHERE role_name = session_user AND team_id = team  -- the caller, not the owner
$$;

CREATE FUNCTION {SCHEMA}.guard_person() RETURNS trigger LANGUAGE plpgsql AS $$
{_UNBOUND_OR_VECTOR}
  IF NEW.changed_by IS DISTINCT FROM bound
     OR (TG_OP = 'INSERT' AND NEW.source = 'user' AND NEW.author IS DISTINCT FROM bound) THEN
    RAISE EXCEPTION 'orcmem: this database role writes as %, not as %', bound, NEW.changed_by USING ERRCODE = '42501';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER memories_person BEFORE INSERT OR UPDATE ON {SCHEMA}.memories
  FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.guard_person();
"""

# A pool no member can forge, whatever SQL it sends (docs/security.md, Team pool): a bound role inserts only its own
# person's memories (agent and extraction ones too, or they read "from you" on that person's machine and its agents
# could never overrule them); no role changes a memory's author; a forgotten memory stays forgotten (the forgetting
# update is the only erase, and the tombstone is final); the server's clock stamps `created_at` and `updated_at`, and
# the change number, so a client can neither date a memory nor hide it below the others' cursors (nor confirm one in
# the future). The writer's own
# clock still orders two offline edits of one memory (docs/team.md, Clocks): it is kept apart, in `edited_at`, which
# no profile reads back. A trigger named after the others (`memories_stamp`) runs last, on what they let through.
MIGRATION_5 = f"""
ALTER TABLE {SCHEMA}.memories ADD COLUMN edited_at bigint;

CREATE OR REPLACE FUNCTION {SCHEMA}.guard_person() RETURNS trigger LANGUAGE plpgsql AS $$
{_UNBOUND_OR_VECTOR}
  IF NEW.changed_by IS DISTINCT FROM bound THEN
    RAISE EXCEPTION 'orcmem: this database role writes as %, not as %', bound, NEW.changed_by USING ERRCODE = '42501';
  END IF;
  IF TG_OP = 'INSERT' THEN
    IF NEW.author IS NULL THEN
      NEW.author := bound;  -- a memory from before authors were kept: it is the writing person's
    ELSIF NEW.author IS DISTINCT FROM bound THEN
      RAISE EXCEPTION 'orcmem: this database role writes as %, not as author %', bound, NEW.author
        USING ERRCODE = '42501';
    END IF;
  END IF;
  RETURN NEW;
END $$;

CREATE FUNCTION {SCHEMA}.stamp_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF OLD.forgotten THEN
      RAISE EXCEPTION 'orcmem: memory % was forgotten; it cannot change', OLD.id USING ERRCODE = '42501';
    END IF;
    IF NEW.author IS DISTINCT FROM OLD.author THEN
      RAISE EXCEPTION 'orcmem: the author of memory % is %; it cannot change', OLD.id, OLD.author
        USING ERRCODE = '42501';
    END IF;
    IF NEW.revision = OLD.revision THEN
      RETURN NEW;  -- a vector moved into the index: not a change (guard_change let nothing else through)
    END IF;
  ELSIF NEW.forgotten THEN
    -- A memory inserted already forgotten is a tombstone too: it keeps no text on the server.
    NEW.title := ''; NEW.body := ''; NEW.files := '[]'; NEW.embedding := NULL; NEW.fresh_embedding := NULL;
    NEW.topic_key := NULL;
  END IF;
  -- The team's lock (orcmem's own pushes hold it already) before the number: a writer that skipped it could commit
  -- a number below one another profile has pulled past, and that change would never reach it.
  PERFORM pg_advisory_xact_lock(hashtext('orcmem.team.' || NEW.team_id));
  NEW.seq := nextval('{SCHEMA}.change_seq');
  NEW.updated_at := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  NEW.created_at := CASE WHEN TG_OP = 'UPDATE' THEN OLD.created_at ELSE NEW.updated_at END;
  -- When it was last confirmed stays the writer's (confirming needs no edit), but never later than now: a time in the
  -- future would keep the memory at the top of every profile's recall (recency) for ever.
  NEW.last_confirmed_at := LEAST(NEW.last_confirmed_at, NEW.updated_at);
  NEW.changed_at := clock_timestamp();
  RETURN NEW;
END $$;
CREATE TRIGGER memories_stamp BEFORE INSERT OR UPDATE ON {SCHEMA}.memories
  FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.stamp_change();
"""

# Where each memory's words came from (docs/security.md, Untrusted text), as its writer's profile stored it. Rows from
# before it hold NULL, read as the provenance their source implies (`provenance_seen_by`): an update here would have
# to raise every row's revision. Numbered 6: the server triggers of this round are migration 5.
MIGRATION_6 = f"""
ALTER TABLE {SCHEMA}.memories ADD COLUMN provenance text
  CHECK (provenance IN ('person', 'user_words', 'agent', 'tool_text', 'teammate'));
"""

# A memory replaced by a newer one is kept as `superseded` (docs/learning.md, Contradictions); the pool holds what
# profiles push, so it accepts the status too.
MIGRATION_7 = f"""
ALTER TABLE {SCHEMA}.memories DROP CONSTRAINT IF EXISTS memories_status_check;
ALTER TABLE {SCHEMA}.memories ADD CONSTRAINT memories_status_check
  CHECK (status IN ('active', 'stale', 'retracted', 'superseded'));
"""

# Links between memories travel too (docs/learning.md, Contradictions; docs/team.md, History): each is one person's
# statement that a memory replaces, refines or conflicts with an older one of the same project, keyed by the pair and
# its author, so two people's word on one pair never overwrite each other. The rules of the memories hold (docs/
# security.md, Team pool): a bound role states links as its person only, no role changes a link's author or pair,
# members have no right to delete one, and the server's clock dates each statement and numbers it in the change
# sequence the profiles pull by. Members granted before this migration are granted the table here.
MIGRATION_8 = f"""
CREATE TABLE {SCHEMA}.links (
  from_id text NOT NULL,
  to_id text NOT NULL,
  team_id text NOT NULL REFERENCES {SCHEMA}.teams(id) ON DELETE CASCADE,
  project_key text NOT NULL,
  author text NOT NULL,
  relation text NOT NULL CHECK (relation IN ('replaces', 'refines', 'conflicts')),
  made_by text NOT NULL CHECK (made_by IN ('user', 'agent', 'extraction', 'tool')),
  open boolean NOT NULL DEFAULT false,
  settled boolean NOT NULL DEFAULT false,
  at bigint NOT NULL,
  seq bigint NOT NULL,
  PRIMARY KEY (team_id, from_id, to_id, author),
  FOREIGN KEY (team_id, from_id) REFERENCES {SCHEMA}.memories (team_id, id),
  FOREIGN KEY (team_id, to_id) REFERENCES {SCHEMA}.memories (team_id, id),
  CHECK (from_id <> to_id)
);
CREATE INDEX links_changes ON {SCHEMA}.links (team_id, project_key, seq);
{_members_only("links")}

CREATE FUNCTION {SCHEMA}.guard_link() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  bound text := {SCHEMA}.role_person(NEW.team_id);
  project text;
BEGIN
  IF bound IS NOT NULL AND NEW.author IS DISTINCT FROM bound THEN
    RAISE EXCEPTION 'orcmem: this database role states links as %, not as %', bound, NEW.author
      USING ERRCODE = '42501';
  END IF;
  IF TG_OP = 'UPDATE' AND (NEW.author, NEW.from_id, NEW.to_id, NEW.team_id)
     IS DISTINCT FROM (OLD.author, OLD.from_id, OLD.to_id, OLD.team_id) THEN
    RAISE EXCEPTION 'orcmem: the link from % to % is %''s; it cannot change hands', OLD.from_id, OLD.to_id,
      OLD.author USING ERRCODE = '42501';
  END IF;
  SELECT m.project_key INTO project FROM {SCHEMA}.memories m WHERE m.team_id = NEW.team_id AND m.id = NEW.from_id;
  IF project IS NULL OR NOT EXISTS (SELECT 1 FROM {SCHEMA}.memories m WHERE m.team_id = NEW.team_id
     AND m.id = NEW.to_id AND m.project_key = project) THEN
    RAISE EXCEPTION 'orcmem: a link joins two memories of one project' USING ERRCODE = '42501';
  END IF;
  NEW.project_key := project;
  PERFORM pg_advisory_xact_lock(hashtext('orcmem.team.' || NEW.team_id));
  NEW.seq := nextval('{SCHEMA}.change_seq');
  NEW.at := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  RETURN NEW;
END $$;
CREATE TRIGGER links_guard BEFORE INSERT OR UPDATE ON {SCHEMA}.links
  FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.guard_link();

DO $grant$
DECLARE
  member record;
BEGIN
  FOR member IN SELECT role_name, bool_or(can_write) AS can_write FROM {SCHEMA}.members GROUP BY role_name
  LOOP
    EXECUTE format('GRANT SELECT ON {SCHEMA}.links TO %I', member.role_name);
    IF member.can_write THEN
      EXECUTE format('GRANT INSERT, UPDATE ON {SCHEMA}.links TO %I', member.role_name);
    END IF;
  END LOOP;
END $grant$;
"""

MIGRATIONS: tuple[tuple[int, str], ...] = tuple(
    enumerate(
        (MIGRATION_1, MIGRATION_2, MIGRATION_3, MIGRATION_4, MIGRATION_5, MIGRATION_6, MIGRATION_7, MIGRATION_8),
        start=1,
    )
)
LATEST_VERSION = MIGRATIONS[-1][0]


def server_version(conn: Any) -> int:
    """The schema version the server holds (0 when orcmem never set it up there)."""
    found = conn.execute(
        "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = %s AND tablename = 'schema_version'", (SCHEMA,)
    ).fetchone()
    if found is None:
        return 0
    row = conn.execute(f"SELECT max(version) FROM {SCHEMA}.schema_version").fetchone()
    return int(row[0] or 0)


def migrate(conn: Any) -> int:
    """Bring the server's schema up to date in one transaction; safe to run twice and from two clients at once.

    Raises:
        TeamError: the server's schema is newer than this orcmem, or this role may not create it.
    """
    import psycopg

    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            current = server_version(conn)
            if current > LATEST_VERSION:
                raise TeamError(
                    f"The team database was set up by a newer orcmem (schema {current}, this one knows "
                    f"{LATEST_VERSION}). Upgrade orcmem on this machine."
                )
            if current == LATEST_VERSION:
                return current
            if current == 0:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
                conn.execute(f"CREATE TABLE {SCHEMA}.schema_version (version integer NOT NULL)")
            for version, sql in MIGRATIONS:
                if version > current:
                    conn.execute(sql)
                    conn.execute(f"INSERT INTO {SCHEMA}.schema_version (version) VALUES (%s)", (version,))
    except psycopg.errors.InsufficientPrivilege as exc:
        raise TeamError(
            "This database role cannot set up orcmem's schema. Ask the team's admin to run "
            f"`orcmem team connect` once with an owner role (docs/team.md). ({str(exc).strip()})"
        ) from None
    return LATEST_VERSION
