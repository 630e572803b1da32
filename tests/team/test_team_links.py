"""Links between memories (replaces, refines, conflicts) travel through a real team pool with their history."""

from __future__ import annotations

from pathlib import Path

import pytest

from orcmem.host.workspace import Location
from orcmem.models.types import MemoryFilter, NewMemory, Relation, Source, Status
from orcmem.rules.review import ReviewPolicy
from orcmem.store.team_pool.links import pull_links
from orcmem.store.team_pool.server import connect
from orcmem.team.sync import sync_now
from tests.helpers import user_memory
from tests.team.conftest import Machine, MakeMachine


def sync(*machines: Machine) -> None:
    for machine in machines:
        assert sync_now(machine.svc) is not None


def pool_links(url: str) -> list[tuple]:
    with connect(url) as conn:
        return conn.execute("SELECT from_id, to_id, author, relation, open FROM orcmem.links ORDER BY seq").fetchall()


def record(machine: Machine, title: str, body: str, **kw) -> str:
    return machine.svc.record(machine.project, user_memory(title, body), **kw).memory.id


def pair(machine: Machine, older: tuple[str, str], newer: tuple[str, str], relation: Relation) -> tuple[str, str]:
    """An older memory and a newer one that says `relation` of it, both the person's: their ids."""
    old = record(machine, *older)
    return old, record(machine, *newer, relation=relation, related_id=old)


def test_a_replacement_reaches_a_teammate_whose_recall_gives_only_the_successor(
    machines: MakeMachine, team_url: str
) -> None:
    alice, bob = machines("alice@acme.dev"), machines("bob@acme.dev")
    old = record(alice, "Use npm for installs", "npm install sets up the workspace packages")
    sync(alice, bob)
    assert bob.svc.get(bob.project, old).status is Status.ACTIVE
    new = record(
        alice, "Use pnpm for installs", "pnpm install sets up the workspace", relation=Relation.REPLACES, related_id=old
    )
    sync(alice, bob)

    assert pool_links(team_url) == [(new, old, "alice@acme.dev", "replaces", False)]
    assert bob.svc.get(bob.project, old).status is Status.SUPERSEDED
    [link] = bob.svc.history.links(old)
    assert (link.from_id, link.to_id, link.relation, link.by, link.person) == (
        new,
        old,
        Relation.REPLACES,
        "user",
        "alice@acme.dev",
    )
    recall = bob.svc.context.recall(bob.project.canonical_root, "how do I run installs for the workspace")
    assert "Use pnpm for installs" in recall
    assert "Use npm for installs" not in recall.split("replaces:")[0]  # the old one is not recalled itself
    assert "(replaces: Use npm for installs (" in recall
    assert "replaces: Use npm for installs" in bob.svc.context.brief(bob.project)
    # Alice's own link came back from the pool as hers: nothing more to send, and it is not named as a teammate's.
    [mine] = alice.svc.history.links(old)
    assert mine.person is None and alice.svc.team.outgoing_links(10) == []


def test_a_link_to_a_memory_waiting_for_review_goes_up_once_it_is_accepted(
    machines: MakeMachine, team_url: str
) -> None:
    alice, bob = machines("alice@acme.dev"), machines("bob@acme.dev")
    alice.svc.review.set_policy(alice.project, ReviewPolicy(all_wait=True))
    old = alice.svc.record(
        alice.project, user_memory("Tests need Postgres 15", "CI runs 15", source=Source.AGENT)
    ).memory.id
    learned = alice.svc.record(
        alice.project,
        NewMemory(type="lesson", title="Tests need Postgres 16", body="CI moved to 16", source=Source.EXTRACTION),
        relation=Relation.REPLACES,
        related_id=old,
    ).memory
    assert learned.status is Status.PENDING
    sync(alice, bob)
    assert pool_links(team_url) == []  # the newer memory is not shared yet, nor is its link
    assert bob.svc.get(bob.project, old).status is Status.ACTIVE

    alice.svc.review.accept(alice.project, learned.id)
    sync(alice, bob)
    assert pool_links(team_url) == [(learned.id, old, "alice@acme.dev", "replaces", False)]
    assert bob.svc.get(bob.project, old).status is Status.SUPERSEDED
    assert [link.from_id for link in bob.svc.history.links(old)] == [learned.id]


def test_a_link_pulled_before_its_memories_applies_when_they_arrive(machines: MakeMachine) -> None:
    alice, bob = machines("alice@acme.dev"), machines("bob@acme.dev")
    old, new = pair(
        alice, ("Deploy with Jenkins", "its job ships"), ("Deploy with Actions", "ships"), Relation.REPLACES
    )
    sync(alice)
    server = bob.server()
    try:
        [shared] = bob.svc.team.shared()
        links = pull_links(server, shared.team_key, 0)
        assert bob.svc.team.apply_links(shared, links) == 0  # neither memory is here yet: the link waits
    finally:
        server.close()
    sync(bob)  # the memories arrive; the link it already took applies with them
    assert bob.svc.get(bob.project, old).status is Status.SUPERSEDED
    assert [(link.from_id, link.relation) for link in bob.svc.history.links(old)] == [(new, Relation.REPLACES)]


