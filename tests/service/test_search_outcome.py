"""A search says when it matched by words only although meaning was wanted: late, loading or failed."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from orcmem.app.runtime import query_timeout
from orcmem.embed.worker import WorkerEmbedder
from orcmem.host.workspace import locate
from orcmem.models.constants import QUERY_EMBED_TIMEOUT_S
from orcmem.models.env_names import QUERY_TIMEOUT_ENV_VAR, QUERY_TIMEOUT_MAX_S
from orcmem.models.vocabulary import Meaning
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


def test_meaning_used_gives_no_notice(orcmem_home: Path, clock: Clock, project_dir: Path) -> None:
    svc = make_service(orcmem_home, clock, SynonymEmbedder())
    project = svc.project(locate(project_dir))
    car = svc.record(project, user_memory("Car keeps stalling", "the car engine stalls when cold")).memory
    assert svc.pump is not None and svc.pump.wait(10)
    outcome = svc.search.run(project, "automobile")
    assert (outcome.meaning, outcome.notice) == (Meaning.USED, None)
    assert [hit.memory.id for hit in outcome.hits] == [car.id]
    svc.close()


def test_a_late_query_vector_is_said_not_silent(orcmem_home: Path, clock: Clock, project_dir: Path) -> None:
    # The worker is busy with a batch of documents that never ends: the query waits behind it and misses its limit.
    stalled = StalledEmbedder(max_wait=30)
    embedder = WorkerEmbedder(lambda: stalled, model_id=stalled.model_id)
    svc = make_service(orcmem_home, clock, embedder)
    project = svc.project(locate(project_dir))
    memory = svc.record(project, user_memory("Rotate the logs", "logrotate daily")).memory
    assert stalled.entered.wait(10)
    outcome = svc.search.run(project, "rotate logs")
    assert [hit.memory.id for hit in outcome.hits] == [memory.id]
    assert outcome.meaning is Meaning.LATE
    assert outcome.notice is not None and "words only" in outcome.notice and "0.5 s" in outcome.notice
    stalled.release.set()
    svc.close()


def test_a_longer_query_timeout_waits_for_meaning(orcmem_home: Path, clock: Clock, project_dir: Path) -> None:
    # The same busy worker, freed once the search is waiting: with a long limit the search gets its meaning.
    stalled = StalledEmbedder(max_wait=30)
    embedder = WorkerEmbedder(lambda: stalled, model_id=stalled.model_id)
    svc = make_service(orcmem_home, clock, embedder)
    svc.search.query_timeout = 30.0
    project = svc.project(locate(project_dir))
    svc.record(project, user_memory("Rotate the logs", "logrotate daily"))
    assert stalled.entered.wait(10)
    threading.Timer(0.3, stalled.release.set).start()
    outcome = svc.search.run(project, "rotate logs")
    assert (outcome.meaning, outcome.notice) == (Meaning.USED, None)
    svc.close()


def test_a_model_still_loading_answers_words_and_says_so(orcmem_home: Path, clock: Clock, project_dir: Path) -> None:
    loaded = threading.Event()

    def load() -> SynonymEmbedder:
        loaded.wait(30)
        return SynonymEmbedder()

    embedder = WorkerEmbedder(load, model_id=SynonymEmbedder().model_id)
    svc = make_service(orcmem_home, clock, embedder)
    svc.search.query_timeout = 0.05
    project = svc.project(locate(project_dir))
    memory = svc.record(project, user_memory("Rotate the logs", "logrotate daily")).memory
    outcome = svc.search.run(project, "rotate logs")
    assert [hit.memory.id for hit in outcome.hits] == [memory.id]
    assert outcome.meaning is Meaning.LOADING and outcome.notice is not None and "still loading" in outcome.notice
    loaded.set()
    svc.close()


def test_a_failing_model_is_said(orcmem_home: Path, clock: Clock, project_dir: Path) -> None:
    svc = make_service(orcmem_home, clock, FailingEmbedder())
    project = svc.project(locate(project_dir))
    svc.record(project, user_memory("Rotate the logs", "logrotate daily"))
    outcome = svc.search.run(project, "rotate logs")
    assert outcome.meaning is Meaning.FAILED and outcome.notice is not None and "failed" in outcome.notice
    svc.close()


def test_words_by_choice_give_no_notice(orcmem_home: Path, clock: Clock, project_dir: Path) -> None:
    svc = make_service(orcmem_home, clock, SynonymEmbedder())
    project = svc.project(locate(project_dir))
    svc.record(project, user_memory("Rotate the logs", "logrotate daily"))
    outcome = svc.search.run(project, "rotate logs", semantic=False)
    assert (outcome.meaning, outcome.notice) == (Meaning.OFF, None)
    svc.close()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("30", 30.0),
        ("0.25", 0.25),
        ("9999", QUERY_TIMEOUT_MAX_S),
        ("0", QUERY_EMBED_TIMEOUT_S),
        ("-1", QUERY_EMBED_TIMEOUT_S),
        ("nan", QUERY_EMBED_TIMEOUT_S),
        ("soon", QUERY_EMBED_TIMEOUT_S),
        ("", QUERY_EMBED_TIMEOUT_S),
    ],
)
def test_the_query_timeout_setting(value: str, expected: float) -> None:
    assert query_timeout({QUERY_TIMEOUT_ENV_VAR: value}) == expected


def test_the_agents_search_tool_marks_words_only_results(orcmem_home: Path, clock: Clock, project_dir: Path) -> None:
    from orcmem.service.agent_tools import AgentTools

    stalled = StalledEmbedder(max_wait=30)
    embedder = WorkerEmbedder(lambda: stalled, model_id=stalled.model_id)
    svc = make_service(orcmem_home, clock, embedder)
    project = svc.project(locate(project_dir))
    svc.record(project, user_memory("Rotate the logs", "logrotate daily"))
    assert stalled.entered.wait(10)
    tools = AgentTools(svc, project, mode="review", headless=False, auto_approve=False, session_id="s")
    (late,) = tools.search("rotate logs")
    assert "words only" in late["words_only"]
    stalled.release.set()
    assert svc.pump is not None and svc.pump.wait(10)
    (found,) = tools.search("rotate logs")
    assert "words_only" not in found
    svc.close()


def test_words_first_does_not_wait_for_a_loading_model(orcmem_home: Path, clock: Clock, project_dir: Path) -> None:
    # The warm server's `orcmem search`: its model still loading, words answer at once (the limit is never waited).
    loaded = threading.Event()

    def load() -> SynonymEmbedder:
        loaded.wait(30)
        return SynonymEmbedder()

    embedder = WorkerEmbedder(load, model_id=SynonymEmbedder().model_id)
    svc = make_service(orcmem_home, clock, embedder)
    svc.search.query_timeout = 30.0
    project = svc.project(locate(project_dir))
    memory = svc.record(project, user_memory("Rotate the logs", "logrotate daily")).memory
    outcome = svc.search.run(project, "rotate logs", words_first=True)
    assert [hit.memory.id for hit in outcome.hits] == [memory.id]
    assert outcome.meaning is Meaning.LOADING and outcome.notice is not None and "still loading" in outcome.notice
    loaded.set()
    assert embedder.wait_ready(10)
    assert svc.search.run(project, "rotate logs", words_first=True).meaning is Meaning.USED
    svc.close()
