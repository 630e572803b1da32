"""Codex rollouts: the real legacy session and 2026 lines, then synthetic lines in the same envelope.

The tool-call shapes below (function_call with JSON-encoded arguments, function_call_output as a string, a
JSON-encoded {"output", "metadata": {"exit_code"}} envelope, or an object, custom_tool_call for apply_patch) are
synthetic: the real samples hold no tool calls.
"""

from __future__ import annotations

import json

from orcmem.ingest.codex import parse_codex
from orcmem.models.constants import CONTEXT_TAG
from orcmem.models.ledger import EventKind
from orcmem.models.vocabulary import Agent
from tests.ingest.support import (
    fixture,
    jsonl,
    stamp_ms,
    x_agent,
    x_call,
    x_item_message,
    x_line,
    x_meta,
    x_output,
    x_user,
)

PATCH = """*** Begin Patch
*** Update File: src/app/cache.py
@@ def get(key):
-    return None
+    return store.get(key)
*** Add File: src/app/new_module.py
+API_TOKEN = "not-kept"
*** Delete File: src/app/old.py
*** Update File: src/app/rename_me.py
*** Move to: src/app/renamed.py
*** End Patch"""


def test_the_real_legacy_session() -> None:
    data = fixture("codex_rollout_sample_legacy_0.46.jsonl")
    chunk = parse_codex(data)
    assert chunk.agent is Agent.CODEX
    # the injected <environment_context> and the response_item copy of the prompt are not prompts;
    # the answer is written twice (event_msg and response_item) and comes out once
    assert [(e.kind, e.role, e.text) for e in chunk.events] == [
        (EventKind.MESSAGE, "user", "what is 2+2? just give me the answer"),
        (EventKind.MESSAGE, "assistant", "4"),
    ]
    assert chunk.events[0].at == 1761699578317
    assert chunk.session_id == "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"
    assert chunk.cwd == "/private/tmp/codex-research-test"
    assert chunk.model == "gpt-5-codex"
    assert chunk.turns == 1
    assert chunk.skipped_lines == 0
    assert chunk.end_offset == len(data)


def test_the_real_2026_lines() -> None:
    data = fixture("codex_rollout_lines_2026.jsonl")
    chunk = parse_codex(data)
    assert [(e.role, e.text, e.sidechain) for e in chunk.events] == [("user", "rispondi ciao", False)]
    assert chunk.session_id == "01a01ee3-393c-7cb1-818e-268d8e2ae938"  # the first session_meta of the chunk
    assert chunk.cwd == "C:\\Users\\<user>\\CLEANROOM\\work\\fixture-gen"
    assert chunk.model == "gpt-6-luna"
    assert chunk.turns == 0
    assert chunk.skipped_lines == 0  # the paginated lines with a top-level "ordinal" are understood too
    lines = data.splitlines(keepends=True)
    paginated = parse_codex(b"".join(lines[5:7]))
    assert paginated.session_id == "01a0bb38-9ec1-7223-8914-2cd28c52a22f"
    assert paginated.cwd == "…\\scratchpad\\proj"
    assert paginated.skipped_lines == 0


def test_a_subagent_session_is_a_sidechain_even_in_later_chunks() -> None:
    subagent_meta = fixture("codex_rollout_lines_2026.jsonl").splitlines(keepends=True)[7]
    data = subagent_meta + jsonl(x_user("echo the task", 1), x_agent("task echoed", 2))
    chunk = parse_codex(data)
    assert [(e.text, e.sidechain) for e in chunk.events] == [("echo the task", True), ("task echoed", True)]
    assert chunk.session_id == "01a0e81b-2a8b-7240-b94c-ad2ada7813da"  # payload.session_id: the parent's
    assert chunk.turns == 1
    later = parse_codex(data, len(subagent_meta))  # session_meta lies before the chunk: read as its header
    assert [(e.text, e.sidechain) for e in later.events] == [("echo the task", True), ("task echoed", True)]
    assert later.session_id == "01a0e81b-2a8b-7240-b94c-ad2ada7813da"
    assert later.cwd is not None and later.cwd.endswith("/e10probe/work")


def test_agent_messages_are_deduplicated_in_either_order() -> None:
    event_first = jsonl(x_user("q", 0), x_agent("answer", 1), x_item_message("assistant", "answer", 2))
    item_first = jsonl(x_user("q", 0), x_item_message("assistant", "answer", 1), x_agent("answer", 2))
    for data in (event_first, item_first):
        events = parse_codex(data).events
        assert [(e.role, e.text, e.at) for e in events] == [
            ("user", "q", stamp_ms(0)),
            ("assistant", "answer", stamp_ms(1)),
        ]
    repeated = jsonl(
        x_user("q1"),
        x_agent("Done."),
        x_item_message("assistant", "Done."),
        x_user("q2"),
        x_item_message("assistant", "Done."),
        x_agent("Done."),
    )
    assert [e.text for e in parse_codex(repeated).events] == ["q1", "Done.", "q2", "Done."]


