"""The team database itself: its schema and migrations, teams kept apart by row-level security, roles."""

from __future__ import annotations

import threading
from urllib.parse import urlsplit

import psycopg
import pytest

from orcmem.models.errors import TeamError
from orcmem.store.team_pool.schema import LATEST_VERSION, MIGRATIONS, migrate, server_version
from orcmem.store.team_pool.server import TeamServer, connect
from orcmem.team.sync import sync_now
from tests.helpers import user_memory
from tests.team.conftest import MakeMachine, Postgres


def test_two_clients_migrating_at_once_set_the_schema_up_once(team_url: str) -> None:
    versions: list[int] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with connect(team_url) as conn:
                versions.append(migrate(conn))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and versions == [LATEST_VERSION] * 4
    with connect(team_url) as conn:
        assert server_version(conn) == LATEST_VERSION
        assert conn.execute("SELECT count(*) FROM orcmem.schema_version").fetchone()[0] == len(MIGRATIONS)  # each once


def test_a_newer_schema_is_refused_with_the_fix(team_url: str) -> None:
    with connect(team_url) as conn:
        migrate(conn)
        conn.execute("INSERT INTO orcmem.schema_version (version) VALUES (%s)", (LATEST_VERSION + 1,))
        with pytest.raises(TeamError, match="newer orcmem"):
            migrate(conn)


def _role(admin_url: str, name: str) -> None:
    with connect(admin_url) as conn:
        conn.execute(f"DROP ROLE IF EXISTS {name}")
        conn.execute(f"CREATE ROLE {name} LOGIN")


def test_a_member_of_one_team_can_neither_read_nor_write_anothers(
    machines: MakeMachine, team_url: str, postgres: Postgres
) -> None:
    database = urlsplit(team_url).path.lstrip("/")
    alice = machines("alice@acme.dev")  # team acme, as the server's owner
    alice.svc.record(alice.project, user_memory("Acme's deploy", "acme ships on Tuesdays"))
    sync_now(alice.svc)
    for role in ("eve_other", "ci_acme"):
        _role(team_url, role)
    owner = TeamServer(connect(team_url), "other")
    owner.prepare(create_team=True)
    owner.grant("eve_other", write=True)
    owner.close()
    acme = TeamServer(connect(team_url), "acme")
    acme.grant("ci_acme", write=False)
    acme.close()

    eve = TeamServer(connect(postgres.url(database, "eve_other")), "acme")
    assert eve.pull("github.com/acme/app", 0) == []  # acme's rows are invisible to her
    assert eve.conn.execute("SELECT count(*) FROM orcmem.memories").fetchone()[0] == 0
    with pytest.raises(psycopg.errors.InsufficientPrivilege):  # row-level security refuses acme's team id
        eve.conn.execute(
            "INSERT INTO orcmem.memories (team_id, project_key, id, type, title, body, confidence, status, source, "
            "evidence_count, created_at, updated_at, last_confirmed_at, seq) VALUES ('acme', 'k', 'x', 'fact', "
            "'t', 'b', 0.5, 'active', 'user', 1, 0, 0, 0, nextval('orcmem.change_seq'))"
        )
    updated = eve.conn.execute("UPDATE orcmem.memories SET body = 'pwned' WHERE team_id = 'acme'")
    assert updated.rowcount == 0
    with pytest.raises(TeamError, match="not a member"):
        eve.prepare(create_team=False)
    eve.close()

    ci = TeamServer(connect(postgres.url(database, "ci_acme")), "acme")
    assert [change.fields["title"] for change in ci.pull("github.com/acme/app", 0)] == ["Acme's deploy"]
    assert not ci.can_write()
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        ci.conn.execute("UPDATE orcmem.memories SET body = 'x'")
    ci.close()


def test_a_role_without_rights_gets_one_line_with_the_fix(team_url: str, postgres: Postgres) -> None:
    database = urlsplit(team_url).path.lstrip("/")
    _role(team_url, "newcomer")
    with connect(team_url) as conn:
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        conn.execute(f"REVOKE CREATE ON DATABASE {database} FROM PUBLIC")
    server = TeamServer(connect(postgres.url(database, "newcomer")), "acme")
    with pytest.raises(TeamError, match="cannot set up orcmem's schema"):
        server.prepare(create_team=True)
    server.close()


