"""Search by meaning with the real all-MiniLM-L6-v2 (int8, from its pinned PyPI source)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orcmem.host.workspace import locate
from orcmem.models.constants import SEARCH_MEANING_ONLY_MIN_SIMILARITY
from orcmem.retrieve.query import query_terms
from tests.helpers import user_memory

MEMORIES = [
    ("The car will not start in winter", "The battery drains overnight when it is freezing outside."),
    ("Use tabs for indentation", "Every Go file in this repository is formatted by gofmt."),
    ("Release checklist", "Bump the version, tag the commit and publish the wheel to the index."),
    ("Database migrations are numbered", "Each schema change is a new numbered SQL file; never edit an old one."),
]
QUERY = "automobile trouble during chilly mornings"


@pytest.fixture
def real(embedded):
    return embedded(MEMORIES)


def test_a_query_sharing_no_word_finds_the_memory(real) -> None:
    svc, project, ids = real
    title, body = MEMORIES[0]
    assert not set(query_terms(QUERY)) & set(query_terms(f"{title} {body}"))
    assert ids[0] not in [m.id for m in svc.search.words(project, QUERY)]
    hits = svc.search.hits(project, QUERY)
    assert hits[0].memory.id == ids[0]
    assert hits[0].parts.meaning_rank == 1 and hits[0].parts.word_rank is None


def test_a_retracted_memory_is_never_returned(real) -> None:
    svc, project, ids = real
    svc.feedback(project, ids[0], "wrong")
    assert ids[0] not in [h.memory.id for h in svc.search.hits(project, QUERY)]
    assert ids[0] not in [m.id for m in svc.search.meaning(project, QUERY)]


def test_another_projects_memory_is_never_returned(real, tmp_path: Path) -> None:
    svc, _project, ids = real
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    other = svc.project(locate(elsewhere))
    assert svc.search.hits(other, QUERY) == []
    assert svc.search.meaning(other, QUERY) == []


def test_global_memories_are_found_by_meaning_everywhere(real, tmp_path: Path) -> None:
    svc, project, _ids = real
    from orcmem.models.types import Scope

    memory = svc.record(
        project,
        user_memory("Prefer short commit messages", "Keep the subject under fifty characters.", scope=Scope.GLOBAL),
    ).memory
    assert svc.pump.wait(30)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    other = svc.project(locate(elsewhere))
    assert svc.search.hits(other, "how long should a git log summary line be")[0].memory.id == memory.id


def test_a_reworded_repeat_confirms_the_memory_and_a_different_fact_does_not(embedded) -> None:
    from orcmem.models.types import NewMemory, Source

    svc, project, [first] = embedded(
        [("Use the forks pool in CI", "vitest threads crash on the CI runner; forks works")]
    )
    repeat = NewMemory(
        type="lesson",
        title="Vitest: switch the pool to forks on CI",
        body="The threads pool crashes on CI runners, the forks pool does not.",
        source=Source.EXTRACTION,
    )
    result = svc.record(project, repeat)
    assert result.merged and result.memory.id == first and result.memory.evidence_count == 2
    postgres = "Postgres listens on {port} in CI", "The CI service container maps Postgres to port {port}."
    first_port = NewMemory(
        type="env_quirk", title=postgres[0].format(port=5432), body=postgres[1].format(port=5432), source=Source.AGENT
    )
    other_port = NewMemory(
        type="env_quirk", title=postgres[0].format(port=5433), body=postgres[1].format(port=5433), source=Source.AGENT
    )
    assert not svc.record(project, first_port).merged
    assert not svc.record(project, other_port).merged  # 0.99 alike in meaning, but another port
    assert svc.count(project) == 3


def test_a_query_about_nothing_stored_finds_nothing_by_meaning_alone(real) -> None:
    """Meaning always has a nearest memory; one that no word matched must be close enough to be shown."""
    svc, project, ids = real
    hits = svc.search.hits(project, "recipe for banana bread with walnuts")
    assert hits == []
    found = svc.search.hits(project, QUERY)  # a paraphrase passes the floor
    assert found[0].memory.id == ids[0]
    assert found[0].parts.similarity is not None
    assert found[0].parts.similarity >= SEARCH_MEANING_ONLY_MIN_SIMILARITY
    assert all(h.parts.word_rank or h.parts.similarity >= SEARCH_MEANING_ONLY_MIN_SIMILARITY for h in found)
