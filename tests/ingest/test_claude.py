"""Claude Code transcripts: the real samples, then synthetic records in the same shapes."""

from __future__ import annotations

from orcmem.agent_context.recall import fence
from orcmem.ingest.claude import parse_claude
from orcmem.models.constants import CONTEXT_TAG
from orcmem.models.ledger import EventKind, LedgerEvent
from orcmem.models.vocabulary import Agent
from tests.ingest.support import (
    SESSION,
    c_assistant,
    c_user,
    fixture,
    jsonl,
    stamp_ms,
    text,
    tool_result,
    tool_use,
)

M = EventKind.MESSAGE


def kinds(events: list[LedgerEvent]) -> list[str]:
    return [event.kind.value for event in events]


# --- the real samples ------------------------------------------------------------------------------------------


def test_the_real_session_sample() -> None:
    data = fixture("claude_transcript_sample.jsonl")
    chunk = parse_claude(data)
    assert chunk.agent is Agent.CLAUDE
    assert kinds(chunk.events) == [
        "message.completed",
        "message.completed",
        "tool.started",
        "tool.completed",
        "message.completed",
    ]
    prompt, said, call, result, answer = chunk.events
    assert prompt.role == "user"
    assert prompt.text.startswith("Run the bash command 'echo hello' using your Bash tool.")
    assert prompt.message_id == "67b1d4bf-d297-40a0-a041-0474e3d96886"
    assert prompt.at == 1787221314344  # 2026-08-20T10:21:54.344Z
    # lines 5-7 are one API message (thinking, text, tool_use): one message event, the thinking left out
    assert said.role == "assistant"
    assert said.text == "I'll run that bash command for you."
    assert said.message_id == "msg_011CeDqKnDd2qP37QdkC5nGR"
    assert [e.message_id for e in chunk.events if e.role == "assistant"].count("msg_011CeDqKnDd2qP37QdkC5nGR") == 1
    assert (call.name, call.tool_call_id, call.text) == ("Bash", "toolu_01CAFZGHQyrx8WTjhhDvCQMm", "")
    assert (result.name, result.tool_call_id, result.text, result.is_error) == (
        "Bash",
        "toolu_01CAFZGHQyrx8WTjhhDvCQMm",
        "hello",
        False,
    )
    assert answer.text.startswith("Yes, I received a mid-run feedback message.")
    assert "ZEBRA7739" in answer.text
    assert answer.message_id == "msg_011CeDqM4fc8gXHBvHTN5Np2"
    assert not any(event.sidechain or event.is_error for event in chunk.events)
    assert chunk.session_id == "9c42ba52-3bf1-449f-a040-8ee33284a1c8"
    assert chunk.cwd == "C:\\Users\\<user>\\CLEANROOM"
    assert chunk.model == "claude-haiku-4-5-20251001"
    assert chunk.title is None
    assert chunk.turns == 1
    assert chunk.skipped_lines == 0
    assert chunk.end_offset == len(data)


def test_the_real_extra_records() -> None:
    chunk = parse_claude(fixture("claude_transcript_extra_records.jsonl"))
    assert kinds(chunk.events) == ["message.completed", "compaction", "tool.started"]
    error, compaction, artifact = chunk.events
    # the synthetic rate-limit record stays, flagged, so extraction can tell it from what the agent said
    assert error.role == "assistant"
    assert error.is_error is True
    assert error.name == "rate_limit"
    assert error.text.startswith("You've reached your Fable 5 limit.")
    assert compaction.name == "manual"
    assert compaction.at == 1784080014839
    # the isCompactSummary recap is not a user prompt; the Artifact tool writes no file.changed
    assert not any(event.role == "user" for event in chunk.events)
    assert (artifact.name, artifact.tool_call_id) == ("Artifact", "toolu_01KFHHG1ptbGeZQK3epbQxhX")
    assert chunk.model == "claude-fable-5"  # "<synthetic>" is never the session's model
    assert chunk.turns == 0
    assert chunk.skipped_lines == 0


