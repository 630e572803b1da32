"""The team pool's PostgreSQL database as orcmem uses it: every SQL statement it runs there (docs/team.md)."""

from __future__ import annotations

import hashlib
import json
import math
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from orcmem.models.data_shapes import JsonObject, Row
from orcmem.models.errors import TeamError
from orcmem.models.types import Memory, MemoryType, Scope, Source, Status, provenance_seen_by
from orcmem.store.team import SHARED_COLUMNS, Incoming, Outgoing
from orcmem.store.team_pool.schema import SCHEMA, migrate

CONNECT_TIMEOUT_S = 5
PULL_BATCH = 500
PUSH_BATCH = 200
HNSW_EF_SEARCH = 800  # pgvector's candidate list per HNSW search: 400 gave recall@10 0.90 at 1,000,000 (bench.team)
COMMON_SHARE = 0.1  # a word more memories than this share hold is left out of word search while a rarer one remains
WORD_SCAN_CAP = 2000  # memories read per word query: the rest of a very common word's matches are not ranked
FRESH_BATCH = 200  # vectors moved into the HNSW index per transaction
FRESH_BUDGET_S = 60.0  # how long one sync spends moving them; the next sync goes on
ANY_WORD_MAX_HOLDERS = 20_000  # a word held more often joins only the every-word query (its index entry is long)
_PULL_COLUMNS = ", ".join(SHARED_COLUMNS)
# An update never sends the author (the server refuses to change it; a memory that had none took the pusher's) nor
# the times (the server's clock stamps them).
_UPDATED_COLUMNS = tuple(c for c in SHARED_COLUMNS if c not in ("author", "created_at", "updated_at"))
# When a memory was last edited by its writer's clock: what orders two offline edits of it (docs/team.md, Clocks).
_EDITED = "COALESCE(edited_at, updated_at)"


@dataclass(frozen=True, slots=True)
class Pushed:
    """What became of one pushed change: the server's revision, or the server's row to apply instead."""

    memory_id: str
    queued_at: int
    revision: int | None  # None: a tombstone, or the change did not win
    instead: Incoming | None = None  # the server's version (it won, was forgotten, or merged ours away)
    refused: str | None = None  # why the server refused it (another person's memory)