def test_an_unreachable_server_is_one_line(tmp_path) -> None:
    with pytest.raises(TeamError, match="Cannot reach the team database"):
        connect(f"postgresql://nobody@/nothing?host={tmp_path}")


def _true_counts(conn) -> dict[tuple[str, str], int]:
    rows = conn.execute(
        "SELECT project_key, w, count(*) FROM orcmem.memories, unnest(tsvector_to_array(tsv) || ARRAY['']) AS w "
        "GROUP BY 1, 2"
    ).fetchall()
    return {(key, word): n for key, word, n in rows}


def _kept_counts(conn) -> dict[tuple[str, str], int]:
    rows = conn.execute("SELECT project_key, lexeme, memories FROM orcmem.lexemes WHERE memories != 0").fetchall()
    return {(key, word): n for key, word, n in rows}


def test_word_counts_follow_every_change_and_an_older_schema_is_brought_up(
    machines: MakeMachine, team_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import orcmem.store.team_pool.schema as schema

    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])  # an orcmem from before the word counts
    monkeypatch.setattr(schema, "LATEST_VERSION", 1)
    with connect(team_url) as conn:
        migrate(conn)
        conn.execute("INSERT INTO orcmem.teams (id) VALUES ('acme')")
        for i in range(5):
            conn.execute(
                "INSERT INTO orcmem.memories (team_id, project_key, id, type, title, body, confidence, status, "
                "source, evidence_count, created_at, updated_at, last_confirmed_at, author, seq) VALUES ('acme', "
                "'github.com/acme/app', %s, 'lesson', %s, %s, 0.6, 'active', 'user', 1, 0, 0, 0, 'alice@acme.dev', "
                "nextval('orcmem.change_seq'))",
                (f"mem_{i:032x}", f"Kafka lag {i}", f"consumer group {i} falls behind"),
            )
    monkeypatch.undo()
    alice = machines("alice@acme.dev")  # connecting brings the schema up
    with connect(team_url) as conn:
        assert server_version(conn) == LATEST_VERSION
        assert _kept_counts(conn) == _true_counts(conn)  # filled from the rows already there
    sync_now(alice.svc)
    assert len(alice.svc.list(alice.project)) == 5
    first = alice.svc.list(alice.project)[0]
    alice.svc.edit(alice.project, first.id, body="the broker drops partitions")
    alice.svc.forget(alice.project, alice.svc.list(alice.project)[1].id)
    alice.svc.record(alice.project, user_memory("Redis eviction", "allkeys-lru on the cache"))
    sync_now(alice.svc)
    with connect(team_url) as conn:
        assert _kept_counts(conn) == _true_counts(conn)


def test_a_rare_word_outranks_words_every_memory_holds(machines: MakeMachine) -> None:
    from orcmem.team.search import search_team

    alice = machines("alice@acme.dev")
    for i in range(40):
        alice.svc.record(alice.project, user_memory(f"Tests fail {i}", f"the tests fail when step {i} times out"))
    rare = alice.svc.record(alice.project, user_memory("Zookeeper quorum", "tests fail without a zookeeper quorum"))
    sync_now(alice.svc)
    hits = search_team(alice.svc, alice.project, "tests fail zookeeper", 5)
    assert hits[0].memory.id == rare.memory.id


def test_tls_settings_in_the_url_reach_libpq(team_url: str) -> None:
    """The URL's TLS settings are libpq's to apply (the test server listens on a Unix socket, where libpq does not use
    TLS): a valid one connects, a wrong one is refused by libpq itself, in one line."""
    assert connect(team_url + "&sslmode=prefer").execute("SELECT 1").fetchone() == (1,)
    with pytest.raises(TeamError, match="sslmode"):
        connect(team_url + "&sslmode=bogus")