# --- synthetic records ------------------------------------------------------------------------------------------


def test_text_blocks_of_one_api_message_merge_into_one_event() -> None:
    data = jsonl(
        c_user("explain the cache", "u1", 1),
        c_assistant("msg_A", [{"type": "thinking", "thinking": "hmm", "signature": "x"}], "a1", 2),
        c_assistant("msg_A", [text("First part.")], "a2", 3),
        c_assistant("msg_A", [tool_use("toolu_1", "Read", {"file_path": "/p/cache.py"})], "a3", 4),
        c_assistant("msg_A", [text("Second part.")], "a4", 5),
        c_assistant("msg_B", [text("Another message.")], "a5", 6),
    )
    events = parse_claude(data).events
    assert kinds(events) == ["message.completed", "message.completed", "tool.started", "message.completed"]
    merged = events[1]
    assert merged.text == "First part.\n\nSecond part."
    assert merged.message_id == "msg_A"
    assert merged.at == stamp_ms(3)  # where its first text block was written
    assert events[3].text == "Another message."


def test_tool_results_match_their_calls_and_keep_errors_and_block_text() -> None:
    data = jsonl(
        c_user("run the tests", "u1"),
        c_assistant("msg_A", [tool_use("toolu_1", "Bash", {"command": "pytest -q", "secret": "s3cr3t"})], "a1"),
        c_user([tool_result("toolu_1", [text("3 failed"), {"type": "image", "source": {}}], True)], "u2"),
        c_user([tool_result("toolu_unknown", "orphan output")], "u3"),
    )
    events = parse_claude(data).events
    assert kinds(events) == ["message.completed", "tool.started", "tool.completed", "tool.completed"]
    failed, orphan = events[2], events[3]
    assert (failed.name, failed.text, failed.is_error) == ("Bash", "3 failed\n[image]", True)
    assert (orphan.name, orphan.tool_call_id, orphan.text, orphan.is_error) == (
        None,
        "toolu_unknown",
        "orphan output",
        False,
    )
    # tool inputs are never kept
    assert all("pytest" not in e.text and "s3cr3t" not in e.text for e in events)
    assert sum(e.role == "user" for e in events) == 1  # tool results are not prompts


def test_edit_and_write_tools_record_the_changed_file_only() -> None:
    data = jsonl(
        c_assistant(
            "msg_A",
            [
                tool_use("t1", "Edit", {"file_path": "/p/a.py", "old_string": "x = 1", "new_string": "x = 2"}),
                tool_use("t2", "Write", {"file_path": "/p/new.py", "content": "print('hi')"}),
                tool_use("t3", "MultiEdit", {"file_path": "/p/b.py", "edits": [{"old_string": "a"}]}),
                tool_use("t4", "NotebookEdit", {"notebook_path": "/p/n.ipynb", "new_source": "1+1"}),
                tool_use("t5", "Read", {"file_path": "/p/c.py"}),
                tool_use("t6", "Edit", {"old_string": "no path"}),
            ],
            "a1",
        ),
    )
    events = parse_claude(data).events
    changes = [(e.name, e.text, e.tool_call_id) for e in events if e.kind is EventKind.FILE_CHANGED]
    assert changes == [
        ("edit", "/p/a.py", "t1"),
        ("write", "/p/new.py", "t2"),
        ("edit", "/p/b.py", "t3"),
        ("edit", "/p/n.ipynb", "t4"),
    ]
    assert [e.name for e in events if e.kind is EventKind.TOOL_STARTED] == [
        "Edit",
        "Write",
        "MultiEdit",
        "NotebookEdit",
        "Read",
        "Edit",
    ]
    assert all("x = 2" not in e.text and "print" not in e.text for e in events)