def connect(url: str, password: str | None = None) -> Any:
    """A psycopg connection (autocommit; each operation opens its own transaction).

    Raises:
        TeamError: psycopg is not installed, or the database cannot be reached or refuses the login.
    """
    try:
        import psycopg
    except ImportError:
        raise TeamError(
            "The team pool needs psycopg: pip install 'psycopg[binary]' keyring, in orcmem's environment."
        ) from None
    try:
        options: JsonObject = {"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S}
        if password:
            options["password"] = password
        return psycopg.connect(url, **options)
    except psycopg.Error as exc:
        raise TeamError(f"Cannot reach the team database: {first_line(exc)}") from None


def channel(team: str) -> str:
    """The LISTEN/NOTIFY channel a team's pushes are announced on (`team.background` listens): a hash of the team,
    so any team name fits PostgreSQL's 63 bytes."""
    return "orcmem." + hashlib.sha256(team.encode()).hexdigest()[:32]


def first_line(exc: BaseException) -> str:
    """A database error's first line, to say in one line what went wrong."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class PgVector:
    """A vector parameter, sent to PostgreSQL in pgvector's binary form (formatting 384 floats as text cost a push
    of 10,000 memories about 3 seconds)."""

    __slots__ = ("values",)

    def __init__(self, values: Sequence[float]) -> None:
        self.values = values


def use_binary_vectors(conn: Any) -> None:
    """Send PgVector parameters to this connection in binary (after the vector extension exists there)."""
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    row = conn.execute("SELECT to_regtype('vector')::oid").fetchone()
    if row is None or row[0] is None:
        return

    class VectorDumper(Dumper):
        format = Format.BINARY
        oid = int(row[0])

        def dump(self, obj: PgVector) -> bytes:
            values = obj.values
            return struct.pack(f">HH{len(values)}f", len(values), 0, *values)

    conn.adapters.register_dumper(PgVector, VectorDumper)


def _vector_param(vector: Sequence[float] | None) -> PgVector | None:
    return None if vector is None else PgVector(vector)


def _vector_text(vector: Sequence[float] | None) -> str | None:
    return None if vector is None else "[" + ",".join(repr(float(x)) for x in vector) + "]"


def _vector(text: str | None) -> list[float] | None:
    return None if text is None else [float(x) for x in text.strip("[]").split(",")]


class TeamServer:
    """One team on one PostgreSQL database."""

    def __init__(self, conn: Any, team: str) -> None:
        """Wrap an open connection for `team`."""
        self.conn = conn
        self.team = team
        self._binary_vectors = False

    def _send_vectors_in_binary(self) -> None:
        if not self._binary_vectors:
            use_binary_vectors(self.conn)  # the extension exists once the schema is set up
            self._binary_vectors = True

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    # --- setting up ----------------------------------------------------------------------------------------------
    def prepare(self, *, create_team: bool) -> bool:
        """Migrate the schema (when this role may) and make sure the team exists; whether it was created here.

        Raises:
            TeamError: the team does not exist and may not be created here, or the schema cannot be set up.
        """
        import psycopg

        migrate(self.conn)
        try:
            if self._member():
                return False
            if not create_team:
                raise TeamError(
                    f"This database role is not a member of team {self.team!r}. Ask the team's admin to add it "
                    f"(orcmem team grant <role>), or create the team with --create."
                )
            with self.conn.transaction():
                self.conn.execute(f"INSERT INTO {SCHEMA}.teams (id) VALUES (%s) ON CONFLICT DO NOTHING", (self.team,))
                self.conn.execute(
                    f"INSERT INTO {SCHEMA}.members (role_name, team_id, can_write) VALUES (current_user, %s, true) "
                    "ON CONFLICT (role_name, team_id) DO NOTHING",
                    (self.team,),
                )
            return True
        except psycopg.errors.InsufficientPrivilege:
            raise TeamError(
                f"This database role may not create team {self.team!r}; ask the team's admin to create it and add "
                "this role (docs/team.md, Roles)."
            ) from None
        except psycopg.Error as exc:
            raise TeamError(f"The team database refused: {first_line(exc)}") from None

    def _member(self) -> bool:
        row = self.conn.execute(
            f"SELECT can_write FROM {SCHEMA}.members WHERE role_name = current_user AND team_id = %s", (self.team,)
        ).fetchone()
        return row is not None

    def can_write(self) -> bool:
        """Whether this role may write the team's memories (a read-only CI role may not)."""
        row = self.conn.execute(
            f"SELECT can_write FROM {SCHEMA}.members WHERE role_name = current_user AND team_id = %s", (self.team,)
        ).fetchone()
        return bool(row and row[0])

    def grant(self, role: str, *, write: bool, person: str | None = None) -> None:
        """Let a database role use this team (read-only unless `write`; bound to one `person` when given: it then
        writes as that person only); run by the team's admin.

        Raises:
            TeamError: this role may not grant it.
        """
        import psycopg
        from psycopg import sql

        try:
            with self.conn.transaction():
                self.conn.execute(
                    f"INSERT INTO {SCHEMA}.members (role_name, team_id, can_write, person) VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (role_name, team_id) DO UPDATE SET can_write = excluded.can_write, "
                    "person = excluded.person",
                    (role, self.team, write, person),
                )
                who = sql.Identifier(role)
                self.conn.execute(sql.SQL("GRANT USAGE ON SCHEMA orcmem TO {}").format(who))
                self.conn.execute(
                    sql.SQL(
                        "GRANT SELECT ON orcmem.teams, orcmem.members, orcmem.schema_version, orcmem.lexemes TO {}"
                    ).format(who)
                )
                rights = "SELECT, INSERT, UPDATE" if write else "SELECT"
                self.conn.execute(sql.SQL(f"GRANT {rights} ON orcmem.memories, orcmem.links TO {{}}").format(who))
                if write:
                    self.conn.execute(sql.SQL("GRANT USAGE ON SEQUENCE orcmem.change_seq TO {}").format(who))
        except psycopg.Error as exc:
            raise TeamError(f"Could not grant {role!r} the team: {first_line(exc)}") from None

    def pool_holders(self, project_key: str) -> tuple[int, list[str]]:
        """How many memories the team holds under a project key (forgotten ones too), and up to three of their
        authors.

        Raises:
            TeamError: the database cannot be read.
        """
        [(count, authors)] = self.read(
            f"SELECT count(*), (SELECT array_agg(a) FROM (SELECT DISTINCT author AS a FROM {SCHEMA}.memories "
            "WHERE team_id = %s AND project_key = %s AND author IS NOT NULL ORDER BY 1 LIMIT 3) AS f) "
            f"FROM {SCHEMA}.memories WHERE team_id = %s AND project_key = %s",
            (self.team, project_key, self.team, project_key),
            failing="Reading the team",
        )
        return int(count), list(authors or [])

    # --- push ----------------------------------------------------------------------------------------------------
    def push(self, project_key: str, changes: Sequence[Outgoing], person: str) -> list[Pushed]:
        """Send changes in one transaction under the team's lock; each is applied or settled on its own.

        An update based on the server's current revision wins; one based on an older revision wins only when it
        is not older (when it was edited, by its writer's clock: `edited_at`), else the server's row comes back to
        be applied. Two memories with the same topic key merge into one (`_merge`). The server stamps the stored
        times and change numbers itself (server schema 5).
        """
        import psycopg

        results: list[Pushed] = []
        try:
            self._send_vectors_in_binary()
            with self.conn.transaction():
                self.conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"orcmem.team.{self.team}",))
                plain, careful = self._sort(changes, person)
                try:
                    with self.conn.transaction():  # a savepoint: a refusal sends the batch one by one instead
                        results += self._push_plain(project_key, plain, person)
                except (psycopg.errors.InsufficientPrivilege, psycopg.errors.UniqueViolation):
                    careful = [change for change, _row, _revision in plain] + careful
                for change in careful:
                    try:
                        with self.conn.transaction():  # a savepoint: one refused change leaves the rest
                            results.append(self._push_one(project_key, change, person))
                    except (psycopg.errors.InsufficientPrivilege, psycopg.errors.UniqueViolation) as exc:
                        # Another person's memory, or a topic key another active memory took meanwhile: the
                        # server's version comes back, and the person reads why in `orcmem team sync`.
                        results.append(
                            Pushed(
                                change.memory_id,
                                change.queued_at,
                                None,
                                self._current(change.memory_id),
                                first_line(exc),
                            )
                        )
                # Delivered when the transaction commits: listening profiles pull at once.
                self.conn.execute("SELECT pg_notify(%s, %s)", (channel(self.team), project_key))
        except psycopg.Error as exc:
            raise TeamError(f"Push to the team failed: {first_line(exc)}") from None
        return results

    def _sort(
        self, changes: Sequence[Outgoing], person: str
    ) -> tuple[list[tuple[Outgoing, JsonObject, int | None]], list[Outgoing]]:
        """Split a batch: plain changes (a new memory without a topic key, or an update on the revision the server
        holds that keeps its topic key and touches no other person's memory) go in bulk, with the revision they
        replace (None: new); the rest one by one."""
        found = self.conn.execute(
            f"SELECT id, revision, forgotten, source, author, topic_key, status FROM {SCHEMA}.memories "
            "WHERE team_id = %s AND id = ANY(%s) FOR UPDATE",
            (self.team, [change.memory_id for change in changes]),
        ).fetchall()
        current = {row[0]: row[1:] for row in found}
        plain: list[tuple[Outgoing, JsonObject, int | None]] = []
        careful: list[Outgoing] = []
        for change in changes:
            row, held = change.row, current.get(change.memory_id)
            if row is None:
                careful.append(change)
            elif held is None:
                if row["topic_key"] is None:
                    plain.append((change, row, None))
                else:
                    careful.append(change)
            else:
                revision, forgotten, source, author, topic, status = held
                mine = source != "user" or author is None or author == person
                same_topic = row["topic_key"] == topic and (row["topic_key"] is None or row["status"] == status)
                if revision == row["base_revision"] and not forgotten and mine and same_topic:
                    plain.append((change, row, revision))
                else:
                    careful.append(change)
        return plain, careful

    def _push_plain(
        self, project_key: str, plain: Sequence[tuple[Outgoing, JsonObject, int | None]], person: str
    ) -> list[Pushed]:
        """Insert the new memories and update the rest, each kind in one pipelined statement."""
        inserts = [(change, row) for change, row, revision in plain if revision is None]
        updates = [(change, row, revision) for change, row, revision in plain if revision is not None]
        if inserts:  # one statement: the word counts' trigger then runs once for the whole batch
            values = self._insert_sql().split(" VALUES ", 1)[1]
            self.conn.execute(
                self._insert_sql() + (", " + values) * (len(inserts) - 1),
                [arg for c, row in inserts for arg in self._insert_args(project_key, c.memory_id, row, person)],
            )
        if updates:
            self.conn.cursor().executemany(
                self._update_sql(),
                [(*self._update_args(project_key, row, person), self.team, c.memory_id) for c, row, _ in updates],
            )
        return [Pushed(c.memory_id, c.queued_at, 1) for c, _ in inserts] + [
            Pushed(c.memory_id, c.queued_at, revision + 1) for c, _, revision in updates
        ]

    def _push_one(self, project_key: str, change: Outgoing, person: str) -> Pushed:
        current = self.conn.execute(
            f"SELECT revision, {_EDITED}, forgotten FROM {SCHEMA}.memories WHERE team_id = %s AND id = %s FOR UPDATE",
            (self.team, change.memory_id),
        ).fetchone()
        row = change.row
        if row is None:  # forgotten here: a tombstone there
            if current is not None and not current[2]:
                self._forget(change.memory_id, person, None)
            return Pushed(change.memory_id, change.queued_at, None)
        if current is None:
            other = self._topic_holder(project_key, row, change.memory_id)
            if other is not None:
                return self._merge(project_key, change, row, other, person)
            return Pushed(change.memory_id, change.queued_at, self._insert(project_key, change.memory_id, row, person))
        revision, edited_at, forgotten = current
        if forgotten:
            return Pushed(change.memory_id, change.queued_at, None, self._current(change.memory_id))
        if revision == row["base_revision"] or (row["updated_at"], 1) > (edited_at, 0):
            return Pushed(change.memory_id, change.queued_at, self._update(project_key, change.memory_id, row, person))
        return Pushed(change.memory_id, change.queued_at, None, self._current(change.memory_id))

    def _topic_holder(self, project_key: str, row: JsonObject, memory_id: str) -> JsonObject | None:
        if row["topic_key"] is None or row["status"] != "active":
            return None
        found = self.conn.execute(
            f"SELECT id, source, author, {_EDITED}, evidence_count, confidence FROM {SCHEMA}.memories "
            "WHERE team_id = %s AND project_key = %s AND topic_key = %s AND status = 'active' AND NOT forgotten "
            "AND id != %s FOR UPDATE",
            (self.team, project_key, row["topic_key"], memory_id),
        ).fetchone()
        if found is None:
            return None
        keys = ("id", "source", "author", "updated_at", "evidence_count", "confidence")
        return dict(zip(keys, found, strict=True))

    def _merge(self, project_key: str, change: Outgoing, row: JsonObject, other: JsonObject, person: str) -> Pushed:
        """Two memories with one topic key become one: the person's over an agent's, else the smaller id; the newer
        text; their evidence added. Another person's own memory is never changed: it survives as it is."""
        locked = other["source"] == "user" and other["author"] != person
        if locked:
            ours_survives = False
        elif (row["source"] == "user") != (other["source"] == "user"):
            ours_survives = row["source"] == "user"
        else:
            ours_survives = change.memory_id < other["id"]
        ours_newer = (row["updated_at"], change.memory_id) > (other["updated_at"], other["id"])
        added = {
            "evidence_count": row["evidence_count"] + other["evidence_count"],
            "confidence": max(row["confidence"], other["confidence"]),
            "edited_at": max(row["updated_at"], other["updated_at"]),  # the newer text's, by its writer's clock
        }
        if ours_survives:
            merged = dict(row, **added)
            if not ours_newer:
                merged.update(_text(self._full(other["id"])))
            self._forget(other["id"], person, change.memory_id)  # first, so its change number comes first
            self._insert(project_key, change.memory_id, merged, person)
            # What the server now holds (the two merged) comes back, since it differs from what was sent.
            return Pushed(change.memory_id, change.queued_at, None, self._current(change.memory_id))
        if locked:  # another person's own memory holds the key: ours is kept, without the key (as locally)
            self._insert(project_key, change.memory_id, dict(row, topic_key=None), person)
            return Pushed(change.memory_id, change.queued_at, None, self._current(change.memory_id))
        survivor = dict(self._full(other["id"]), **added)
        if ours_newer:
            survivor.update(_text(row))
        self._update(project_key, other["id"], survivor, person)
        gone = Incoming(0, change.memory_id, 0, True, {}, [], None, None)  # ours was never stored there
        return Pushed(change.memory_id, change.queued_at, None, gone)

    def _full(self, memory_id: str) -> JsonObject:
        found = self._current(memory_id)
        assert found is not None
        return dict(found.fields, files=found.files, model_id=found.model_id, embedding=found.embedding)

    def _insert(self, project_key: str, memory_id: str, row: JsonObject, person: str) -> int:
        self.conn.execute(self._insert_sql(), self._insert_args(project_key, memory_id, row, person))
        return 1

    def _insert_sql(self) -> str:
        columns = ", ".join(SHARED_COLUMNS)
        marks = ", ".join(["%s"] * len(SHARED_COLUMNS))
        return (
            f"INSERT INTO {SCHEMA}.memories (team_id, project_key, id, {columns}, files, model_id, fresh_embedding, "
            f"edited_at, revision, seq, changed_by) VALUES (%s, %s, %s, {marks}, %s, %s, %s::vector, %s, 1, "
            f"nextval('{SCHEMA}.change_seq'), %s)"
        )

    def _insert_args(self, project_key: str, memory_id: str, row: JsonObject, person: str) -> Row:
        return (
            self.team,
            project_key,
            memory_id,
            *[row[column] for column in SHARED_COLUMNS],
            *_stored_after_columns(row, person),
        )

    def _update(self, project_key: str, memory_id: str, row: JsonObject, person: str) -> int:
        found = self.conn.execute(
            self._update_sql() + " RETURNING revision",
            (*self._update_args(project_key, row, person), self.team, memory_id),
        ).fetchone()
        return int(found[0])

    def _update_sql(self) -> str:
        # A profile marks another person's words `teammate`; the server keeps what their writer's profile said.
        assignments = ", ".join(
            "provenance = COALESCE(NULLIF(%s, 'teammate'), provenance)" if column == "provenance" else f"{column} = %s"
            for column in _UPDATED_COLUMNS
        )
        return (
            f"UPDATE {SCHEMA}.memories SET project_key = %s, {assignments}, files = %s, model_id = %s, "
            "embedding = NULL, fresh_embedding = %s::vector, edited_at = %s, "
            f"revision = revision + 1, seq = nextval('{SCHEMA}.change_seq'), changed_by = %s, changed_at = now() "
            "WHERE team_id = %s AND id = %s"
        )

    def _update_args(self, project_key: str, row: JsonObject, person: str) -> Row:
        """The update's values; the project's key too (a re-shared project moves its memories to its new key)."""
        return (
            project_key,
            *[row[column] for column in _UPDATED_COLUMNS],
            *_stored_after_columns(row, person),
        )

    def _forget(self, memory_id: str, person: str, merged_into: str | None) -> None:
        self.conn.execute(
            f"UPDATE {SCHEMA}.memories SET forgotten = true, merged_into = %s, revision = revision + 1, "
            f"seq = nextval('{SCHEMA}.change_seq'), changed_by = %s, changed_at = now() "
            "WHERE team_id = %s AND id = %s",
            (merged_into, person, self.team, memory_id),
        )

    # --- pull ----------------------------------------------------------------------------------------------------
    def pull(self, project_key: str, after: int, limit: int = PULL_BATCH) -> list[Incoming]:
        """The project's changes after the change sequence number `after`, in order.

        Raises:
            TeamError: the database cannot be read.
        """
        rows = self.read(
            f"SELECT seq, id, revision, forgotten, {_PULL_COLUMNS}, files, model_id, "
            "COALESCE(embedding, fresh_embedding)::text "
            f"FROM {SCHEMA}.memories WHERE team_id = %s AND project_key = %s AND seq > %s ORDER BY seq LIMIT %s",
            (self.team, project_key, after, limit),
            failing="Pull from the team",
        )
        return [_incoming(row) for row in rows]

    # --- search --------------------------------------------------------------------------------------------------
    def search_words(
        self, project_key: str, project_id: str, terms: Sequence[str], limit: int
    ) -> list[tuple[Memory, float]]:
        """Active memories of the project holding the query's words (English-stemmed), best first, with a relevance
        (higher is better): the rarity (BM25's idf) of each word held, plus `ts_rank` (title twice the body).

        Words more than COMMON_SHARE of the project's memories hold are left out while a rarer one remains. Those
        holding every remaining word come first; only when they are fewer than `limit` are those holding any of them
        read too, at most WORD_SCAN_CAP of each, so the cost stays flat however large the pool grows.
        """
        if not terms:
            return []
        weights = self._rarity(project_key, " ".join(terms))
        if not weights:
            return []
        every = self._words_query(project_key, weights, " && ", limit, ())
        found = {memory_id: row for memory_id, row in ((row[0], row) for row in every)}
        # Any of the words: only those few enough memories hold, since the index reads every holder of each.
        narrow = {lexeme: held for lexeme, held in weights.items() if held[1] <= ANY_WORD_MAX_HOLDERS}
        if len(found) < limit and len(weights) > 1 and narrow:
            for row in self._words_query(project_key, narrow, " || ", limit, tuple(found)):
                found.setdefault(row[0], row)
        ranked = sorted(found.values(), key=lambda row: (-float(row[-1]), -int(row[11])))[:limit]
        return [(_memory(row, project_id), float(row[-1])) for row in ranked]

    def _rarity(self, project_key: str, text: str) -> dict[str, tuple[float, int]]:
        """The query's lexemes to search with, each with its idf among the project's memories and how many hold it."""
        # A scalar subquery per lexeme: one key lookup each, whatever the planner believes of the table's size.
        rows = self.read(
            f"SELECT q.lexeme, (SELECT memories FROM {SCHEMA}.lexemes WHERE team_id = %s AND project_key = %s "
            "AND lexeme = q.lexeme) "
            "FROM unnest(tsvector_to_array(to_tsvector('english', %s)) || ARRAY['']) AS q(lexeme)",
            (self.team, project_key, text),
        )
        counts = {str(lexeme): int(memories or 0) for lexeme, memories in rows}
        total = max(1, counts.pop("", 0))
        held = {lexeme: count for lexeme, count in counts.items() if count > 0}
        rare = {lexeme: count for lexeme, count in held.items() if count <= COMMON_SHARE * total}
        chosen = rare or held
        return {
            lexeme: (math.log(1 + (total - count + 0.5) / (count + 0.5)), count) for lexeme, count in chosen.items()
        }

    def _words_query(
        self, project_key: str, weights: dict[str, tuple[float, int]], joiner: str, limit: int, skip: tuple[str, ...]
    ) -> list[Row]:
        lexemes = list(weights)
        words = ", ".join(f"plainto_tsquery('simple', %s) AS w{n}" for n in range(len(lexemes)))
        match = joiner.join(f"w{n}" for n in range(len(lexemes)))
        held = " + ".join(f"(CASE WHEN tsv @@ w{n} THEN %s ELSE 0 END)" for n in range(len(lexemes)))
        anyone = " || ".join(f"w{n}" for n in range(len(lexemes)))
        # The queries are made once (a one-row CTE), not once per row read.
        return self.read(
            f"WITH q AS MATERIALIZED (SELECT {words}) "
            f"SELECT {_MEMORY_COLUMNS}, {held} + ts_rank('{{0, 0, 0.5, 1}}', tsv, {anyone}) AS relevance "
            f"FROM (SELECT m.*, q.* FROM {SCHEMA}.memories m, q WHERE m.team_id = %s AND m.project_key = %s "
            f"AND m.status = 'active' AND NOT m.forgotten AND NOT (m.id = ANY(%s)) AND m.tsv @@ ({match}) LIMIT %s) "
            "AS found ORDER BY relevance DESC, updated_at DESC LIMIT %s",
            (
                *lexemes,
                *[weights[lexeme][0] for lexeme in lexemes],
                self.team,
                project_key,
                list(skip),
                WORD_SCAN_CAP,
                limit,
            ),
        )

    def search_meaning(
        self, project_key: str, project_id: str, vector: Sequence[float], model_id: str, limit: int
    ) -> list[tuple[Memory, float]]:
        """The project's active memories nearest to `vector` (cosine), closest first, with their similarity: those
        in the HNSW index, and those whose vector was pushed but not yet moved into it (scanned exactly)."""
        text = _vector_text(vector)
        found = self.read(
            f"SELECT {_MEMORY_COLUMNS}, 1 - (embedding <=> %s::vector) AS similarity FROM {SCHEMA}.memories "
            "WHERE team_id = %s AND project_key = %s AND model_id = %s AND status = 'active' AND NOT forgotten "
            "ORDER BY embedding <=> %s::vector LIMIT %s",
            (text, self.team, project_key, model_id, text, limit),
            ef_search=max(HNSW_EF_SEARCH, limit),
        )
        # The few vectors not yet in the index, found through the partial index on them (never a full scan).
        found += self.read(
            f"SELECT {_MEMORY_COLUMNS}, 1 - (fresh_embedding <=> %s::vector) AS similarity FROM {SCHEMA}.memories "
            "WHERE team_id = %s AND project_key = %s AND fresh_embedding IS NOT NULL AND model_id = %s "
            "AND status = 'active' AND NOT forgotten ORDER BY fresh_embedding <=> %s::vector LIMIT %s",
            (text, self.team, project_key, model_id, text, limit),
            no_seqscan=True,
        )
        found = [row for row in found if row[-1] is not None]  # a small table's plain scan also returns vectorless rows
        found.sort(key=lambda row: -float(row[-1]))
        return [(_memory(row, project_id), float(row[-1])) for row in found[:limit]]

    def move_fresh_vectors(self, batch: int = FRESH_BATCH, budget_s: float = FRESH_BUDGET_S) -> int:
        """Move pushed vectors into the HNSW index, a batch per transaction, for up to `budget_s` seconds; how many
        moved. Not a change: no revision, no change number, nothing for other profiles to pull."""
        import psycopg

        moved, deadline = 0, time.monotonic() + budget_s
        try:
            while time.monotonic() < deadline:
                with self.conn.transaction():
                    done = self.conn.execute(
                        f"UPDATE {SCHEMA}.memories SET embedding = fresh_embedding, fresh_embedding = NULL "
                        f"WHERE team_id = %s AND id IN (SELECT id FROM {SCHEMA}.memories WHERE team_id = %s "
                        "AND fresh_embedding IS NOT NULL LIMIT %s FOR UPDATE SKIP LOCKED)",
                        (self.team, self.team, batch),
                    ).rowcount
                moved += max(done, 0)
                if done < batch:
                    break
        except psycopg.Error as exc:
            raise TeamError(f"Indexing the team's new vectors failed: {first_line(exc)}") from None
        return moved

    def read(
        self,
        query: str,
        args: Sequence[object],
        *,
        ef_search: int | None = None,
        no_seqscan: bool = False,
        failing: str = "Search on the team",
    ) -> list[Row]:
        """A read in a transaction of its own (with the HNSW search's settings when given); a database error is a
        TeamError that says what `failing` did.

        Raises:
            TeamError: the database cannot be read.
        """
        import psycopg

        try:
            with self.conn.transaction():
                if ef_search is not None:
                    self.conn.execute(f"SET LOCAL hnsw.ef_search = {int(ef_search)}")
                if no_seqscan:
                    self.conn.execute("SET LOCAL enable_seqscan = off")
                return list(self.conn.execute(query, args).fetchall())
        except psycopg.Error as exc:
            raise TeamError(f"{failing} failed: {first_line(exc)}") from None

    def _current(self, memory_id: str) -> Incoming | None:
        row = self.conn.execute(
            f"SELECT seq, id, revision, forgotten, {_PULL_COLUMNS}, files, model_id, "
            "COALESCE(embedding, fresh_embedding)::text "
            f"FROM {SCHEMA}.memories WHERE team_id = %s AND id = %s",
            (self.team, memory_id),
        ).fetchone()
        return None if row is None else _incoming(row)


