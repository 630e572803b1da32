"""Fused search: words and meaning, the seed's score, the per-run cap, and graceful fallbacks."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from orcmem.embed.worker import WorkerEmbedder
from orcmem.host.workspace import locate
from orcmem.models.constants import FUSION_WORD_WEIGHT
from orcmem.models.types import NewMemory, Source
from orcmem.retrieve.scoring import fuse, relative
from orcmem.service.memory_service import MemoryService
from orcmem.store.facade import Store
from tests.embedders import FailingEmbedder, StalledEmbedder
from tests.fakes import SynonymEmbedder
from tests.helpers import Clock, user_memory


def make_service(home: Path, clock: Clock, embedder) -> MemoryService:
    svc = MemoryService(Store.open(home / "orcmem.db"), clock=clock, embedder=embedder)
    svc.settings.set_enabled(True)
    if not svc.store.vectors.available:
        pytest.skip(f"sqlite-vec unavailable: {svc.store.db.vector_error}")
    return svc


@pytest.fixture
def fused(orcmem_home: Path, clock: Clock, project_dir: Path):
    svc = make_service(orcmem_home, clock, SynonymEmbedder())
    project = svc.project(locate(project_dir))
    yield svc, project
    svc.close()


def settle(svc: MemoryService) -> None:
    assert svc.pump is not None and svc.pump.wait(10)


def test_records_are_embedded_in_the_background(fused) -> None:
    svc, project = fused
    for i in range(40):
        svc.record(project, user_memory(f"note {i}", "text"))
    settle(svc)
    assert svc.store.vectors.count(svc.embedder.model_id) == 40


def test_meaning_finds_what_words_cannot(fused) -> None:
    svc, project = fused
    car = svc.record(project, user_memory("Car keeps stalling", "the car engine stalls when cold")).memory
    svc.record(project, user_memory("Tabs over spaces", "indent with tabs"))
    settle(svc)
    assert svc.search.words(project, "automobile") == []
    hits = svc.search.hits(project, "automobile")
    assert hits[0].memory.id == car.id
    assert hits[0].parts.word_rank is None and hits[0].parts.meaning_rank == 1


def test_fusion_adds_both_lists(fused) -> None:
    svc, project = fused
    both = svc.record(project, user_memory("Repair the car", "repair steps")).memory
    settle(svc)
    hit = svc.search.hits(project, "repair car")[0]
    assert hit.memory.id == both.id
    assert hit.parts.word_rank == 1 and hit.parts.meaning_rank == 1
    assert hit.parts.fused == pytest.approx(1.0)  # the best of both lists: its full share of each


def test_a_memory_only_one_list_found_gets_that_lists_share(fused) -> None:
    svc, project = fused
    car = svc.record(project, user_memory("Car keeps stalling", "the car engine stalls when cold")).memory
    settle(svc)
    hit = svc.search.hits(project, "automobile")[0]
    assert hit.memory.id == car.id and hit.parts.word_rank is None
    assert hit.parts.fused == pytest.approx(1 - FUSION_WORD_WEIGHT)


def test_score_is_the_seed_formula(fused, clock: Clock) -> None:
    svc, project = fused
    svc.record(
        project, NewMemory(type="decision", title="Use Postgres", body="for jobs", source=Source.USER, confidence=0.8)
    )
    settle(svc)
    clock.advance_days(75)
    hit = svc.search.hits(project, "postgres")[0]
    expected = 1.0 * 1.2 * (0.5 + 0.8 / 2) * (0.4 + 0.6 * 0.5)
    assert hit.score == pytest.approx(expected)
    assert (hit.parts.type_weight, hit.parts.recency_factor) == (1.2, pytest.approx(0.7))


def test_type_weight_orders_equal_matches(fused) -> None:
    svc, project = fused
    spec = svc.record(project, user_memory("Widget cache", "widget cache", type="spec")).memory
    lesson = svc.record(project, user_memory("Widget cache", "widget cache", type="lesson")).memory
    settle(svc)
    assert [h.memory.id for h in svc.search.hits(project, "widget cache")][:2] == [lesson.id, spec.id]


def test_at_most_three_results_per_run(fused) -> None:
    svc, project = fused
    db = svc.store.db
    with db.transaction():
        db.query("INSERT INTO runs (id, project_id, agent, started_at) VALUES ('run1', ?, 'claude', 0)", (project.id,))
    for i in range(6):
        svc.record(project, user_memory(f"Flaky test {i}", "flaky", source=Source.EXTRACTION, source_run_id="run1"))
    svc.record(project, user_memory("Flaky network", "flaky"))
    settle(svc)
    hits = svc.search.hits(project, "flaky")
    assert sum(1 for h in hits if h.memory.source_run_id == "run1") == 3
    assert len(hits) == 4


def test_limit_defaults_to_eight(fused) -> None:
    svc, project = fused
    for i in range(20):
        svc.record(project, user_memory(f"Deploy step {i}", "deploy"))
    assert len(svc.search.hits(project, "deploy")) == 8


def test_a_stalled_embedder_still_gets_word_results_fast(orcmem_home: Path, clock: Clock, project_dir: Path) -> None:
    stalled = StalledEmbedder(max_wait=10)
    embedder = WorkerEmbedder(lambda: stalled, model_id=stalled.model_id)
    svc = make_service(orcmem_home, clock, embedder)
    project = svc.project(locate(project_dir))
    memory = svc.record(project, user_memory("Rotate the logs", "logrotate daily")).memory
    started = time.monotonic()
    hits = svc.search.hits(project, "rotate logs")
    elapsed = time.monotonic() - started
    assert [h.memory.id for h in hits] == [memory.id]
    assert hits[0].parts.meaning_rank is None
    assert elapsed < 1.5
    stalled.release.set()
    embedder.close()
    svc.close()


def test_a_failing_embedder_leaves_search_on_words(orcmem_home: Path, clock: Clock, project_dir: Path) -> None:
    svc = make_service(orcmem_home, clock, FailingEmbedder())
    project = svc.project(locate(project_dir))
    memory = svc.record(project, user_memory("Rotate the logs", "logrotate daily")).memory
    settle(svc)
    assert svc.pump.last_error and "fake embedding model failed" in svc.pump.last_error
    assert svc.store.vectors.count() == 0
    assert [h.memory.id for h in svc.search.hits(project, "rotate logs")] == [memory.id]
    svc.close()


def test_nothing_is_embedded_or_queried_while_off(orcmem_home: Path, clock: Clock, project_dir: Path) -> None:
    embedder = SynonymEmbedder()
    svc = make_service(orcmem_home, clock, embedder)
    project = svc.project(locate(project_dir))
    memory = svc.record(project, user_memory("Car trouble", "car")).memory
    settle(svc)
    svc.settings.set_enabled(False)
    svc.edit(project, memory.id, body="the car again")
    settle(svc)
    queries = embedder.queries
    assert [h.memory.id for h in svc.search.hits(project, "car")] == [memory.id]
    assert embedder.queries == queries
    assert svc.store.vectors.count_missing(embedder.model_id) == 1  # the edit waits for memory to be on
    svc.close()


def test_edit_and_merge_re_embed(fused) -> None:
    svc, project = fused
    memory = svc.record(project, user_memory("Tabs", "indent", topic_key="style")).memory
    settle(svc)
    svc.edit(project, memory.id, body="the car")
    settle(svc)
    assert svc.search.meaning(project, "automobile")[0].id == memory.id
    svc.record(project, user_memory("Spaces", "repair", topic_key="style"))
    settle(svc)
    assert svc.search.meaning(project, "mend")[0].id == memory.id


def test_reindex_backfills_with_progress(orcmem_home: Path, clock: Clock, project_dir: Path) -> None:
    plain = MemoryService.open(orcmem_home)
    plain.settings.set_enabled(True)
    project = plain.project(locate(project_dir))
    for i in range(70):
        plain.record(project, user_memory(f"m{i}", "b"))
    plain.close()
    svc = make_service(orcmem_home, clock, SynonymEmbedder())
    seen: list[tuple[int, int]] = []
    assert svc.reindex(progress=lambda done, total: seen.append((done, total))) == 70
    assert seen == [(32, 70), (64, 70), (70, 70)]
    assert svc.reindex() == 0
    svc.close()


def test_other_projects_and_retracted_never_come_back(fused, tmp_path: Path) -> None:
    svc, project = fused
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    other = svc.project(locate(other_dir))
    svc.record(other, user_memory("Car in other project", "car"))
    gone = svc.record(project, user_memory("Car retracted", "car")).memory
    svc.feedback(project, gone.id, "wrong")
    settle(svc)
    assert svc.search.hits(project, "automobile car") == []


def test_fused_value_is_the_weighted_sum_of_each_lists_scaled_scores(fused, clock: Clock) -> None:
    svc, project = fused
    a, b, c = (svc.record(project, user_memory(f"Note {name}", "text")).memory for name in "abc")
    hits = fuse(
        [a, b, c], [c, b], clock(), word_scores={a.id: 9.0, b.id: 5.0, c.id: 1.0}, similarities={c.id: 0.8, b.id: 0.6}
    )
    w = FUSION_WORD_WEIGHT
    assert {hit.memory.id: hit.parts.fused for hit in hits} == pytest.approx({a.id: w, b.id: w / 2, c.id: 1 - w})
    assert [hit.memory.id for hit in hits] == [a.id, c.id, b.id]
    assert relative({"x": 2.0, "y": 2.0}) == {"x": 1.0, "y": 1.0} and relative({}) == {}
