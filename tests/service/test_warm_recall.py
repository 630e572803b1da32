"""Warm recall (`memory_recall` on the MCP server): the word matches, plus memories close in meaning, with the real
all-MiniLM-L6-v2 (int8, from its pinned PyPI source)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from orcmem.agent_context.recall import RECALL_HEADER
from orcmem.host.workspace import locate
from orcmem.mcp_server.root import build_server
from orcmem.models.constants import CONTEXT_TAG
from orcmem.models.types import Scope
from orcmem.retrieve.query import query_terms
from orcmem.service.agent_tools import AgentTools
from orcmem.service.memory_service import MemoryService
from orcmem.store.facade import Store
from tests.embedders import HashingEmbedder
from tests.helpers import Clock, user_memory, without_fence_id

CAR = ("The car will not start in winter", "The battery drains overnight when it is freezing outside.")
MEMORIES = [
    CAR,
    ("Use tabs for indentation", "Every Go file in this repository is formatted by gofmt."),
    ("Release checklist", "Bump the version, tag the commit and publish the wheel to the index."),
    ("Run the tests with the forks pool", "vitest --pool=forks avoids worker crashes with native modules."),
]
PARAPHRASE = "why won't my vehicle turn on when it's cold"  # no word in common with CAR
OFF_TOPIC = ["what's a good recipe for banana bread", "who won the world cup in 2018", "how tall is mount everest"]


@pytest.fixture
def warm(embedded):
    return embedded(MEMORIES)


def test_a_prompt_in_other_words_is_answered_by_meaning(warm) -> None:
    svc, project, _ids = warm
    assert not set(query_terms(PARAPHRASE)) & set(query_terms(" ".join(CAR)))
    assert svc.context.recall(project.canonical_root, PARAPHRASE) == ""  # the words alone find nothing
    text = svc.context.recall(project.canonical_root, PARAPHRASE, meaning=True)
    assert without_fence_id(text).startswith(f'<{CONTEXT_TAG} kind="recall">\n{RECALL_HEADER}\n')
    [line] = text.splitlines()[2:-1]
    assert line.startswith(f"- [lesson · today · from the user] {CAR[0]}: ")


def test_the_threshold_decides(warm) -> None:
    svc, project, _ids = warm
    assert svc.context.recall_rows(project.canonical_root, PARAPHRASE, meaning=True, min_similarity=0.99) == []
    rows = svc.context.recall_rows(project.canonical_root, PARAPHRASE, meaning=True, min_similarity=0.3)
    assert [row[1] for row in rows] == [CAR[0]]


@pytest.mark.parametrize("prompt", OFF_TOPIC)
def test_an_off_topic_prompt_gets_nothing(warm, prompt: str) -> None:
    svc, project, _ids = warm
    assert svc.context.recall(project.canonical_root, prompt, meaning=True) == ""


def test_a_memory_found_both_ways_is_shown_once_and_first(warm) -> None:
    svc, project, _ids = warm
    rows = svc.context.recall_rows(project.canonical_root, "vitest worker crashes in the forks pool", meaning=True)
    titles = [row[1] for row in rows]
    assert titles[0] == MEMORIES[3][0] and titles.count(MEMORIES[3][0]) == 1


def test_retracted_and_other_projects_memories_are_not_recalled(warm, tmp_path: Path) -> None:
    svc, project, ids = warm
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    other = svc.project(locate(elsewhere))
    assert svc.context.recall(other.canonical_root, PARAPHRASE, meaning=True) == ""
    svc.feedback(project, ids[0], "wrong")
    assert svc.context.recall(project.canonical_root, PARAPHRASE, meaning=True) == ""


def test_a_global_memory_is_recalled_by_meaning_everywhere(warm, tmp_path: Path) -> None:
    svc, project, _ids = warm
    title, body = "Automobiles refuse to start in winter", "A car battery drains overnight when it is freezing outside."
    svc.record(project, user_memory(title, body, scope=Scope.GLOBAL))
    assert svc.pump.wait(30)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    other = svc.project(locate(elsewhere))
    rows = svc.context.recall_rows(other.canonical_root, PARAPHRASE, meaning=True)
    assert [row[1] for row in rows] == [title]  # the global memory, not the project's own CAR


def test_nothing_is_recalled_while_memory_is_off(warm) -> None:
    svc, project, _ids = warm
    svc.settings.set_enabled(False)
    assert svc.context.recall(project.canonical_root, PARAPHRASE, meaning=True) == ""


class _Loading(HashingEmbedder):
    """A model still loading: every embedding call is a failure of the test."""

    ready = False

    def embed_query(self, text: str, timeout: float | None = None) -> list[float]:
        raise AssertionError("recall waited for a model that has not loaded")

    embed_query_here = embed_query


def test_a_model_still_loading_leaves_recall_on_words_without_waiting(
    orcmem_home: Path, clock: Clock, project_dir: Path
) -> None:
    svc = MemoryService(Store.open(orcmem_home / "orcmem.db"), clock=clock, embedder=_Loading())
    try:
        svc.settings.set_enabled(True)
        project = svc.project(locate(project_dir))
        svc.record(project, user_memory(*MEMORIES[3]), embed=False)
        text = svc.context.recall(project.canonical_root, "vitest forks pool", meaning=True)
        assert MEMORIES[3][0] in text
    finally:
        svc.close()


@pytest.mark.anyio
async def test_the_mcp_tool_recalls_by_meaning(warm) -> None:
    svc, project, _ids = warm
    tools = AgentTools(svc, project, mode="accept-edits", headless=True, auto_approve=False, session_id="s")
    async with Client(build_server(tools)) as client:
        recalled = await client.call_tool("memory_recall", {"prompt": PARAPHRASE})
    assert CAR[0] in recalled.content[0].text  # type: ignore[union-attr]
