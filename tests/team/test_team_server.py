"""The team database itself: its schema and migrations, teams kept apart by row-level security, roles."""

from __future__ import annotations

import threading
from urllib.parse import urlsplit

import psycopg
import pytest

from orcmem.errors import TeamError
from orcmem.store.team_schema import LATEST_VERSION, migrate, server_version
from orcmem.store.team_server import TeamServer, connect
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
        assert conn.execute("SELECT count(*) FROM orcmem.schema_version").fetchone()[0] == LATEST_VERSION


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