def test_a_teammates_conflict_waits_in_the_inbox_with_both_sides(
    machines: MakeMachine, run, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob = machines("alice@acme.dev"), machines("bob@acme.dev")
    tuesday, thursday = ("Release on Tuesdays", "the train leaves Tuesday"), ("Release on Thursdays", "on Thursday")
    old, new = pair(alice, tuesday, thursday, Relation.CONFLICTS)
    sync(alice, bob)
    [conflict] = bob.svc.review.team_conflicts(bob.project)
    assert (conflict.from_id, conflict.to_id, conflict.open, conflict.person) == (new, old, True, "alice@acme.dev")
    monkeypatch.setenv("ORCMEM_HOME", str(bob.svc.home))
    listed = run("--project", bob.project.canonical_root, "review", "--list").output
    assert "Release on Thursdays" in listed and "Release on Tuesdays" in listed
    assert f"orcmem conflicts resolve {new} --keep {new}|{old}|both" in listed

    # Bob settles it on his machine; only alice overrules alice, so his word reaches her as a conflict to settle.
    bob.svc.history.resolve(bob.project, new, new)
    sync(bob, alice)
    assert bob.svc.get(bob.project, old).status is Status.SUPERSEDED
    assert bob.svc.review.team_conflicts(bob.project) == []
    assert alice.svc.get(alice.project, old).status is Status.ACTIVE
    [theirs] = alice.svc.review.team_conflicts(alice.project)
    assert (theirs.relation, theirs.person) == (Relation.CONFLICTS, "bob@acme.dev")
    alice.svc.history.resolve(alice.project, new, new)  # she agrees: her older memory becomes history everywhere
    sync(alice, bob)
    assert alice.svc.get(alice.project, old).status is Status.SUPERSEDED
    assert alice.svc.review.team_conflicts(alice.project) == bob.svc.review.team_conflicts(bob.project) == []
    assert bob.svc.get(bob.project, old).status is Status.SUPERSEDED


def test_show_on_a_teammates_machine_prints_the_chain(
    machines: MakeMachine, run, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob = machines("alice@acme.dev"), machines("bob@acme.dev")
    old, new = pair(
        alice, ("Lint with flake8", "flake8 runs in CI"), ("Lint with ruff", "ruff in CI"), Relation.REPLACES
    )
    sync(alice, bob)
    monkeypatch.setenv("ORCMEM_HOME", str(bob.svc.home))
    shown = run("--project", bob.project.canonical_root, "show", old).output
    assert "status: superseded" in shown
    assert f'replaced by {new} "Lint with ruff"' in shown and "alice@acme.dev" in shown
    shown = run("--project", bob.project.canonical_root, "show", new).output
    assert f'replaced {old} "Lint with flake8"' in shown
    every = MemoryFilter(statuses=("active",))
    assert [m.id for m in bob.svc.list(bob.project, every)] == [new]


def test_a_link_stated_after_the_fact_waits_to_be_sent_and_both_stay_active_for_a_teammate(
    machines: MakeMachine, team_url: str
) -> None:
    alice, bob = machines("alice@acme.dev"), machines("bob@acme.dev")
    base = record(alice, "Cache API answers", "responses are cached for a minute")
    detail = record(alice, "Cache API answers per user", "the cache key holds the user id")
    sync(alice, bob)
    assert alice.svc.relate(alice.project, detail, Relation.REFINES, base, actor=Source.USER) is Relation.REFINES
    assert alice.svc.team.pending() == 1  # no memory changed, yet the background sync sees it waits
    sync(alice, bob)
    assert alice.svc.team.pending() == 0
    assert pool_links(team_url) == [(detail, base, "alice@acme.dev", "refines", False)]
    [link] = bob.svc.history.links(base)
    assert (link.from_id, link.relation) == (detail, Relation.REFINES)
    active = bob.svc.list(bob.project, MemoryFilter(statuses=("active",)))
    assert {m.id for m in active} == {base, detail}


def test_a_link_between_memories_of_two_clones_shared_under_one_key_applies(
    machines: MakeMachine, tmp_path: Path
) -> None:
    """Two clones of the repository on one machine are two local projects under one key: one pool project."""
    alice, bob = machines("alice@acme.dev"), machines("bob@acme.dev")
    folder = tmp_path / "clone-alice-2"
    folder.mkdir()
    other = alice.svc.project(Location(str(folder), str(folder), "app"))
    alice.svc.team.share(other, "github.com/acme/app")
    first = record(alice, "Release on Tuesdays", "the train leaves Tuesday")
    second = alice.svc.record(other, user_memory("Release on Thursdays", "the train leaves Thursday")).memory.id
    sync(alice, bob)
    bob.svc.relate(bob.project, second, Relation.CONFLICTS, first, actor=Source.USER)
    sync(bob, alice)
    assert [(link.from_id, link.person) for link in alice.svc.history.links(first)] == [(second, "bob@acme.dev")]
