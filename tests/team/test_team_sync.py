"""Profiles sharing a project through a real PostgreSQL with pgvector: every change reaches every profile once."""

from __future__ import annotations

import threading

import pytest

from orcmem.models.errors import OwnershipError
from orcmem.models.types import MemoryFilter, NewMemory, Source
from orcmem.store.team_pool.server import connect
from orcmem.team.sync import sync_now
from tests.helpers import user_memory
from tests.team.conftest import Machine, MakeMachine


def sync(*machines: Machine) -> None:
    for machine in machines:
        report = sync_now(machine.svc)
        assert report is not None


def settle(*machines: Machine) -> None:
    """Sync every machine twice over: what one sent in the first pass reaches the others in the second."""
    sync(*machines)
    sync(*machines)


def held(machine: Machine) -> dict[str, tuple]:
    """What a profile holds of the shared project: id -> the fields every profile must agree on."""
    memories = machine.svc.list(machine.project, MemoryFilter(statuses=("active", "stale", "retracted"), limit=500))
    return {
        m.id: (m.type, m.topic_key, m.title, m.body, m.status, m.source, m.author, m.author_agent, m.evidence_count)
        for m in memories
    }


def server_rows(url: str) -> list[tuple]:
    with connect(url) as conn:
        return conn.execute("SELECT id, title, body, forgotten FROM orcmem.memories ORDER BY id").fetchall()


def agent_memory(title: str, body: str, topic: str | None = None) -> NewMemory:
    return NewMemory(type="decision", title=title, body=body, source=Source.AGENT, topic_key=topic)


def test_a_memory_written_on_one_machine_reaches_the_other_two(machines: MakeMachine) -> None:
    alice, bob, carol = machines("alice@acme.dev"), machines("bob@acme.dev"), machines("carol@acme.dev")
    written = alice.svc.record(alice.project, user_memory("Run tests with -p no:cacheprovider", "the cache races"))
    settle(alice, bob, carol)
    for machine in (bob, carol):
        got = machine.svc.get(machine.project, written.memory.id)
        assert (got.title, got.author, got.source) == (written.memory.title, "alice@acme.dev", Source.USER)
    assert held(alice) == held(bob) == held(carol)
    assert alice.svc.team.pending() == bob.svc.team.pending() == 0


def test_edits_status_and_forgetting_travel_and_forgotten_text_leaves_the_server(
    machines: MakeMachine, team_url: str
) -> None:
    alice, bob = machines("alice@acme.dev"), machines("bob@acme.dev")
    kept = alice.svc.record(alice.project, user_memory("Deploy with make ship", "not the old script")).memory
    secret = alice.svc.record(alice.project, user_memory("Staging host", "staging-7.internal:8443")).memory
    settle(alice, bob)
    alice.svc.edit(alice.project, kept.id, body="make ship, then make verify")
    alice.svc.feedback(alice.project, kept.id, "stale")
    alice.svc.forget(alice.project, secret.id)
    settle(alice, bob)
    got = bob.svc.get(bob.project, kept.id)
    assert (got.body, str(got.status)) == ("make ship, then make verify", "stale")
    assert secret.id not in held(bob)
    rows = {row[0]: row for row in server_rows(team_url)}
    assert rows[secret.id][1:] == ("", "", True)
    with connect(team_url) as conn:  # no column of any orcmem table holds the forgotten words
        dump = conn.execute("SELECT string_agg(m::text, ' ') FROM orcmem.memories m").fetchone()[0]
    assert "staging-7" not in dump


def test_only_the_author_changes_a_persons_memory_across_the_team(machines: MakeMachine, team_url: str) -> None:
    alice, bob = machines("alice@acme.dev"), machines("bob@acme.dev")
    mine = alice.svc.record(alice.project, user_memory("Use uv, not pip", "uv sync is the one install")).memory
    settle(alice, bob)
    with pytest.raises(OwnershipError, match="alice@acme.dev"):
        bob.svc.edit(bob.project, mine.id, body="pip is fine")
    with pytest.raises(OwnershipError):
        bob.svc.forget(bob.project, mine.id)
    # A profile that goes around its own check is stopped by the server, and gets the author's version back.
    bob.svc.store.memories.update_fields(mine.id, {"body": "pip is fine", "updated_at": bob.clock() + 10})
    report = sync_now(bob.svc)
    assert report is not None and len(report.refused) == 1 and "alice@acme.dev" in report.refused[0]
    assert bob.svc.get(bob.project, mine.id).body == "uv sync is the one install"
    assert {row[2] for row in server_rows(team_url)} == {"uv sync is the one install"}


