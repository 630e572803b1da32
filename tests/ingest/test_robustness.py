"""Bad input never raises: malformed, unknown and odd lines are counted and skipped; huge texts are cut."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orcmem.ingest import common
from orcmem.ingest.claude import parse_claude
from orcmem.ingest.codex import parse_codex
from orcmem.ingest.common import cut_text, time_ms
from orcmem.ingest.transcript import detect_agent, parse_transcript
from orcmem.models.constants import MAX_EVENT_TEXT
from orcmem.models.errors import NotFoundError
from orcmem.models.ledger import EventKind
from orcmem.models.vocabulary import Agent
from tests.ingest.support import (
    c_assistant,
    c_user,
    fixture,
    jsonl,
    text,
    tool_result,
    tool_use,
    x_agent,
    x_call,
    x_line,
    x_output,
    x_user,
)

PARSERS = [parse_claude, parse_codex]


def test_malformed_and_unknown_claude_lines_are_counted_and_skipped() -> None:
    good = jsonl(c_user("hello", "u1"), c_assistant("m1", [text("hi")], "a1"))
    bad = b"\n".join(
        [
            b"{not json",
            b"[1, 2, 3]",
            b'"a string"',
            b"\xff\xfe\x00garbage",
            b'{"type": "brand-new-record", "x": 1}',
            b'{"no_type": true}',
            b'{"type": "user"}',  # no message
            b'{"type": "assistant", "message": {"content": 7}}',
            b'{"type": "attachment"}',
            b'{"type": "custom-title"}',
            b"[" * 100_000,
        ]
    )
    data = good[: good.index(b"\n") + 1] + bad + b"\n\n   \n" + good[good.index(b"\n") + 1 :]
    chunk = parse_claude(data)
    assert [(e.role, e.text) for e in chunk.events] == [("user", "hello"), ("assistant", "hi")]
    assert chunk.skipped_lines == 11  # blank lines are not counted
    assert chunk.end_offset == len(data)
    assert chunk.turns == 1


def test_malformed_and_unknown_codex_lines_are_counted_and_skipped() -> None:
    data = b"\n".join(
        [
            json.dumps(x_user("hello")).encode(),
            b"{truncated",
            b"42",
            b'{"type": "session_meta"}',  # no payload
            b'{"type": "response_item", "payload": "not an object"}',
            b'{"type": "future_record", "payload": {}}',
            json.dumps(x_line("response_item", {"type": "function_call", "arguments": "{}"})).encode(),  # no name
            json.dumps(x_line("event_msg", {"type": "user_message", "message": None})).encode(),
            json.dumps(x_line("response_item", {"type": "function_call_output"})).encode(),  # no call id, no output
            json.dumps(x_agent("hi")).encode(),
            b"",
        ]
    )
    chunk = parse_codex(data)
    assert [(e.role, e.text) for e in chunk.events] == [("user", "hello"), ("assistant", "hi")]
    assert chunk.skipped_lines == 8


def test_a_huge_tool_output_and_message_are_cut_to_the_limit() -> None:
    huge = "x" * 100_000
    claude = parse_claude(
        jsonl(
            c_user("y" * 50_000, "u1"),
            c_assistant("m1", [tool_use("t1", "Bash", {})], "a1"),
            c_user([tool_result("t1", huge)], "u2"),
            c_assistant("m2", [text("z" * 6000)], "a2"),
            c_assistant("m2", [text("z" * 6000)], "a3"),  # merged, then cut
        )
    )
    codex = parse_codex(jsonl(x_call("shell", "c1", {}), x_output("c1", huge), x_agent("w" * 20_000)))
    for event in claude.events + codex.events:
        assert len(event.text) <= MAX_EVENT_TEXT
    output = next(e for e in claude.events if e.kind is EventKind.TOOL_COMPLETED)
    assert output.text.startswith("x" * 8000)
    kept = output.text.index("…")
    assert output.text[kept:] == f"…[cut {100_000 - kept} characters]"
    assert len(output.text) == MAX_EVENT_TEXT
    merged = [e for e in claude.events if e.message_id == "m2"]
    assert len(merged) == 1 and merged[0].text.endswith("characters]")


def test_cut_text_counts_what_it_cut() -> None:
    assert cut_text("short") == "short"
    assert cut_text("a" * MAX_EVENT_TEXT) == "a" * MAX_EVENT_TEXT
    cut = cut_text("a" * (MAX_EVENT_TEXT + 1))
    assert len(cut) == MAX_EVENT_TEXT
    assert cut.endswith(f"…[cut {MAX_EVENT_TEXT + 1 - cut.index('…')} characters]")
    assert cut_text("ok \ud800 lone surrogate") == "ok ? lone surrogate"


def test_times_become_epoch_milliseconds() -> None:
    assert time_ms("2026-08-20T10:21:54.344Z") == 1787221314344
    assert time_ms("2026-08-20T12:21:54.344+02:00") == 1787221314344
    assert time_ms("2026-08-20T10:21:54.344") == 1787221314344  # no zone: UTC
    assert time_ms("2025-10-29T00:59:38.317123456Z") == 1761699578317
    for missing in (None, "", "yesterday", 1787221314, "1969-12-31T00:00:00Z", ["2026-08-20"]):
        assert time_ms(missing) == 0
    events = parse_claude(jsonl({**c_user("no time", "u1"), "timestamp": "not a time"})).events
    assert events[0].at == 0


def test_the_safety_net_counts_a_handler_failure_as_a_skipped_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(common, "RECORD_ERRORS", (Exception,))

    def broken(record: dict[str, Any], state: object) -> bool:
        raise KeyError("an unforeseen shape")

    monkeypatch.setattr("orcmem.ingest.claude._handle", broken)
    chunk = parse_claude(fixture("claude_transcript_sample.jsonl"))
    assert (chunk.events, chunk.skipped_lines) == ([], 11)


def test_detect_agent() -> None:
    claude = fixture("claude_transcript_sample.jsonl")
    codex_legacy = fixture("codex_rollout_sample_legacy_0.46.jsonl")
    codex_2026 = fixture("codex_rollout_lines_2026.jsonl")
    assert detect_agent(claude) is Agent.CLAUDE
    assert detect_agent(claude[:300]) is Agent.CLAUDE  # the first line cut short
    assert detect_agent(fixture("claude_transcript_extra_records.jsonl")[:120]) is Agent.CLAUDE
    assert detect_agent(codex_legacy) is Agent.CODEX
    assert detect_agent(codex_2026[:200]) is Agent.CODEX
    paginated = codex_2026.splitlines(keepends=True)[5]
    assert detect_agent(paginated[:90]) is Agent.CODEX  # with the top-level "ordinal"
    assert detect_agent(jsonl({"type": "summary", "summary": "t", "leafUuid": "x"})) is Agent.CLAUDE
    for unknown in (b"", b"\n\n", b"hello world", b'{"type":"thread.started","thread_id":"x"}\n', b"\xff" * 50):
        assert detect_agent(unknown) is None


def test_parse_transcript_detects_the_agent_or_takes_it(tmp_path: Path) -> None:
    codex_file = tmp_path / "session.jsonl"
    codex_file.write_bytes(fixture("codex_rollout_sample_legacy_0.46.jsonl"))
    assert parse_transcript(codex_file).agent is Agent.CODEX
    assert parse_transcript(str(codex_file), agent=Agent.CODEX).turns == 1
    forced = parse_transcript(codex_file, agent=Agent.CLAUDE)
    assert (forced.agent, forced.events, forced.skipped_lines) == (Agent.CLAUDE, [], 10)
    empty_rollout = tmp_path / "rollout-2026-01-01T00-00-00-abc.jsonl"
    empty_rollout.write_bytes(b"")
    assert parse_transcript(empty_rollout).agent is Agent.CODEX
    empty = tmp_path / "abc.jsonl"
    empty.write_bytes(b"")
    assert (parse_transcript(empty).agent, parse_transcript(empty).end_offset) == (Agent.CLAUDE, 0)
    with pytest.raises(NotFoundError):
        parse_transcript(tmp_path / "missing.jsonl")


# --- properties -----------------------------------------------------------------------------------------------

# Keys and values the parsers look at, so random records reach deep into the handlers.
KEYS = [
    "type", "subtype", "message", "content", "role", "id", "text", "name", "input", "tool_use_id", "is_error",
    "isSidechain", "isMeta", "isCompactSummary", "isApiErrorMessage", "error", "uuid", "timestamp", "sessionId",
    "cwd", "model", "attachment", "prompt", "commandMode", "origin", "kind", "compactMetadata", "trigger",
    "customTitle", "aiTitle", "summary", "payload", "call_id", "arguments", "output", "metadata", "exit_code",
    "success", "source", "subagent", "session_id", "file_path", "notebook_path", "action",
]  # fmt: skip
VALUES = [
    "user", "assistant", "system", "attachment", "summary", "custom-title", "ai-title", "compact_boundary", "text",
    "tool_use", "tool_result", "thinking", "image", "queued_command", "hook_additional_context", "prompt", "human",
    "Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch", "<synthetic>", "session_meta", "response_item",
    "event_msg", "turn_context", "compacted", "message", "function_call", "function_call_output",
    "custom_tool_call", "custom_tool_call_output", "local_shell_call", "user_message", "agent_message", "output_text",
    "plain", "2026-08-20T10:21:54.344Z", "*** Begin Patch\n*** Update File: a.py\n*** End Patch",
    '{"output": "x", "metadata": {"exit_code": 1}}', "Exit code: 3\nOutput:\n", "<orcmem-context>x</orcmem-context>",
    "<orcmem-context", "<command-name>/x</command-name><command-args>y</command-args>", "\ud800",
]  # fmt: skip
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.sampled_from(VALUES),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.sampled_from(KEYS), children, max_size=6),
    max_leaves=25,
)
records = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=8)

# Real and synthetic records of every handled shape; mutating them reaches the deepest branches.
TEMPLATES: list[Any] = [
    json.loads(line)
    for name in (
        "claude_transcript_sample.jsonl",
        "claude_transcript_extra_records.jsonl",
        "codex_rollout_sample_legacy_0.46.jsonl",
        "codex_rollout_lines_2026.jsonl",
    )
    for line in fixture(name).splitlines()
] + [
    c_user([tool_result("t1", [text("out"), {"type": "image"}], True), text("and also")], "u1"),
    c_assistant("m1", [text("hi"), tool_use("t1", "Edit", {"file_path": "/a", "notebook_path": "/b"})], "a1"),
    {"type": "attachment", "attachment": {"type": "queued_command", "prompt": "p", "origin": {"kind": "human"}}},
    {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"trigger": "auto"}},
    {"type": "custom-title", "customTitle": "t"},
    x_call("apply_patch", "c1", {"input": "*** Begin Patch\n*** Add File: a.py\n*** End Patch"}),
    x_output("c1", '{"output": "ok", "metadata": {"exit_code": 0}}'),
    x_output("c2", {"output": "ok", "success": False}),
    x_line("event_msg", {"type": "error", "message": "boom"}),
    x_line("compacted", {"message": "summary"}),
    x_line("session_meta", {"id": "x", "source": {"subagent": {}}}),
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict) and head in value:
        return {**value, head: _replace(value[head], rest, new)}
    if isinstance(value, list) and isinstance(head, int) and head < len(value):
        return [*value[:head], _replace(value[head], rest, new), *value[head + 1 :]]
    return value


@st.composite
def mutated_records(draw: st.DrawFn) -> Any:
    """A template record with one to three of its values (or keys' values at any depth) replaced."""
    record = draw(st.sampled_from(TEMPLATES))
    paths = _paths(record)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        record = _replace(record, draw(st.sampled_from(paths)), draw(json_values))
    return record


def _encode(value: object) -> bytes:
    return json.dumps(value).encode()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=400), offset=st.integers(min_value=-5, max_value=500))