def test_sidechain_records_are_marked() -> None:
    data = jsonl(
        c_user("main prompt", "u1"),
        c_user("subagent task", "u2", sidechain=True),
        c_assistant("msg_S", [text("subagent answer"), tool_use("t1", "Grep", {})], "a1", sidechain=True),
        c_assistant("msg_M", [text("main answer")], "a2"),
    )
    chunk = parse_claude(data)
    assert [(e.text or e.name, e.sidechain) for e in chunk.events] == [
        ("main prompt", False),
        ("subagent task", True),
        ("subagent answer", True),
        ("Grep", True),
        ("main answer", False),
    ]
    assert chunk.turns == 2  # each chain's prompt got an answer in its own chain


def test_noise_is_not_a_prompt_but_a_command_with_arguments_is() -> None:
    data = jsonl(
        c_user("<local-command-caveat>Caveat: generated by local commands</local-command-caveat>", "u1", isMeta=True),
        c_user(
            "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>",
            "u2",
        ),
        c_user("<local-command-stdout></local-command-stdout>", "u3"),
        c_user(
            "<command-message>review</command-message>\n<command-name>/review</command-name>\n"
            "<command-args>PR 42</command-args>",
            "u4",
        ),
        c_user("<bash-input>ls</bash-input>", "u5"),
        c_user([text("[Request interrupted by user for tool use]")], "u6"),
        c_user("expanded skill body", "u7", isMeta=True),
        c_user("recap of everything so far", "u8", isCompactSummary=True),
        c_user("<system-reminder>the date is today</system-reminder>\nfix the flaky test", "u9"),
    )
    chunk = parse_claude(data)
    assert [e.text for e in chunk.events] == ["/review PR 42", "fix the flaky test"]
    assert chunk.skipped_lines == 0


def test_a_queued_prompt_is_a_user_prompt_and_notifications_are_not() -> None:
    data = jsonl(
        {"type": "queue-operation", "operation": "enqueue", "content": "and check the tests too", "sessionId": SESSION},
        {
            "type": "attachment",
            "uuid": "q1",
            "timestamp": "2026-08-20T10:00:05.000Z",
            "attachment": {"type": "queued_command", "prompt": "and check the tests too", "commandMode": "prompt"},
        },
        {
            "type": "attachment",
            "uuid": "q2",
            "attachment": {
                "type": "queued_command",
                "prompt": "<task-notification>done</task-notification>",
                "commandMode": "task-notification",
            },
        },
    )
    chunk = parse_claude(data)
    assert [(e.role, e.text, e.message_id) for e in chunk.events] == [("user", "and check the tests too", "q1")]
    assert chunk.skipped_lines == 0


def test_orcmem_injected_context_is_never_taken_back() -> None:
    injected = f'<{CONTEXT_TAG} kind="recall">\n- [decision] use SQLite WAL\n</orcmem-context>'
    data = jsonl(
        {
            "type": "attachment",
            "uuid": "h1",
            "sessionId": SESSION,
            "attachment": {"type": "hook_additional_context", "content": [injected], "hookName": "SessionStart"},
        },
        c_user(f"{injected}\nwhy is the test slow?", "u1"),
        c_user([text(injected)], "u2"),
        c_user(f"before {injected} after", "u3"),
        c_user(f'<{CONTEXT_TAG} kind="brief">\nunclosed fence, the rest is injected', "u4"),
        c_assistant("msg_A", [text("Looking.")], "a1"),
    )
    chunk = parse_claude(data)
    assert [(e.role, e.text) for e in chunk.events] == [
        ("user", "why is the test slow?"),
        ("user", "before  after"),
        ("assistant", "Looking."),
    ]
    assert all("WAL" not in e.text and "orcmem-context" not in e.text for e in chunk.events)
    assert chunk.skipped_lines == 0


