"""Reading a growing transcript chunk by chunk gives the same events as reading it once."""

from __future__ import annotations

from pathlib import Path

import pytest

from orcmem.ingest.claude import parse_claude
from orcmem.ingest.codex import parse_codex
from orcmem.ingest.transcript import parse_transcript
from orcmem.models.ledger import EventKind
from orcmem.models.vocabulary import Agent
from tests.ingest.support import (
    Parser,
    c_assistant,
    c_user,
    events_of,
    fixture,
    jsonl,
    line_ends,
    parse_in_chunks,
    text,
    tool_result,
    tool_use,
    undo_chunk_effects,
    x_agent,
    x_call,
    x_item_message,
    x_meta,
    x_output,
    x_user,
)

# Synthetic sessions with what a chunk boundary can cut: a Claude message whose text blocks span lines, a Codex
# answer written twice, a call and its result, a subagent's session_meta.
CLAUDE_SESSION = jsonl(
    c_user("first prompt", "u1", 1),
    c_assistant("msg_A", [text("part one")], "a1", 2),
    c_assistant("msg_A", [tool_use("t1", "Edit", {"file_path": "/p/a.py"})], "a2", 3),
    c_user([tool_result("t1", "edited")], "u2", 4),
    c_assistant("msg_B", [text("part two")], "a3", 5),
    c_assistant("msg_B", [text("part three")], "a4", 6),
    {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"trigger": "auto"}},
    c_user("second prompt", "u3", 7),
    c_assistant("msg_C", [text("final")], "a5", 8),
)
CODEX_SESSION = jsonl(
    x_meta(source={"subagent": {"thread_spawn": {"depth": 1}}}),
    x_user("fix it", 1),
    x_call("shell", "call_1", {"command": ["ls"]}, 2),
    x_output("call_1", "Exit code: 1\nOutput:\nno such file", 3),
    x_agent("fixed", 4),
    x_item_message("assistant", "fixed", 5),
    x_user("thanks", 6),
    x_item_message("assistant", "welcome", 7),
    x_agent("welcome", 8),
)

CASES: list[tuple[str, Parser, bytes]] = [
    ("claude sample", parse_claude, fixture("claude_transcript_sample.jsonl")),
    ("claude extra records", parse_claude, fixture("claude_transcript_extra_records.jsonl")),
    ("claude synthetic", parse_claude, CLAUDE_SESSION),
    ("codex legacy", parse_codex, fixture("codex_rollout_sample_legacy_0.46.jsonl")),
    ("codex 2026", parse_codex, fixture("codex_rollout_lines_2026.jsonl")),
    ("codex synthetic", parse_codex, CODEX_SESSION),
]


@pytest.mark.parametrize(("name", "parse", "data"), CASES, ids=[case[0] for case in CASES])
def test_every_line_boundary_and_a_mid_line_cut(name: str, parse: Parser, data: bytes) -> None:
    whole = parse(data, 0)
    ends = line_ends(data)
    for index, cut in enumerate(ends[:-1]):
        middle = (cut + ends[index + 1]) // 2  # a cut inside the next line: that line waits for the next call
        for cuts in ([cut], [middle], [cut, middle]):
            chunks = parse_in_chunks(parse, data, cuts)
            assert chunks[0].end_offset == cut, cuts
            events = events_of(chunks)
            # the only differences allowed are the documented ones, and they undo exactly
            assert undo_chunk_effects(events) == undo_chunk_effects(whole.events), cuts
            assert sum(c.skipped_lines for c in chunks) == whole.skipped_lines
    every_line = parse_in_chunks(parse, data, ends[:-1])
    assert undo_chunk_effects(events_of(every_line)) == undo_chunk_effects(whole.events)


def test_chunks_differ_only_where_documented() -> None:
    # a tool result whose call was read in an earlier chunk has no name (the call's id still links them)
    data = fixture("claude_transcript_sample.jsonl")
    ends = line_ends(data)
    chunks = parse_in_chunks(parse_claude, data, [ends[6]])  # the call on line 7, its result on line 8
    result = chunks[1].events[0]
    assert (result.kind, result.name, result.tool_call_id) == (
        EventKind.TOOL_COMPLETED,
        None,
        "toolu_01CAFZGHQyrx8WTjhhDvCQMm",
    )
    assert chunks[0].events[-1].tool_call_id == result.tool_call_id
    for parse, name in [
        (parse_claude, "claude_transcript_extra_records.jsonl"),
        (parse_codex, "codex_rollout_lines_2026.jsonl"),
    ]:
        data = fixture(name)
        assert events_of(parse_in_chunks(parse, data, line_ends(data)[:-1])) == parse(data, 0).events