def test_arbitrary_bytes_never_raise(data: bytes, offset: int) -> None:
    for parse in PARSERS:
        chunk = parse(data, offset)
        assert chunk.end_offset >= max(offset, 0)
        assert chunk.skipped_lines >= 0
    detect_agent(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(mutated_records() | records | json_values, max_size=8),
    offset=st.integers(min_value=0, max_value=200),
)
def test_arbitrary_json_lines_never_raise(lines: list[object], offset: int) -> None:
    data = b"\n".join(_encode(line) for line in lines) + b"\n"
    for parse in PARSERS:
        chunk = parse(data, 0)
        assert chunk.end_offset == len(data)
        assert chunk.skipped_lines <= len(lines)
        for event in chunk.events:
            assert len(event.text) <= MAX_EVENT_TEXT
            event.text.encode("utf-8")  # storable as UTF-8
        parse(data, offset)
    detect_agent(data)


# --- a long session ---------------------------------------------------------------------------------------------


def claude_session(turns: int) -> bytes:
    """A synthetic Claude session of 5 events per turn: a prompt, a message split over thinking/text/Write lines
    (message, tool.started, file.changed) and the tool's result."""
    records = []
    for turn in range(turns):
        second = turn % 3000
        records += [
            c_user(f"prompt {turn}", f"u{turn}", second),
            c_assistant(f"m{turn}", [{"type": "thinking", "thinking": "...", "signature": "s"}], f"a{turn}t", second),
            c_assistant(f"m{turn}", [text(f"working on {turn}")], f"a{turn}x", second),
            c_assistant(
                f"m{turn}", [tool_use(f"t{turn}", "Write", {"file_path": f"/p/f{turn}.py"})], f"a{turn}c", second
            ),
            c_user([tool_result(f"t{turn}", f"wrote f{turn}.py " + "o" * 200)], f"r{turn}", second),
        ]
    return jsonl(*records)


