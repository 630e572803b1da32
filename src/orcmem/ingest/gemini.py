"""Gemini CLI session files (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, 0.61) -> ledger events.

Decisions, for the reader of the events:
- Line 1 is the session's metadata (`sessionId`, `projectHash`, `startTime`); `{"$set": ...}` lines patch it (its
  `messages` hold the context Gemini CLI sets up, never a prompt) and are passed over.
- A message record is `{id, timestamp, type, content, toolCalls?, model?}`: `user` is a prompt, `gemini` an agent
  message, `error` an agent message with `is_error`; `info` and `warning` are the CLI's own notes and pass.
- A reply with tool calls is written again under the same `id` as its calls finish: within a chunk the last
  writing wins, in the place of the first.
- `<hook_context>` blocks that hooks put in front of a prompt (orcmem's brief and recall among them) are cut out;
  a user message made of nothing else, or the CLI's `<session_context>`, is no prompt.
- Each tool call gives tool.started then tool.completed (failed unless its status is `success`); `write_file` and
  `replace` give file.changed for their `file_path`. Of tool inputs only that path is kept.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from orcmem.ingest.common import Record, chunk_of, cut_text, read_records, string, strip_orcmem_context, time_ms
from orcmem.models.data_shapes import JsonValue
from orcmem.models.ledger import EventKind, LedgerEvent, TranscriptChunk
from orcmem.models.vocabulary import Agent

_HOOK_CONTEXT = re.compile(r"<hook_context>.*?</hook_context>\s*", re.DOTALL)
_CHANGE_TOOLS = {"write_file": "write", "replace": "edit"}


@dataclass(slots=True)
class _State:
    """What one parse accumulates: message records by id (last writing wins), in first-seen order."""

    messages: dict[str, Record] = field(default_factory=dict)
    events: list[LedgerEvent] = field(default_factory=list)
    session_id: str | None = None
    cwd: str | None = None
    model: str | None = None


def is_gemini_record(record: Record) -> bool:
    """True for a line only Gemini CLI writes: its session metadata, a `$set` patch, or a `gemini` message."""
    return "projectHash" in record or "$set" in record or record.get("type") == "gemini"


def parse_lines(lines: list[bytes], end_offset: int) -> TranscriptChunk:
    """A chunk of ledger events from a Gemini CLI session file's complete lines."""
    state = _State()
    skipped = read_records(lines, lambda record: _handle(record, state))
    for record in state.messages.values():
        _events_of(record, state)
    return chunk_of(Agent.GEMINI, state, end_offset=end_offset, skipped_lines=skipped)


def _handle(record: Record, state: _State) -> bool:
    if "$set" in record:
        return True
    if "projectHash" in record:
        state.session_id = string(record.get("sessionId")) or state.session_id
        return True
    message_id, kind = string(record.get("id")), record.get("type")
    if message_id is None or not isinstance(kind, str):
        return False
    state.messages[message_id] = record  # a rewrite keeps the first one's place
    return True


def _text(content: JsonValue) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def _prompt(content: JsonValue) -> str:
    text = _HOOK_CONTEXT.sub("", _text(content))
    if text.lstrip().startswith("<session_context>"):
        return ""
    return strip_orcmem_context(text).strip()


def _events_of(record: Record, state: _State) -> None:
    at, message_id, kind = time_ms(record.get("timestamp")), str(record["id"]), record["type"]
    if kind == "user":
        text = _prompt(record.get("content"))
        if text:
            state.events.append(LedgerEvent(EventKind.MESSAGE, at, "user", cut_text(text), message_id))
        return
    if kind not in ("gemini", "error"):
        return  # info and warning: the CLI's own notes
    state.model = string(record.get("model")) or state.model
    text = _text(record.get("content")).strip()
    if text:
        failed = kind == "error"
        state.events.append(
            LedgerEvent(
                EventKind.MESSAGE,
                at,
                "assistant",
                cut_text(text),
                message_id,
                name="error" if failed else None,
                is_error=failed,
            )
        )
    calls = record.get("toolCalls")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            _tool_events(call, at, state)


def _tool_events(call: Record, at: int, state: _State) -> None:
    name, call_id = string(call.get("name")) or "tool", string(call.get("id"))
    when = time_ms(call.get("timestamp")) or at
    state.events.append(LedgerEvent(EventKind.TOOL_STARTED, when, tool_call_id=call_id, name=name))
    args = call.get("args")
    path = string(args.get("file_path")) if isinstance(args, dict) else None
    if name in _CHANGE_TOOLS and path is not None:
        state.events.append(LedgerEvent(EventKind.FILE_CHANGED, when, text=path, name=_CHANGE_TOOLS[name]))
    display = call.get("resultDisplay")
    output = display if isinstance(display, str) else json.dumps(call.get("result"), ensure_ascii=False)
    failed = call.get("status") != "success"
    text = cut_text(strip_orcmem_context(output, drop_unclosed=False))
    state.events.append(
        LedgerEvent(EventKind.TOOL_COMPLETED, when, text=text, tool_call_id=call_id, name=name, is_error=failed)
    )