def test_user_messages_of_response_items_and_injected_context_are_skipped() -> None:
    data = jsonl(
        x_item_message("user", "<environment_context>\n  <cwd>/p</cwd>\n</environment_context>"),
        x_item_message("user", "# AGENTS.md instructions"),
        x_item_message("developer", "<permissions instructions>"),
        x_line(
            "event_msg",
            {
                "type": "user_message",
                "message": "<user_instructions>be nice</user_instructions>",
                "kind": "user_instructions",
            },
        ),
        x_user(f'<{CONTEXT_TAG} kind="recall">\nremembered text\n</orcmem-context>\nreal question'),
        x_user(f'<{CONTEXT_TAG} kind="recall">\nonly injected\n</orcmem-context>'),
    )
    chunk = parse_codex(data)
    assert [(e.role, e.text) for e in chunk.events] == [("user", "real question")]
    assert chunk.skipped_lines == 0


def test_tool_calls_outputs_and_failures() -> None:
    data = jsonl(
        x_user("run the tests"),
        x_call("shell", "call_1", {"command": ["bash", "-lc", "pytest -q"], "workdir": "/p"}),
        x_output("call_1", json.dumps({"output": "2 failed", "metadata": {"exit_code": 1, "duration_seconds": 0.5}})),
        x_call("shell", "call_2", {"command": ["bash", "-lc", "ls"]}),
        x_output("call_2", json.dumps({"output": "README.md\n", "metadata": {"exit_code": 0}})),
        x_call("exec_command", "call_3", {"cmd": "make"}),
        x_output(
            "call_3", "Chunk ID: ab12\nWall time: 0.2 seconds\nProcess exited with code 2\nOutput:\nmake: *** Error"
        ),
        x_call("shell_command", "call_4", {"command": "echo ok"}),
        x_output("call_4", "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nExit code: 1 is only printed text"),
        x_call("mcp__search", "call_5", {"q": "x"}),
        x_output("call_5", {"content": "found 3", "success": False}),
        x_output("call_6", {"output": "structured", "metadata": {"exit_code": 0}}),
        x_output("call_7", [{"type": "input_text", "text": "part one"}, {"type": "input_text", "text": "part two"}]),
        x_output("call_8", {"rows": [1, 2]}),
    )
    events = parse_codex(data).events
    started = [(e.name, e.tool_call_id, e.text) for e in events if e.kind is EventKind.TOOL_STARTED]
    assert started == [
        ("shell", "call_1", ""),
        ("shell", "call_2", ""),
        ("exec_command", "call_3", ""),
        ("shell_command", "call_4", ""),
        ("mcp__search", "call_5", ""),
    ]
    completed = [(e.tool_call_id, e.name, e.text, e.is_error) for e in events if e.kind is EventKind.TOOL_COMPLETED]
    assert completed == [
        ("call_1", "shell", "2 failed", True),
        ("call_2", "shell", "README.md\n", False),
        (
            "call_3",
            "exec_command",
            "Chunk ID: ab12\nWall time: 0.2 seconds\nProcess exited with code 2\nOutput:\nmake: *** Error",
            True,
        ),
        (
            "call_4",
            "shell_command",
            "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nExit code: 1 is only printed text",
            False,
        ),
        ("call_5", "mcp__search", "found 3", True),
        ("call_6", None, "structured", False),
        ("call_7", None, "part one\npart two", False),
        ("call_8", None, '{"rows": [1, 2]}', False),
    ]
    assert all("pytest" not in e.text and "workdir" not in e.text for e in events)


def test_patches_record_changed_files_and_nothing_else_of_the_input() -> None:
    data = jsonl(
        x_line(
            "response_item",
            {"type": "custom_tool_call", "status": "completed", "call_id": "c1", "name": "apply_patch", "input": PATCH},
        ),
        x_line(
            "response_item",
            {
                "type": "custom_tool_call_output",
                "call_id": "c1",
                "output": json.dumps(
                    {
                        "output": "Success. Updated the following files:\nM src/app/cache.py\n",
                        "metadata": {"exit_code": 0},
                    }
                ),
            },
        ),
        x_call(
            "apply_patch", "c2", {"input": "*** Begin Patch\n*** Update File: docs/x.md\n@@\n-a\n+b\n*** End Patch"}
        ),
        x_call(
            "shell",
            "c3",
            {"command": ["apply_patch", "*** Begin Patch\n*** Add File: via_shell.txt\n+hi\n*** End Patch"]},
        ),
        x_call("shell", "c4", {"command": ["bash", "-lc", "grep -r '*** Update File: not/a/patch' ."]}),
    )
    events = parse_codex(data).events
    changes = [(e.name, e.text, e.tool_call_id) for e in events if e.kind is EventKind.FILE_CHANGED]
    assert changes == [
        ("edit", "src/app/cache.py", "c1"),
        ("add", "src/app/new_module.py", "c1"),
        ("delete", "src/app/old.py", "c1"),
        ("edit", "src/app/rename_me.py", "c1"),
        ("move", "src/app/renamed.py", "c1"),
        ("edit", "docs/x.md", "c2"),
        ("add", "via_shell.txt", "c3"),
    ]
    assert [e.name for e in events if e.kind is EventKind.TOOL_STARTED] == [
        "apply_patch",
        "apply_patch",
        "shell",
        "shell",
    ]
    assert all("not-kept" not in e.text and "store.get" not in e.text for e in events)
    completed = [e for e in events if e.kind is EventKind.TOOL_COMPLETED]
    assert [(e.name, e.is_error) for e in completed] == [("apply_patch", False)]
    assert completed[0].text.startswith("Success. Updated the following files:")


