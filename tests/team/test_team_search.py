"""Search on the team's database: words (tsvector) and meaning (pgvector HNSW), fused and scored as locally."""

from __future__ import annotations

import pytest

from orcmem.models.errors import TeamError
from orcmem.models.types import NewMemory, Source
from orcmem.team.search import search_team
from orcmem.team.sync import sync_now
from tests.fakes import SynonymEmbedder
from tests.helpers import user_memory
from tests.team.conftest import MakeMachine


def test_the_team_is_searched_by_words_and_by_meaning(machines: MakeMachine) -> None:
    alice, bob = machines("alice@acme.dev"), machines("bob@acme.dev")
    embedder = SynonymEmbedder()
    for machine in (alice, bob):
        machine.svc.use_embedder(embedder)
        machine.svc.settings.set_embedding_model(embedder.model_id)
    car = alice.svc.record(alice.project, user_memory("Car keeps stalling", "the car engine stalls when cold")).memory
    alice.svc.record(alice.project, user_memory("Tabs over spaces", "indent with tabs"))
    assert alice.svc.pump is not None and alice.svc.pump.wait(10)
    sync_now(alice.svc)
    by_words = search_team(bob.svc, bob.project, "engine stalls", 5)
    assert by_words[0].memory.id == car.id and by_words[0].parts.word_rank == 1
    assert by_words[0].memory.author == "alice@acme.dev"
    by_meaning = search_team(bob.svc, bob.project, "automobile", 5)  # no word in common: the vector found it
    assert [hit.memory.id for hit in by_meaning] == [car.id]
    assert by_meaning[0].parts.word_rank is None and by_meaning[0].parts.meaning_rank == 1


def test_forgotten_and_retracted_memories_are_not_found_on_the_team(machines: MakeMachine) -> None:
    alice = machines("alice@acme.dev")
    gone = alice.svc.record(alice.project, user_memory("Old deploy script", "deploy.sh pushes to prod")).memory
    wrong = alice.svc.record(alice.project, NewMemory("fact", "Deploy on Fridays", "deploys go out", Source.AGENT))
    sync_now(alice.svc)
    alice.svc.forget(alice.project, gone.id)
    alice.svc.feedback(alice.project, wrong.memory.id, "wrong")
    sync_now(alice.svc)
    assert search_team(alice.svc, alice.project, "deploy", 5) == []


def test_searching_a_project_that_is_not_shared_says_so(machines: MakeMachine) -> None:
    alice = machines("alice@acme.dev")
    alice.svc.team.unshare(alice.project)
    with pytest.raises(TeamError, match="not shared"):
        search_team(alice.svc, alice.project, "anything", 5)
