"""GitHub Copilot CLI session files (`~/.copilot/session-state/<sessionId>/events.jsonl`, 1.0) -> ledger events.

Decisions, for the reader of the events:
- Every line is `{type, data, id, timestamp, parentId}`, written as it happens: `session.start` (the session's id,
  its folder, the model chosen), `user.message`, `assistant.message`, `tool.execution_start` / `_complete`; the rest
  (hook runs, usage records, turn marks, the system prompt, shutdown, resume) are the CLI's own and pass.
- A prompt is `user.message`'s `content`: the person's words. Its `transformedContent` (what the model got, with
  the date and the hooks' `<system_reminder>` context, orcmem's recall among it) is never read.
- An agent message is `assistant.message`'s `content` (empty when it only calls tools); `session.error` is an agent
  message with `is_error`.
- Each tool call gives tool.started (from `tool.execution_start`, which names the tool) and tool.completed (from
  `tool.execution_complete`, failed unless `success`); `edit` and `create` give file.changed for their `path`. Of
  tool inputs only that path is kept; orcmem's fenced context is cut from a tool's result.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from orcmem.ingest.common import Record, chunk_of, cut_text, read_records, string, strip_orcmem_context, time_ms
from orcmem.models.data_shapes import JsonObject
from orcmem.models.ledger import EventKind, LedgerEvent, TranscriptChunk
from orcmem.models.vocabulary import Agent

_CHANGE_TOOLS = {"create": "write", "edit": "edit"}


@dataclass(slots=True)
class _State:
    """What one parse accumulates: the events, the session's facts, and each open tool call's name by its id."""

    events: list[LedgerEvent] = field(default_factory=list)
    tools: dict[str, str] = field(default_factory=dict)
    session_id: str | None = None
    cwd: str | None = None
    model: str | None = None


def is_copilot_record(record: Record) -> bool:
    """True for a line Copilot CLI writes: a dotted event type with its `data` object and a `parentId` key."""
    kind = record.get("type")
    return isinstance(kind, str) and "." in kind and isinstance(record.get("data"), dict) and "parentId" in record


def parse_lines(lines: list[bytes], end_offset: int) -> TranscriptChunk:
    """A chunk of ledger events from a Copilot CLI events.jsonl's complete lines."""
    state = _State()
    skipped = read_records(lines, lambda record: _handle(record, state))
    return chunk_of(Agent.COPILOT, state, end_offset=end_offset, skipped_lines=skipped)


def _handle(record: Record, state: _State) -> bool:
    if not is_copilot_record(record):
        return False
    data: JsonObject = record["data"]
    kind, at, record_id = record["type"], time_ms(record.get("timestamp")), string(record.get("id"))
    if kind == "session.start":
        context = data.get("context")
        state.session_id = string(data.get("sessionId")) or state.session_id
        state.cwd = (string(context.get("cwd")) if isinstance(context, dict) else None) or state.cwd
        state.model = string(data.get("selectedModel")) or state.model
    elif kind == "user.message":
        text = strip_orcmem_context(string(data.get("content")) or "").strip()
        if text:
            state.events.append(LedgerEvent(EventKind.MESSAGE, at, "user", cut_text(text), record_id))
    elif kind in ("assistant.message", "session.error"):
        failed = kind == "session.error"
        state.model = string(data.get("model")) or state.model
        text = (string(data.get("message" if failed else "content")) or "").strip()
        if text:
            name = "error" if failed else None
            state.events.append(
                LedgerEvent(EventKind.MESSAGE, at, "assistant", cut_text(text), record_id, name=name, is_error=failed)
            )
    elif kind == "tool.execution_start":
        _started(data, at, state)
    elif kind == "tool.execution_complete":
        _completed(data, at, state)
    return True


def _started(data: JsonObject, at: int, state: _State) -> None:
    call_id, name = string(data.get("toolCallId")), string(data.get("toolName")) or "tool"
    if call_id is not None:
        state.tools[call_id] = name
    state.events.append(LedgerEvent(EventKind.TOOL_STARTED, at, tool_call_id=call_id, name=name))
    arguments = data.get("arguments")
    path = string(arguments.get("path")) if isinstance(arguments, dict) else None
    if name in _CHANGE_TOOLS and path is not None:
        state.events.append(LedgerEvent(EventKind.FILE_CHANGED, at, text=path, name=_CHANGE_TOOLS[name]))


def _completed(data: JsonObject, at: int, state: _State) -> None:
    call_id = string(data.get("toolCallId"))
    name = state.tools.pop(call_id, None) if call_id is not None else None
    result = data.get("result")
    output = (string(result.get("content")) if isinstance(result, dict) else None) or ""
    error = data.get("error")
    if not output and isinstance(error, dict):
        output = string(error.get("message")) or ""
    text = cut_text(strip_orcmem_context(output, drop_unclosed=False))
    failed = data.get("success") is not True
    state.events.append(
        LedgerEvent(EventKind.TOOL_COMPLETED, at, text=text, tool_call_id=call_id, name=name, is_error=failed)
    )