def test_a_fence_with_an_id_is_dropped_up_to_its_own_closer() -> None:
    """A fenced output ends only at the closer with its opener's id: a plain or other-id closer inside it (text
    quoted in a memory before fences had ids) does not end it, and what follows the real closer is kept."""
    opener, closer = f'<{CONTEXT_TAG} kind="recall" id="00ff00ff00ff00ff">', f'</{CONTEXT_TAG} id="00ff00ff00ff00ff">'
    inner = f'- [lesson] a </{CONTEXT_TAG}> b </{CONTEXT_TAG} id="1111111111111111"> SECRET-WAL'
    fenced = f"{opener}\n{inner}\n{closer}"
    data = jsonl(
        c_user(f"{fenced}\nwhy is the test slow?", "u1"),
        c_user(f"before {fence('brief', ['the brief'])} after {fence('recall', ['x'])}!", "u2"),
        c_user(f"{opener}\nno closer of this id: </{CONTEXT_TAG}> the rest is injected", "u3"),
        c_assistant("m1", [tool_use("t1", "mcp__orcmem__memory_recall", {"prompt": "wal"})], "a1"),
        c_user([tool_result("t1", f"{fenced}\nend")], "u4"),
    )
    events = parse_claude(data).events
    assert [e.text for e in events if e.kind is EventKind.MESSAGE] == ["why is the test slow?", "before  after !"]
    assert [e.text for e in events if e.kind is EventKind.TOOL_COMPLETED] == ["\nend"]
    assert all("SECRET-WAL" not in e.text and CONTEXT_TAG not in e.text for e in events)


def test_orcmem_context_returned_by_a_tool_is_cut_from_its_output() -> None:
    fenced = f'<{CONTEXT_TAG} kind="search">\n- [lesson] retry the flaky test\n</orcmem-context>'
    data = jsonl(
        c_assistant("m1", [tool_use("t1", "mcp__orcmem__memory_search", {"query": "flaky"})], "a1"),
        c_user([tool_result("t1", f"2 results\n{fenced}\nend")], "u1"),
        c_user([tool_result("t2", f"source mentions <{CONTEXT_TAG} without closing it")], "u2"),
    )
    outputs = [e.text for e in parse_claude(data).events if e.kind is EventKind.TOOL_COMPLETED]
    # an unclosed marker in a tool's output (say, orcmem's own source read back) is left alone
    assert outputs == ["2 results\n\nend", f"source mentions <{CONTEXT_TAG} without closing it"]


def test_title_prefers_the_users_rename() -> None:
    data = jsonl(
        {"type": "summary", "summary": "Old summary title", "leafUuid": "x"},
        {"type": "ai-title", "aiTitle": "Generated title", "sessionId": SESSION},
        {"type": "custom-title", "customTitle": "My title", "sessionId": SESSION},
        {"type": "ai-title", "aiTitle": "Later generated title", "sessionId": SESSION},
    )
    assert parse_claude(data).title == "My title"
    assert parse_claude(data[: data.index(b'{"type":"custom-title"')]).title == "Generated title"
    assert parse_claude(jsonl({"type": "summary", "summary": "Only a summary"})).title == "Only a summary"


def test_turns_count_prompts_that_got_an_answer() -> None:
    data = jsonl(
        c_user("one", "u1"),
        c_assistant("m1", [text("answer one")], "a1"),
        c_user("two", "u2"),
        c_assistant("m2", [tool_use("t1", "Bash", {})], "a2"),  # a tool call alone is not an answer
        c_user("three", "u3"),
    )
    assert parse_claude(data).turns == 1
    error = c_assistant("m3", [text("limit")], "a3", model="<synthetic>", isApiErrorMessage=True, error="rate_limit")
    assert parse_claude(jsonl(c_user("four", "u4"), error)).turns == 0


def test_other_synthetic_messages_and_duplicate_records_are_skipped() -> None:
    data = jsonl(
        c_user("go", "u1"),
        c_assistant("m0", [text("No response requested.")], "a0", model="<synthetic>"),
        c_assistant("m1", [text("done")], "a1"),
        c_assistant("m1", [text("done")], "a1"),  # the same record written twice
    )
    chunk = parse_claude(data)
    assert [(e.role, e.text) for e in chunk.events] == [("user", "go"), ("assistant", "done")]