def test_one_topic_key_written_offline_on_two_machines_becomes_one_memory(machines: MakeMachine) -> None:
    alice, bob = machines("alice@acme.dev"), machines("bob@acme.dev")
    first = alice.svc.record(alice.project, agent_memory("Queue: Redis", "jobs go through Redis", "queue")).memory
    bob.clock.advance_days(1)
    second = bob.svc.record(bob.project, agent_memory("Queue: Postgres", "jobs moved to Postgres", "queue")).memory
    settle(alice, bob)
    survivor = min(first.id, second.id)
    for machine in (alice, bob):
        active = [m for m in held(machine).items() if m[1][1] == "queue" and str(m[1][4]) == "active"]
        assert [memory_id for memory_id, _ in active] == [survivor]
        assert active[0][1][3] == "jobs moved to Postgres"  # the newer text
        assert active[0][1][8] == 2  # both said it
    assert held(alice) == held(bob)


def test_the_same_convergence_whichever_machine_syncs_first(machines: MakeMachine) -> None:
    alice, bob = machines("alice@acme.dev"), machines("bob@acme.dev")
    bob.clock.advance_days(1)
    pairs = {}
    for n in range(8):  # random ids: over eight keys both id orders almost surely occur
        b = bob.svc.record(bob.project, agent_memory("CI runner", f"use the arm64 runner {n}", f"ci.{n}")).memory
        a = alice.svc.record(alice.project, agent_memory("CI runner", f"use the x86 runner {n}", f"ci.{n}")).memory
        pairs[f"ci.{n}"] = (a.id, b.id)
    settle(bob, alice)
    for topic, (a_id, b_id) in pairs.items():
        kept = {memory_id: fields for memory_id, fields in held(alice).items() if fields[1] == topic}
        assert list(kept) == [min(a_id, b_id)]
        assert kept[min(a_id, b_id)][3].startswith("use the arm64 runner")  # bob's, a day newer
    assert held(alice) == held(bob)


def test_a_person_memory_wins_its_topic_key_over_an_agents(machines: MakeMachine) -> None:
    alice, bob = machines("alice@acme.dev"), machines("bob@acme.dev")
    bob.svc.record(bob.project, agent_memory("Lint", "ruff only", "lint"))
    mine = alice.svc.record(alice.project, user_memory("Lint", "ruff and mypy --strict", topic_key="lint")).memory
    settle(alice, bob)
    active = {k: v for k, v in held(bob).items() if v[1] == "lint" and str(v[4]) == "active"}
    assert list(active) == [mine.id] and active[mine.id][3] == "ruff and mypy --strict"
    assert held(alice) == held(bob)


def test_repeated_syncs_change_nothing_and_duplicate_nothing(machines: MakeMachine, team_url: str) -> None:
    alice, bob = machines("alice@acme.dev"), machines("bob@acme.dev")
    for i in range(30):
        alice.svc.record(alice.project, user_memory(f"Note {i}", f"body {i}"))
    settle(alice, bob)
    before = server_rows(team_url)
    settle(alice, bob)
    assert server_rows(team_url) == before and len(before) == 30
    assert len(held(bob)) == 30


def test_concurrent_writers_on_every_machine_end_with_the_same_memories(machines: MakeMachine, team_url: str) -> None:
    trio = [machines(f"{name}@acme.dev") for name in ("alice", "bob", "carol")]
    errors: list[BaseException] = []

    def write(machine: Machine, name: str) -> None:
        try:
            for i in range(40):
                machine.svc.record(machine.project, user_memory(f"{name} note {i}", f"{name} wrote {i}"))
                if i % 10 == 9:
                    sync_now(machine.svc)
        except BaseException as exc:  # reported below, with the thread's own traceback lost
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(m, m.svc.settings.person())) for m in trio]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    settle(*trio)
    assert len(held(trio[0])) == 120
    assert held(trio[0]) == held(trio[1]) == held(trio[2])
    assert len(server_rows(team_url)) == 120