def test_a_5000_event_transcript_parses_correctly() -> None:
    data = claude_session(1000)
    chunk = parse_claude(data)
    per_turn = ["message.completed", "message.completed", "tool.started", "file.changed", "tool.completed"]
    assert len(chunk.events) == 5000
    assert [e.kind.value for e in chunk.events] == per_turn * 1000
    assert chunk.turns == 1000
    assert chunk.skipped_lines == 0
    assert chunk.end_offset == len(data)
    last = chunk.events[-5:]
    assert [(e.role, e.text) for e in last[:2]] == [("user", "prompt 999"), ("assistant", "working on 999")]
    assert (last[2].name, last[3].name, last[3].text) == ("Write", "write", "/p/f999.py")
    assert (last[4].name, last[4].tool_call_id, last[4].is_error) == ("Write", "t999", False)
    ends = [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    halves = parse_claude(data[: ends[2499]]), parse_claude(data, ends[2499])
    assert halves[0].events + halves[1].events == chunk.events  # cut between two turns: no difference


def test_a_transcript_is_read_a_slice_at_a_time_and_a_giant_line_is_skipped(tmp_path) -> None:
    import json as _json

    from orcmem.ingest.transcript import parse_transcript
    from orcmem.models.vocabulary import Agent

    lines = [
        {"type": "user", "uuid": f"u{i}", "message": {"role": "user", "content": f"prompt {i} " + "x" * 300}}
        for i in range(40)
    ]
    path = tmp_path / "session.jsonl"
    with path.open("w") as handle:
        for index, line in enumerate(lines):
            handle.write(_json.dumps(line) + "\n")
            if index == 20:  # one line far longer than a slice
                handle.write(_json.dumps({"type": "user", "message": {"content": "y" * 50_000}}) + "\n")
    whole = parse_transcript(path, 0, Agent.CLAUDE, max_bytes=10**9)
    offset, events, skipped, slices = 0, [], 0, 0
    while True:
        chunk = parse_transcript(path, offset, Agent.CLAUDE, max_bytes=4096)
        events += chunk.events
        skipped += chunk.skipped_lines
        offset, slices = chunk.end_offset, slices + 1
        if not chunk.more:
            break
    assert slices >= 5 and offset == path.stat().st_size
    assert [e.text for e in events] == [e.text for e in whole.events if len(e.text) < 1000]
    assert skipped == 1  # the giant line, counted and never held whole
