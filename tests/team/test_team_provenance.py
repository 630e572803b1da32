"""Provenance through the team pool (a real PostgreSQL): the writer's travels, and a person's words from another
person show as a teammate's; a teammate's change never rewrites what the writer's profile said."""

from __future__ import annotations

from orcmem.models.types import NewMemory, Provenance, Source
from orcmem.store.team_pool.server import connect
from orcmem.team.search import search_team
from orcmem.team.sync import sync_now
from tests.helpers import user_memory
from tests.team.conftest import Machine, MakeMachine


def settle(*machines: Machine) -> None:
    for _ in range(2):
        for machine in machines:
            assert sync_now(machine.svc) is not None


def seen(machine: Machine) -> dict[str, Provenance]:
    return {m.title: m.provenance for m in machine.svc.list(machine.project)}


def on_server(url: str) -> dict[str, str | None]:
    with connect(url) as conn:
        return dict(conn.execute("SELECT title, provenance FROM orcmem.memories").fetchall())


def test_provenance_travels_and_a_persons_words_from_another_person_are_a_teammates(
    machines: MakeMachine, team_url: str
) -> None:
    alice, bob = machines("alice@acme.dev"), machines("bob@acme.dev")
    alice.svc.record(alice.project, user_memory("Ship with make ship", "alice's own rule about shipping"))
    alice.svc.record(alice.project, NewMemory(type="lesson", title="Agent note", body="an agent", source=Source.AGENT))
    said = NewMemory(
        type="preference", title="Prefer pnpm", body="pnpm", source=Source.EXTRACTION, provenance="user_words"
    )
    said_id = alice.svc.record(alice.project, said).memory.id
    tool = NewMemory(type="convention", title="Pipe curl to sh", body="curl x | sh", source=Source.EXTRACTION)
    tool_id = alice.svc.record(alice.project, tool).memory.id
    settle(alice, bob)
    writer = {
        "Ship with make ship": "person",
        "Agent note": "agent",
        "Prefer pnpm": "user_words",
        "Pipe curl to sh": "tool_text",
    }
    # A convention from tool text waits in Alice's review inbox: the team gets it only once she accepts it.
    assert on_server(team_url) == {title: value for title, value in writer.items() if title != "Pipe curl to sh"}
    alice.svc.review.accept(alice.project, tool_id)
    settle(alice, bob)
    assert on_server(team_url) == writer
    assert seen(alice) == {title: Provenance(value) for title, value in writer.items()}
    assert seen(bob) == {
        "Ship with make ship": Provenance.TEAMMATE,
        "Agent note": Provenance.AGENT,
        "Prefer pnpm": Provenance.TEAMMATE,
        "Pipe curl to sh": Provenance.TOOL_TEXT,  # never raised to a teammate's word
    }
    [hit] = search_team(bob.svc, bob.project, "make ship", 5)
    assert hit.memory.provenance is Provenance.TEAMMATE
    [own] = search_team(alice.svc, alice.project, "make ship", 5)
    assert own.memory.provenance is Provenance.PERSON

    # Bob's change to Alice's distilled memory goes back marked as a teammate's: the server keeps Alice's word.
    before = alice.svc.get(alice.project, said_id).confidence
    bob.svc.feedback(bob.project, said_id, "helpful")
    settle(bob, alice)
    assert on_server(team_url)["Prefer pnpm"] == "user_words"
    after = alice.svc.get(alice.project, said_id)
    assert after.confidence > before  # Bob's change arrived
    assert after.provenance is Provenance.USER_WORDS and bob.svc.team.pending() == 0


def test_a_server_row_from_before_the_field_reads_as_its_source_says(machines: MakeMachine, team_url: str) -> None:
    alice = machines("alice@acme.dev")
    said = NewMemory(
        type="preference", title="Prefer pnpm", body="pnpm", source=Source.EXTRACTION, provenance="user_words"
    )
    memory_id = alice.svc.record(alice.project, said).memory.id
    settle(alice)
    with connect(team_url) as conn:  # as an older orcmem left it: no provenance, a newer revision
        conn.execute(
            "UPDATE orcmem.memories SET provenance = NULL, revision = revision + 1, "
            "seq = nextval('orcmem.change_seq') WHERE id = %s",
            (memory_id,),
        )
    carol = machines("carol@acme.dev")
    settle(carol)
    assert carol.svc.get(carol.project, memory_id).provenance is Provenance.TOOL_TEXT  # a distilled one: the safer
