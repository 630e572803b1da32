"""OpenCode sessions (1.x, its SQLite database `opencode.db`) -> ledger events, read incrementally by row.

Decisions, for the reader of the events:
- The offset is the rowid of the last message read: OpenCode writes a session's messages as rows in order and
  updates a row in place while it streams, so only finished messages are read: an assistant message once it has
  `time.completed` (or an `error`), a prompt once another message follows it. Reading stops at the first
  unfinished one and takes it up from there next time.
- A user message's text parts are the prompt; `synthetic` parts (orcmem's recall among them, and OpenCode's own
  notes) are not, and orcmem's fenced context is cut from any text.
- An assistant message's text parts are agent messages, `reasoning` passes; an `error` gives an agent message
  with is_error. A tool part gives tool.started then tool.completed (failed when its state is `error`), its output
  without orcmem's fence (the plugin adds memories to a tool's result); `edit` and `write` give file.changed for
  `filePath`, a `patch` part for each file it lists.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from orcmem.ingest.common import chunk_of, cut_text, string, strip_orcmem_context
from orcmem.models.data_shapes import JsonObject, JsonValue
from orcmem.models.ledger import EventKind, LedgerEvent, TranscriptChunk
from orcmem.models.vocabulary import Agent
from orcmem.store.opencode_sessions import StoredMessage, session_messages

MESSAGES_PER_READ = 500  # a session is read this many messages at a time
_CHANGE_TOOLS = {"write": "write", "edit": "edit", "multiedit": "edit"}


@dataclass(slots=True)
class _State:
    events: list[LedgerEvent] = field(default_factory=list)
    changed: set[str] = field(default_factory=set)
    session_id: str | None = None
    cwd: str | None = None
    model: str | None = None


def parse_session(path: Path, session_id: str | None, start: int, limit: int = MESSAGES_PER_READ) -> TranscriptChunk:
    """A chunk of ledger events from the session's finished messages after rowid `start` (its end_offset: the last
    one read); nothing without a session id."""
    if session_id is None:
        return TranscriptChunk(agent=Agent.OPENCODE, end_offset=start)
    stored = session_messages(path, session_id, start, limit)
    return parse_messages(stored, start, session_id, more=len(stored) == limit)


def parse_messages(stored: list[StoredMessage], start: int, session_id: str, *, more: bool = False) -> TranscriptChunk:
    """The events of the finished messages among `stored` (in order, up to the first unfinished one)."""
    state = _State(session_id=session_id)
    end, skipped = start, 0
    for index, message in enumerate(stored):
        info = _object(message.data)
        if info is None:
            skipped, end = skipped + 1, message.rowid
            continue
        followed = index + 1 < len(stored)
        if not _finished(info, followed):
            more = False  # the rest waits for this one
            break
        parts = [part for part in map(_object, message.parts) if part is not None]
        _events_of(message.id, info, parts, state)
        end = message.rowid
    chunk = chunk_of(Agent.OPENCODE, state, end_offset=end, skipped_lines=skipped)
    chunk.more = more and end != start
    return chunk


def _object(text: str) -> JsonObject | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _finished(info: JsonObject, followed: bool) -> bool:
    if info.get("role") == "assistant":
        times = info.get("time")
        return info.get("error") is not None or (isinstance(times, dict) and times.get("completed") is not None)
    return followed


def _created(info: JsonObject) -> int:
    times = info.get("time")
    created = times.get("created") if isinstance(times, dict) else None
    return created if isinstance(created, int) and created > 0 else 0


def _texts(parts: list[JsonObject]) -> str:
    texts = [
        text
        for part in parts
        if part.get("type") == "text" and not part.get("synthetic") and isinstance(text := part.get("text"), str)
    ]
    return strip_orcmem_context("\n".join(texts)).strip()


def _events_of(message_id: str, info: JsonObject, parts: list[JsonObject], state: _State) -> None:
    at = _created(info)
    if info.get("role") == "user":
        text = _texts(parts)
        if text:
            state.events.append(LedgerEvent(EventKind.MESSAGE, at, "user", cut_text(text), message_id))
        return
    if info.get("role") != "assistant":
        return
    state.model = string(info.get("modelID")) or state.model
    where = info.get("path")
    state.cwd = (string(where.get("cwd")) if isinstance(where, dict) else None) or state.cwd
    for part in parts:
        kind = part.get("type")
        if kind == "text":
            text = _texts([part])
            if text:
                state.events.append(LedgerEvent(EventKind.MESSAGE, at, "assistant", cut_text(text), message_id))
        elif kind == "tool":
            _tool_events(part, at, state)
        elif kind == "patch":
            _changed(part.get("files"), "edit", at, state)
    error = info.get("error")
    if isinstance(error, dict):
        said = error.get("data")
        told = string(said.get("message")) if isinstance(said, dict) else None
        told = told or string(error.get("name")) or "error"
        state.events.append(
            LedgerEvent(EventKind.MESSAGE, at, "assistant", cut_text(told), message_id, name="error", is_error=True)
        )


def _changed(paths: JsonValue, kind: str, at: int, state: _State) -> None:
    for path in paths if isinstance(paths, list) else []:
        if isinstance(path, str) and path and path not in state.changed:
            state.changed.add(path)
            state.events.append(LedgerEvent(EventKind.FILE_CHANGED, at, text=path, name=kind))


def _tool_events(part: JsonObject, at: int, state: _State) -> None:
    name, call_id = string(part.get("tool")) or "tool", string(part.get("callID"))
    given = part.get("state")
    status: JsonObject = given if isinstance(given, dict) else {}
    times = status.get("time")
    when = times.get("start") if isinstance(times, dict) else None
    when = when if isinstance(when, int) and when > 0 else at
    state.events.append(LedgerEvent(EventKind.TOOL_STARTED, when, tool_call_id=call_id, name=name))
    arguments = status.get("input")
    if name in _CHANGE_TOOLS and isinstance(arguments, dict):
        _changed([arguments.get("filePath")], _CHANGE_TOOLS[name], when, state)
    failed = status.get("status") == "error"
    output = status.get("error") if failed else status.get("output")
    text = cut_text(strip_orcmem_context(output if isinstance(output, str) else "", drop_unclosed=False))
    state.events.append(
        LedgerEvent(EventKind.TOOL_COMPLETED, when, text=text, tool_call_id=call_id, name=name, is_error=failed)
    )