_TEXT = ("type", "title", "body", "updated_at", "files", "model_id", "embedding", "provenance")
_MEMORY_COLUMNS = (
    "id, type, topic_key, title, body, confidence, status, source, evidence_count, files, created_at, updated_at, "
    "last_confirmed_at, flagged, author, author_agent, provenance"
)


def _memory(row: Row, project_id: str) -> Memory:
    """A search row as a Memory of the local project `project_id`."""
    return Memory(
        id=row[0],
        scope=Scope.PROJECT,
        project_id=project_id,
        type=MemoryType(row[1]),
        topic_key=row[2],
        title=row[3],
        body=row[4],
        confidence=float(row[5]),
        status=Status(row[6]),
        source=Source(row[7]),
        source_run_id=None,
        source_task_id=None,
        evidence_count=int(row[8]),
        files=tuple(row[9] or ()),
        created_at=int(row[10]),
        updated_at=int(row[11]),
        last_confirmed_at=int(row[12]),
        flagged=bool(row[13]),
        author=row[14],
        author_agent=row[15],
        provenance=provenance_seen_by(row[16], row[7], None, None),  # the writer's; `search_team` says a teammate's
    )


def _stored_after_columns(row: JsonObject, person: str) -> Row:
    """What an insert and an update both store after the shared columns: files, model, vector, when and who."""
    return (json.dumps(row["files"]), row["model_id"], _vector_param(row["embedding"]), _edited(row), person)


def _edited(row: JsonObject) -> int:
    """When the pushed version was written, by its writer's clock (a merge keeps the newer of two)."""
    updated_at: int = row["updated_at"]
    return int(row.get("edited_at", updated_at))


def _text(row: JsonObject) -> JsonObject:
    """A memory's text and what goes with it (its vector was made from that text)."""
    return {key: row[key] for key in _TEXT}


def _incoming(row: Row) -> Incoming:
    seq, memory_id, revision, forgotten = row[:4]
    width = len(SHARED_COLUMNS)
    fields = {} if forgotten else dict(zip(SHARED_COLUMNS, row[4 : 4 + width], strict=True))
    files, model_id, embedding = row[4 + width :]
    return Incoming(
        int(seq),
        memory_id,
        int(revision),
        bool(forgotten),
        fields,
        list(files or []),
        model_id,
        None if forgotten else _vector(embedding),
    )