def test_pushed_vectors_are_searchable_before_and_after_they_join_the_index(
    machines: MakeMachine, team_url: str
) -> None:
    from orcmem.team.sync import open_team, sync
    from tests.fakes import SynonymEmbedder

    alice = machines("alice@acme.dev")
    embedder = SynonymEmbedder()
    alice.svc.use_embedder(embedder)
    alice.svc.settings.set_embedding_model(embedder.model_id)
    car = alice.svc.record(alice.project, user_memory("Car keeps stalling", "the engine stalls when cold")).memory
    assert alice.svc.pump is not None and alice.svc.pump.wait(10)
    server = open_team(alice.svc)
    try:
        sync(alice.svc, server)  # the push alone: the vector waits outside the index
        vector = embedder.embed_query("automobile")
        fresh = server.search_meaning("github.com/acme/app", "p", vector, embedder.model_id, 5)
        assert [m.id for m, _ in fresh] == [car.id]
        assert server.move_fresh_vectors() == 1
        assert [m.id for m, _ in server.search_meaning("github.com/acme/app", "p", vector, embedder.model_id, 5)] == [
            car.id
        ]
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="must raise its revision"):
            server.conn.execute("UPDATE orcmem.memories SET body = 'quietly changed' WHERE id = %s", (car.id,))
    finally:
        server.close()


def test_a_role_bound_to_a_person_cannot_write_as_another(
    machines: MakeMachine, team_url: str, postgres: Postgres
) -> None:
    database = urlsplit(team_url).path.lstrip("/")
    alice = machines("alice@acme.dev")  # the owner: creates the team
    hers = alice.svc.record(alice.project, user_memory("Release day", "Tuesdays")).memory
    sync_now(alice.svc)
    _role(team_url, "mallory_role")
    admin = TeamServer(connect(team_url), "acme")
    admin.grant("mallory_role", write=True, person="mallory@acme.dev")
    admin.close()
    mallory = machines("alice@acme.dev", create=False, url=postgres.url(database, "mallory_role"), folder="m")
    sync_now(mallory.svc)
    # She claims to be alice: her profile lets her edit alice's memory, the database does not.
    mallory.svc.edit(mallory.project, hers.id, body="Fridays")
    mallory.svc.record(mallory.project, user_memory("Forged", "written as alice"))
    report = sync_now(mallory.svc)
    assert report is not None and len(report.refused) == 2
    assert all("writes as mallory@acme.dev" in line for line in report.refused)
    with connect(team_url) as conn:
        bodies = {row[0] for row in conn.execute("SELECT body FROM orcmem.memories").fetchall()}
    assert bodies == {"Tuesdays"}


def test_members_granted_before_the_links_table_may_use_it_once_the_schema_is_brought_up(
    team_url: str, postgres: Postgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    import orcmem.store.team_pool.schema as schema

    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:7])  # an orcmem from before the links
    monkeypatch.setattr(schema, "LATEST_VERSION", 7)
    database = urlsplit(team_url).path.lstrip("/")
    writer, reader = f"writer_{database}", f"reader_{database}"
    _role(team_url, writer)
    _role(team_url, reader)
    with connect(team_url) as conn:
        migrate(conn)
        conn.execute("INSERT INTO orcmem.teams (id) VALUES ('acme')")
        for role, write in ((writer, True), (reader, False)):
            conn.execute(
                "INSERT INTO orcmem.members (role_name, team_id, can_write) VALUES (%s, 'acme', %s)", (role, write)
            )
    monkeypatch.undo()
    with connect(team_url) as conn:
        assert migrate(conn) == LATEST_VERSION
        rights = conn.execute(
            "SELECT has_table_privilege(%s, 'orcmem.links', 'INSERT'), has_table_privilege(%s, 'orcmem.links', "
            "'SELECT'), has_table_privilege(%s, 'orcmem.links', 'INSERT'), has_table_privilege(%s, 'orcmem.links', "
            "'DELETE')",
            (writer, reader, reader, writer),
        ).fetchone()
    assert rights == (True, True, False, False)