def test_skewed_clocks_still_converge(machines: MakeMachine) -> None:
    alice = machines("alice@acme.dev")
    bob = machines("bob@acme.dev", skew_ms=-3_600_000)  # an hour slow
    shared = alice.svc.record(alice.project, agent_memory("Port", "the API listens on 8080", "api.port")).memory
    settle(alice, bob)
    alice.clock.advance_days(0.001)
    alice.svc.edit(alice.project, shared.id, body="the API listens on 9090", actor=Source.AGENT)
    bob.svc.edit(bob.project, shared.id, body="the API listens on 7070", actor=Source.AGENT)
    settle(bob, alice)
    assert held(alice) == held(bob)
    assert alice.svc.get(alice.project, shared.id).body == "the API listens on 9090"  # the later edit, by its clock


def test_a_profile_that_never_connects_queues_nothing(orcmem_home, project_dir) -> None:
    from orcmem.host.workspace import locate
    from orcmem.service.memory_service import MemoryService

    svc = MemoryService.open(orcmem_home)
    svc.settings.set_enabled(True)
    project = svc.project(locate(project_dir))
    svc.record(project, user_memory())
    assert svc.team.pending() == 0 and svc.team.link() is None and svc.team.shared() == []
    svc.close()


def test_another_persons_topic_key_keeps_my_memory_without_the_key(machines: MakeMachine) -> None:
    alice, bob = machines("alice@acme.dev"), machines("bob@acme.dev")
    hers = alice.svc.record(alice.project, user_memory("Deploys", "alice: on Tuesdays", topic_key="deploy")).memory
    mine = bob.svc.record(bob.project, user_memory("Deploys", "bob: after the freeze", topic_key="deploy")).memory
    settle(alice, bob)
    for machine in (alice, bob):
        kept = held(machine)
        assert kept[hers.id][1] == "deploy" and kept[mine.id][1] is None  # both kept; the key stays hers
        assert kept[mine.id][3] == "bob: after the freeze"
    assert held(alice) == held(bob)


def test_a_read_only_profile_receives_everything_and_queues_nothing(
    machines: MakeMachine, team_url: str, postgres
) -> None:
    from urllib.parse import urlsplit

    from orcmem.store.team_pool.server import TeamServer

    alice = machines("alice@acme.dev")
    with connect(team_url) as conn:
        conn.execute("DROP ROLE IF EXISTS ci_reader")
        conn.execute("CREATE ROLE ci_reader LOGIN")
    admin = TeamServer(connect(team_url), "acme")
    admin.grant("ci_reader", write=False)
    admin.close()
    reader_url = postgres.url(urlsplit(team_url).path.lstrip("/"), "ci_reader")
    ci = machines("ci@acme.dev", create=False, url=reader_url)
    written = alice.svc.record(alice.project, user_memory("Cache", "clear it after a schema change")).memory
    ci.svc.record(ci.project, user_memory("CI only", "a local note"))
    sync_now(alice.svc)
    report = sync_now(ci.svc)
    assert report is not None and report.read_only and report.pending == 0
    assert ci.svc.get(ci.project, written.id).body == "clear it after a schema change"
    assert len(server_rows(team_url)) == 1  # the reader's own note stayed on its machine


def test_another_key_starts_the_pool_over(machines: MakeMachine, team_url: str) -> None:
    alice = machines("alice@acme.dev")
    alice.svc.record(alice.project, user_memory("Old pool", "kept under the first key"))
    sync_now(alice.svc)
    assert alice.svc.team.shared()[0].pulled_through > 0 and alice.svc.team.pending() == 0
    alice.svc.team.share(alice.project, "id/new-key")  # the repository got another remote, or an id file
    shared = alice.svc.team.shared()[0]
    assert (shared.team_key, shared.pulled_through) == ("id/new-key", 0) and alice.svc.team.pending() == 1
    sync_now(alice.svc)
    with connect(team_url) as conn:
        keys = {row[0] for row in conn.execute("SELECT project_key FROM orcmem.memories").fetchall()}
    assert keys == {"id/new-key"}  # a memory id is one memory of the team: it moved to the project's new key
    with connect(team_url) as conn:
        counted = conn.execute("SELECT DISTINCT project_key FROM orcmem.lexemes").fetchall()
    assert counted == [("id/new-key",)]
