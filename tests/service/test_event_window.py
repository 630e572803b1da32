"""The digest's event window: the newest events of the readable kinds, and the opening request put back."""

from __future__ import annotations

from pathlib import Path

from orcmem.host.workspace import locate
from orcmem.models.constants import EXTRACTION_EVENT_LIMIT
from orcmem.models.ledger import EventKind, LedgerEvent
from orcmem.service.learning import Learning
from orcmem.service.memory_service import MemoryService


def user(text: str) -> LedgerEvent:
    return LedgerEvent(EventKind.MESSAGE, 0, role="user", text=text)


def agent(text: str) -> LedgerEvent:
    return LedgerEvent(EventKind.MESSAGE, 0, role="assistant", text=text)


def tool(output: str) -> LedgerEvent:
    return LedgerEvent(EventKind.TOOL_COMPLETED, 0, name="Bash", text=output)


def stored_run(service: MemoryService, project_dir: Path, events: list[LedgerEvent]) -> str:
    project = service.project(locate(str(project_dir)))
    assert project is not None
    run = service.store.runs.for_session(
        project_id=project.id, agent="claude", session_id="s", transcript_path=None, cwd=None, now=1
    )
    assert service.store.runs.append(run.id, events, offset=1, turns=1, skipped=0, model=None, title=None, now=1)
    return run.id


def test_the_window_keeps_the_readable_kinds_in_order(service: MemoryService, project_dir: Path) -> None:
    events = [user("a"), LedgerEvent(EventKind.COMPACTION, 0), tool("x"), agent("b")]
    run_id = stored_run(service, project_dir, events)
    window = service.store.runs.events(run_id, newest=10)
    assert [(e.kind, e.text) for e in window] == [(e.kind, e.text) for e in (events[0], events[2], events[3])]
    assert [e.text for e in service.store.runs.events(run_id, newest=2)] == ["x", "b"]


def test_the_opening_request_is_looked_for_among_the_first_50_messages(
    service: MemoryService, project_dir: Path
) -> None:
    late = stored_run(service, project_dir, [agent(f"m{i}") for i in range(50)] + [user("late")])
    assert service.store.runs.opening_request(late) is None
    service.store.runs.delete(late)
    early = stored_run(service, project_dir, [agent(f"m{i}") for i in range(49)] + [tool("x"), user("early")])
    opening = service.store.runs.opening_request(early)
    assert opening is not None and opening.text == "early"


def test_a_first_pass_over_a_long_run_gets_its_opening_request_back(service: MemoryService, project_dir: Path) -> None:
    events = [agent("hello"), user("the original request")] + [tool(str(i)) for i in range(EXTRACTION_EVENT_LIMIT)]
    run_id = stored_run(service, project_dir, events)
    learning = Learning(service)
    run = service.store.runs.get(run_id)
    assert run is not None
    window = learning._new_events(run, service.store.runs.max_seq(run_id))
    assert len(window) == EXTRACTION_EVENT_LIMIT + 1
    assert window[0].text == "the original request" and window[-1].text == str(EXTRACTION_EVENT_LIMIT - 1)
    short = [e.text for e in learning._new_events(run, 10)]  # the request sits inside a short window: once
    assert short.count("the original request") == 1
