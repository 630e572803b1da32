"""GitHub Copilot CLI's events.jsonl: a real 1.0.102 session (orcmem's brief and recall in its hook records and in
the prompt's transformedContent, one `create` tool call) read into ledger events; its order, a read from an offset,
and lines no one foresaw."""

from __future__ import annotations

import json
from pathlib import Path

from orcmem.ingest.transcript import detect_agent, parse_transcript
from orcmem.models.ledger import EventKind
from orcmem.models.vocabulary import Agent

SESSION = Path(__file__).parent.parent / "fixtures" / "agents" / "copilot_events_1.0.102.jsonl"
PROMPT = "Why does cargo build --release fail without the lockfile? Write notes."


def test_the_real_session_is_read_in_its_order_without_orcmems_own_context() -> None:
    chunk = parse_transcript(SESSION)
    assert chunk.agent is Agent.COPILOT and chunk.skipped_lines == 0
    assert chunk.session_id == "b75e2511-b497-4628-8126-a29580735b5d" and chunk.model == "gpt-4.1"
    assert chunk.cwd == "/tmp/cpp/h2/proj"
    kinds = [(e.kind, e.role, e.name, e.is_error) for e in chunk.events]
    assert kinds == [
        (EventKind.MESSAGE, "user", None, False),
        (EventKind.TOOL_STARTED, None, "create", False),
        (EventKind.FILE_CHANGED, None, "write", False),
        (EventKind.TOOL_COMPLETED, None, "create", False),
        (EventKind.MESSAGE, "assistant", None, False),
    ]
    assert chunk.events[0].text == PROMPT  # the person's words, not what the model got
    assert chunk.events[2].text == "/tmp/cpp/h2/proj/notes.md"
    assert chunk.events[4].text == "It printed hello."
    assert chunk.turns == 1
    assert all("orcmem-context" not in e.text and "system_reminder" not in e.text for e in chunk.events)
    assert "orcmem-context" in SESSION.read_text()  # it was there to be left out


def test_it_is_told_from_the_other_agents_by_its_first_line_even_cut_short() -> None:
    first = SESSION.read_bytes().split(b"\n", 1)[0]
    assert detect_agent(first + b"\n") is Agent.COPILOT
    assert detect_agent(first[:40]) is Agent.COPILOT


def test_read_from_an_offset_it_takes_only_the_new_lines() -> None:
    lines = SESSION.read_bytes().splitlines(keepends=True)
    head = sum(len(line) for line in lines[:5])  # up to the prompt
    first = parse_transcript(SESSION, 0, max_bytes=head)
    rest = parse_transcript(SESSION, first.end_offset, agent=Agent.COPILOT)
    assert first.end_offset == head and [e.text for e in first.events] == [PROMPT]
    assert [e.text for e in first.events + rest.events] == [e.text for e in parse_transcript(SESSION).events]
    assert rest.turns == 0 and first.turns == 0  # the answer came in the second read: counted by the run


def test_a_failed_tool_and_an_error_are_marked_and_odd_lines_skipped(tmp_path: Path) -> None:
    base = {"id": "x", "timestamp": "2026-12-07T20:00:00.000Z", "parentId": None}
    lines = [
        {**base, "type": "session.start", "data": {"sessionId": "s1", "context": {"cwd": "/w"}}},
        {**base, "type": "user.message", "data": {"content": "run the tests"}},
        {**base, "type": "tool.execution_start", "data": {"toolCallId": "c1", "toolName": "bash", "arguments": {}}},
        {
            **base,
            "type": "tool.execution_complete",
            "data": {"toolCallId": "c1", "success": False, "error": {"message": "exit 1"}},
        },
        {**base, "type": "session.error", "data": {"message": "rate limited"}},
        {"type": "user.message", "data": "not an object"},
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + "not json\n", encoding="utf-8")
    chunk = parse_transcript(path, agent=Agent.COPILOT)
    assert [(e.kind, e.name, e.is_error, e.text) for e in chunk.events[1:]] == [
        (EventKind.TOOL_STARTED, "bash", False, ""),
        (EventKind.TOOL_COMPLETED, "bash", True, "exit 1"),
        (EventKind.MESSAGE, "error", True, "rate limited"),
    ]
    assert chunk.skipped_lines == 2 and chunk.turns == 0
