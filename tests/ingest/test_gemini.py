"""Gemini CLI session files: a real 0.61 session (orcmem's brief in front of its prompt), then synthetic tool-call
lines in the shape 0.61 records (tests/fixtures/agents/README.md says which lines are which)."""

from __future__ import annotations

from pathlib import Path

from orcmem.ingest.transcript import parse_transcript
from orcmem.models.ledger import EventKind
from orcmem.models.vocabulary import Agent

SESSION = Path(__file__).parent.parent / "fixtures" / "agents" / "gemini_session_0.61.jsonl"
REAL_LINES = 6


def test_the_real_session_is_told_from_claude_codes_and_read_without_the_brief(tmp_path: Path) -> None:
    real = tmp_path / "session.jsonl"
    real.write_bytes(b"".join(SESSION.read_bytes().splitlines(keepends=True)[:REAL_LINES]))
    chunk = parse_transcript(real)
    assert chunk.agent is Agent.GEMINI and chunk.skipped_lines == 0
    assert chunk.session_id == "6d051ff8-c2f5-4105-866d-14dfe937d749" and chunk.model == "gemini-2.5-flash"
    messages = [(e.role, e.text) for e in chunk.events]
    assert messages == [
        ("user", "Why does cargo build --release fail here without the Cargo.lock lockfile committed?"),
        ("assistant", "It printed hello."),
    ]
    assert chunk.turns == 1


def test_tool_calls_written_twice_count_once_with_their_files_and_failures() -> None:
    chunk = parse_transcript(SESSION)
    kinds = [(e.kind, e.name, e.is_error) for e in chunk.events[2:]]
    assert kinds == [
        (EventKind.MESSAGE, None, False),  # the second prompt
        (EventKind.TOOL_STARTED, "write_file", False),
        (EventKind.FILE_CHANGED, "write", False),
        (EventKind.TOOL_COMPLETED, "write_file", False),
        (EventKind.TOOL_STARTED, "run_shell_command", False),
        (EventKind.TOOL_COMPLETED, "run_shell_command", True),
        (EventKind.MESSAGE, None, False),  # the final reply; the info note is no message
    ]
    assert chunk.events[4].text == "/tmp/gtry/proj/build.sh"
    assert chunk.turns == 2


def test_read_from_an_offset_it_takes_only_the_new_lines() -> None:
    first = parse_transcript(SESSION, 0, max_bytes=len(b"".join(SESSION.read_bytes().splitlines(True)[:REAL_LINES])))
    rest = parse_transcript(SESSION, first.end_offset)
    assert [e.text for e in first.events] + [e.text for e in rest.events] == [
        e.text for e in parse_transcript(SESSION).events
    ]
    assert rest.agent is Agent.GEMINI and rest.events[0].text == "Add the lockfile check to the build script"
