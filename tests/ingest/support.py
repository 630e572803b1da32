"""Synthetic transcript lines in the shapes of the real samples, and helpers to compare chunked parses."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from orcmem.models.ledger import EventKind, LedgerEvent, TranscriptChunk

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "agents"

Parser = Callable[[bytes, int], TranscriptChunk]


def fixture(name: str) -> bytes:
    """The bytes of a sample transcript."""
    return (FIXTURES / name).read_bytes()


def jsonl(*records: dict[str, Any]) -> bytes:
    """Records as JSONL, compact like the agents write them."""
    return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records)


def stamp(second: int) -> str:
    """An ISO-8601 time a given number of seconds after 2026-08-20T10:00:00Z."""
    return f"2026-08-20T10:{second // 60 % 60:02d}:{second % 60:02d}.000Z"


def stamp_ms(second: int) -> int:
    """The same time as stamp(second), in milliseconds since the epoch."""
    return (1787220000 + second % 3600) * 1000


# --- Claude Code ---------------------------------------------------------------------------------------------

SESSION = "11111111-2222-3333-4444-555555555555"


def _envelope(kind: str, uuid: str, second: int, sidechain: bool) -> dict[str, Any]:
    return {
        "parentUuid": None,
        "isSidechain": sidechain,
        "type": kind,
        "uuid": uuid,
        "timestamp": stamp(second),
        "cwd": "/home/dev/project",
        "sessionId": SESSION,
        "version": "2.1.233",
    }


def c_user(text: str | list[dict[str, Any]], uuid: str, second: int = 0, **extra: Any) -> dict[str, Any]:
    """A Claude user record with string or block content."""
    record = _envelope("user", uuid, second, extra.pop("sidechain", False))
    record["message"] = {"role": "user", "content": text}
    record.update(extra)
    return record


def c_assistant(
    message_id: str, blocks: list[dict[str, Any]], uuid: str, second: int = 0, **extra: Any
) -> dict[str, Any]:
    """A Claude assistant line: one or more content blocks of the API message message_id."""
    record = _envelope("assistant", uuid, second, extra.pop("sidechain", False))
    record["message"] = {
        "model": extra.pop("model", "claude-haiku-4-5-20251001"),
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "content": blocks,
    }
    record["requestId"] = "req_" + message_id
    record.update(extra)
    return record


def text(value: str) -> dict[str, Any]:
    """A text block."""
    return {"type": "text", "text": value}


def tool_use(call_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    """A tool_use block."""
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input, "caller": {"type": "direct"}}


def tool_result(call_id: str, content: str | list[dict[str, Any]], is_error: bool = False) -> dict[str, Any]:
    """A tool_result block."""
    return {"tool_use_id": call_id, "type": "tool_result", "content": content, "is_error": is_error}


# --- Codex -----------------------------------------------------------------------------------------------------


def x_line(kind: str, payload: dict[str, Any], second: int = 0) -> dict[str, Any]:
    """A Codex rollout line."""
    return {"timestamp": stamp(second), "type": kind, "payload": payload}


def x_meta(session_id: str = "01a0bb38-9ec1-7223-8914-2cd28c52a22f", **extra: Any) -> dict[str, Any]:
    """A Codex session_meta line."""
    payload = {"session_id": session_id, "id": session_id, "cwd": "/home/dev/project", "source": "exec"}
    payload.update(extra)
    return x_line("session_meta", payload)


def x_user(message: str, second: int = 0) -> dict[str, Any]:
    """A Codex event_msg/user_message line (the typed prompt)."""
    return x_line("event_msg", {"type": "user_message", "message": message, "images": []}, second)


def x_agent(message: str, second: int = 0) -> dict[str, Any]:
    """A Codex event_msg/agent_message line."""
    return x_line("event_msg", {"type": "agent_message", "message": message}, second)


def x_item_message(role: str, value: str, second: int = 0) -> dict[str, Any]:
    """A Codex response_item message line."""
    block = "output_text" if role == "assistant" else "input_text"
    return x_line(
        "response_item", {"type": "message", "role": role, "content": [{"type": block, "text": value}]}, second
    )


def x_call(name: str, call_id: str, arguments: dict[str, Any], second: int = 0) -> dict[str, Any]:
    """A Codex function_call line (arguments JSON-encoded, as Codex writes them)."""
    payload = {"type": "function_call", "name": name, "arguments": json.dumps(arguments), "call_id": call_id}
    return x_line("response_item", payload, second)


def x_output(call_id: str, output: Any, second: int = 0) -> dict[str, Any]:
    """A Codex function_call_output line."""
    return x_line("response_item", {"type": "function_call_output", "call_id": call_id, "output": output}, second)


# --- comparing chunked parses ------------------------------------------------------------------------------------


def line_ends(data: bytes) -> list[int]:
    """Offsets just after each newline."""
    return [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]


def parse_in_chunks(parse: Parser, data: bytes, cuts: list[int]) -> list[TranscriptChunk]:
    """Parse data as a file that grew to each cut in turn, resuming each time at the previous end_offset."""
    chunks = []
    offset = 0
    for cut in [*cuts, len(data)]:
        chunk = parse(data[:cut], offset)
        assert chunk.end_offset >= offset
        offset = chunk.end_offset
        chunks.append(chunk)
    assert offset == len(data)
    return chunks


def events_of(chunks: list[TranscriptChunk]) -> list[LedgerEvent]:
    """All events of the chunks, in order."""
    return [event for chunk in chunks for event in chunk.events]


def undo_chunk_effects(events: list[LedgerEvent]) -> list[LedgerEvent]:
    """Undo the documented chunk effects: a Claude message split by message_id, a Codex agent-message or prompt
    twin, and a tool result without its tool's name because the call was in an earlier chunk."""
    out: list[LedgerEvent] = []
    by_id: dict[str, int] = {}
    tool_names: dict[str, str] = {}
    since_prompt: set[str] = set()
    for event in events:
        if event.kind is EventKind.TOOL_STARTED and event.tool_call_id and event.name:
            tool_names[event.tool_call_id] = event.name
        if event.kind is EventKind.TOOL_COMPLETED and event.name is None and event.tool_call_id in tool_names:
            event = replace(event, name=tool_names[event.tool_call_id])
        if event.kind is EventKind.MESSAGE and event.role == "user":
            previous = out[-1] if out else None
            if previous is not None and previous.role == "user" and previous.text == event.text:
                continue  # a Codex prompt twin (response item and user_message event) cut apart by a chunk
            since_prompt.clear()
        if event.kind is EventKind.MESSAGE and event.role == "assistant" and not event.is_error:
            if event.message_id is not None and event.message_id in by_id:
                first = by_id[event.message_id]
                out[first] = replace(out[first], text=out[first].text + "\n\n" + event.text)
                continue
            if event.message_id is None and event.text in since_prompt:
                continue
            since_prompt.add(event.text)
            if event.message_id is not None:
                by_id[event.message_id] = len(out)
        out.append(event)
    return out