def test_a_claude_message_split_across_chunks_comes_out_in_two_parts() -> None:
    cut = CLAUDE_SESSION.index(b'"uuid":"a4"')
    cut = CLAUDE_SESSION.rfind(b"\n", 0, cut) + 1
    first, second = parse_in_chunks(parse_claude, CLAUDE_SESSION, [cut])
    assert [(e.text, e.message_id) for e in first.events if e.role == "assistant"][-1] == ("part two", "msg_B")
    assert [(e.text, e.message_id) for e in second.events if e.role == "assistant"][0] == ("part three", "msg_B")
    whole = parse_claude(CLAUDE_SESSION, 0)
    assert ("part two\n\npart three", "msg_B") in [(e.text, e.message_id) for e in whole.events]


def test_a_codex_answer_twin_across_chunks_comes_out_twice() -> None:
    cut = CODEX_SESSION.index(
        b'"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"fixed"'
    )
    cut = CODEX_SESSION.rfind(b"\n", 0, cut) + 1
    chunks = parse_in_chunks(parse_codex, CODEX_SESSION, [cut])
    assert [e.text for e in events_of(chunks) if e.role == "assistant"] == ["fixed", "fixed", "welcome"]
    assert [e.text for e in parse_codex(CODEX_SESSION, 0).events if e.role == "assistant"] == ["fixed", "welcome"]


def test_a_later_codex_chunk_keeps_the_session_from_the_first_line() -> None:
    first_line_end = line_ends(CODEX_SESSION)[0]
    for chunk in parse_in_chunks(parse_codex, CODEX_SESSION, line_ends(CODEX_SESSION)[1:-1]):
        assert chunk.session_id == "01a0bb38-9ec1-7223-8914-2cd28c52a22f"
        assert all(event.sidechain for event in chunk.events)
    assert parse_codex(CODEX_SESSION, first_line_end).cwd == "/home/dev/project"


def test_a_partly_written_last_line_is_left_for_next_time() -> None:
    data = fixture("claude_transcript_sample.jsonl")
    ends = line_ends(data)
    partial = data[: ends[2] + 40]
    chunk = parse_claude(partial)
    assert chunk.end_offset == ends[2]
    assert chunk.skipped_lines == 0
    assert [e.role for e in chunk.events] == ["user"]
    again = parse_claude(partial, chunk.end_offset)  # nothing new was written yet
    assert (again.events, again.end_offset, again.skipped_lines) == ([], ends[2], 0)
    no_newline = parse_claude(data.rstrip(b"\n"))  # a last line without its newline is not complete yet
    assert no_newline.end_offset == ends[-2]


def test_offsets_past_the_end_read_nothing() -> None:
    data = fixture("codex_rollout_sample_legacy_0.46.jsonl")
    chunk = parse_codex(data, len(data) + 10)
    assert (chunk.events, chunk.end_offset, chunk.skipped_lines) == ([], len(data) + 10, 0)
    assert parse_codex(b"", 0).end_offset == 0


def test_a_growing_file_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "9c42ba52.jsonl"
    data = fixture("claude_transcript_sample.jsonl")
    ends = line_ends(data)
    path.write_bytes(data[: ends[4] + 25])  # five lines and the start of the sixth
    first = parse_transcript(path)
    assert first.agent is Agent.CLAUDE
    assert first.end_offset == ends[4]
    with path.open("ab") as file:
        file.write(data[ends[4] + 25 :])
    second = parse_transcript(path, first.end_offset)
    assert first.events + second.events == parse_claude(data).events
    assert second.end_offset == len(data)
    assert parse_transcript(path, second.end_offset).events == []


def test_a_growing_codex_rollout_on_disk_keeps_its_header(tmp_path: Path) -> None:
    path = tmp_path / "rollout-2026-09-19T19-50-45-01a0bb38.jsonl"
    ends = line_ends(CODEX_SESSION)
    path.write_bytes(CODEX_SESSION[: ends[2]])
    first = parse_transcript(path)
    with path.open("ab") as file:
        file.write(CODEX_SESSION[ends[2] :])
    second = parse_transcript(path, first.end_offset)
    assert first.agent is second.agent is Agent.CODEX
    assert second.session_id == first.session_id == "01a0bb38-9ec1-7223-8914-2cd28c52a22f"
    assert all(event.sidechain for event in second.events)
    assert second.events[0].kind is EventKind.TOOL_COMPLETED
    assert second.events[0].name is None  # its call was in the earlier chunk; the digest matches it by id
    assert second.events[0].tool_call_id == "call_1"