def test_compaction_errors_and_bookkeeping() -> None:
    data = jsonl(
        x_meta(),
        x_line("turn_context", {"cwd": "/elsewhere", "model": "gpt-5-codex"}),
        x_user("start"),
        x_line("event_msg", {"type": "token_count", "info": None}),
        x_line("event_msg", {"type": "agent_reasoning", "text": "thinking"}),
        x_line("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}),
        x_line("event_msg", {"type": "error", "message": "stream disconnected before completion"}),
        x_line("compacted", {"message": "summary of the conversation so far"}, 5),
        x_line("world_state", {"anything": True}),
        x_line("turn_context", {"model": "gpt-6-luna"}),
    )
    chunk = parse_codex(data)
    assert [(e.kind, e.role, e.text, e.is_error) for e in chunk.events] == [
        (EventKind.MESSAGE, "user", "start", False),
        (EventKind.MESSAGE, "assistant", "stream disconnected before completion", True),
        (EventKind.COMPACTION, None, "", False),
    ]
    assert chunk.events[2].at == stamp_ms(5)
    assert chunk.cwd == "/home/dev/project"  # session_meta's, not a later turn's
    assert chunk.model == "gpt-6-luna"  # the latest turn's model
    assert chunk.turns == 0  # an error does not answer a prompt
    assert chunk.skipped_lines == 0


def test_session_id_falls_back_to_payload_id() -> None:
    data = jsonl(x_line("session_meta", {"id": "019a2d7a-legacy", "cwd": "/p"}))
    assert parse_codex(data).session_id == "019a2d7a-legacy"


def test_the_real_0171_exec_rollout_has_its_prompt_and_one_turn() -> None:
    chunk = parse_codex(fixture("codex_rollout_0.171_exec.jsonl"))
    assert [(e.kind, e.role, e.name) for e in chunk.events] == [
        (EventKind.MESSAGE, "user", None),
        (EventKind.TOOL_STARTED, None, "exec_command"),
        (EventKind.TOOL_COMPLETED, None, "exec_command"),
        (EventKind.MESSAGE, "assistant", None),
    ]
    assert chunk.events[0].text == "Say hello with echo"
    assert chunk.events[-1].text == "It printed hello."
    assert not chunk.events[2].is_error  # "Process exited with code 0"
    assert (chunk.turns, chunk.skipped_lines, chunk.model) == (1, 0, "gpt-5.5")


def test_prompts_come_from_either_record_once() -> None:
    legacy = jsonl(x_item_message("user", "q1"), x_user("q1"), x_agent("a1"))
    events_first = jsonl(x_user("q1"), x_item_message("user", "q1"), x_agent("a1"))
    items_only = jsonl(x_item_message("user", "q1"), x_item_message("assistant", "a1"))
    for data in (legacy, events_first, items_only):
        chunk = parse_codex(data)
        assert [(e.role, e.text) for e in chunk.events] == [("user", "q1"), ("assistant", "a1")]
        assert chunk.turns == 1
    asked_twice = jsonl(x_item_message("user", "go"), x_user("go"), x_agent("ok"), x_item_message("user", "go"))
    assert [e.text for e in parse_codex(asked_twice).events] == ["go", "ok", "go"]


def test_a_user_message_whose_metadata_names_no_user_is_not_a_prompt() -> None:
    injected = x_item_message("user", "Review the diff against main.")
    injected["payload"]["internal_chat_message_metadata_passthrough"] = {
        "content_item_metadata": [{"provenance": {"type": "system"}}]
    }
    typed = x_item_message("user", "Say hello")
    typed["payload"]["internal_chat_message_metadata_passthrough"] = {
        "content_item_metadata": [{"provenance": {"type": "user"}}]
    }
    assert [e.text for e in parse_codex(jsonl(injected, typed)).events] == ["Say hello"]


def test_namespaced_mcp_calls_are_named_as_claude_code_names_them() -> None:
    call = x_call("memory_search", "call_9", {"query": "pool"})
    call["payload"]["namespace"] = "mcp__orcmem"
    chunk = parse_codex(jsonl(call, x_output("call_9", "[]")))
    assert [e.name for e in chunk.events] == ["mcp__orcmem__memory_search", "mcp__orcmem__memory_search"]
