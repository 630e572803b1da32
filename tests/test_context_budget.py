"""A session's context budget: the brief and every recall of one session share it (characters / 4 as tokens); recall
shrinks, then stops, once it is spent; what each session was given is kept and logged."""

from __future__ import annotations

import json
from pathlib import Path

from orcmem.agent_context.recall import FENCE_CHARS, RECALL_HEADER
from orcmem.agent_context.session_recall import (
    choose_for_session,
    given_so_far,
    recall_for_session,
    start_session,
)
from orcmem.hooks import handlers
from orcmem.host.workspace import locate
from orcmem.models.constants import CHARS_PER_TOKEN, CONTEXT_BUDGET_TOKENS_DEFAULT
from orcmem.models.types import NewMemory, Source
from orcmem.service.memory_service import MemoryService
from orcmem.store.recall import RecallRow


def row(n: int) -> RecallRow:
    body = f"step {n} of the deploy needs its own fixture file and a clean database " * 2
    return RecallRow("lesson", f"Deploy lesson number {n}", body, "user", 0, False, f"m{n}", 0)


def test_recall_shrinks_then_stops_when_the_sessions_budget_is_spent(tmp_path: Path) -> None:
    home = str(tmp_path)
    budget = 1400
    start_session(home, "S", budget, brief_chars=300)
    given = []
    for prompt in range(4):
        selection = recall_for_session(home, "S", [row(prompt * 10 + n) for n in range(8)], now=0)
        given.append(len(selection.shown))
        assert selection.spent is not None and selection.spent <= budget  # never past it
    spent, kept_budget = given_so_far(home, "S") or (0, 0)
    assert kept_budget == budget and 300 < spent <= budget
    assert given[0] >= 2 and given[-1] == 0  # the first prompt gets the most; once spent, nothing more
    last = recall_for_session(home, "S", [row(99)], now=0)
    assert (last.text, last.cut) == ("", 1)  # what the budget left out is counted as cut


def test_without_a_start_the_given_or_default_budget_applies(tmp_path: Path) -> None:
    selection, remember = choose_for_session(str(tmp_path), "T", [row(1)], now=0, budget_chars=0)
    assert selection.text == "" and selection.budget == 0
    selection, remember = choose_for_session(str(tmp_path), "U", [row(1)], now=0)
    assert selection.budget == CONTEXT_BUDGET_TOKENS_DEFAULT * CHARS_PER_TOKEN
    assert len(selection.text) > len(RECALL_HEADER) + FENCE_CHARS - 100
    remember()
    assert given_so_far(str(tmp_path), "U") == (len(selection.text), selection.budget)


def test_the_hooks_keep_the_brief_and_recall_within_the_budget_the_user_set(
    orcmem_home: Path, project_dir: Path
) -> None:
    service = MemoryService.open(orcmem_home, vectors=False)
    try:
        service.settings.set_enabled(True)
        project = service.project(locate(project_dir))
        for n in range(40):
            memory = NewMemory(
                type="lesson",
                title=f"Deploy lesson {n}: the staging database",
                body=f"Step {n} of the deploy to staging needs the database migrated first and its own fixture file.",
                source=Source.USER,
            )
            service.record(project, memory, embed=False)
        service.context.set_session_budget(500)  # tokens: 2,000 characters for the brief and every recall
    finally:
        service.close()
    home = str(orcmem_home)
    payload = {"session_id": "S1", "cwd": str(project_dir)}
    brief = json.loads(handlers.session_start(payload, home))["hookSpecificOutput"]["additionalContext"]
    assert 0 < len(brief) <= 1000  # at most half: the rest is the prompts' recall
    total = len(brief)
    for _ in range(5):
        out = handlers.prompt({**payload, "prompt": "how do I deploy to staging with the database"}, home)
        total += len(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out else 0
    assert len(brief) < total <= 2000  # recall gave something, and stopped at the budget
    assert given_so_far(home, "S1") == (total, 2000)
    log = (orcmem_home / "logs" / "recall.log").read_text()
    assert f"tokens={total // CHARS_PER_TOKEN}/500" in log
