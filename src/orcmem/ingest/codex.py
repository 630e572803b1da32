"""Codex rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, legacy and paginated) -> ledger events.

Decisions, for the reader of the events:
- User prompts come from `event_msg`/`user_message` (up to 0.16x) or the `response_item` user message (the only
  record of them in 0.171's paginated rollouts), whichever is written first; its twin with the same text is
  dropped. A user message that Codex injected (environment context, AGENTS.md, skills, permissions: a known
  opening tag, or 0.171's content metadata naming no user provenance) is not a prompt. Agent messages come from
  `event_msg`/`agent_message` or the `response_item` assistant message in the same way. Twins that straddle two
  chunks both come out, one per chunk.
- A namespaced tool call (`"namespace": "mcp__orcmem", "name": "memory_search"`) is named as Claude Code names
  MCP tools: `mcp__orcmem__memory_search`.
- A tool result failed when its structured output says so: `success: false`, or a non-zero `exit_code`
  (top-level or under `metadata`, also inside a JSON-encoded output string), or a plain-text output whose header,
  before its "Output:" line, reads "Exit code: N" or "Process exited with code N" with N non-zero. Anything else
  counts as success.
- file.changed comes from patches in tool calls (apply_patch, or a shell call carrying "*** Begin Patch"):
  `*** Update File:` -> "edit", `*** Add File:` -> "add", `*** Delete File:` -> "delete", `*** Move to:` -> "move".
  The paths are the only thing kept from tool inputs.
- orcmem's own `<orcmem-context>` blocks are cut out of user prompts and (closed ones) out of tool output.
- `event_msg`/`error` is kept as an assistant message with `is_error=True` and name "error"; it answers no turn.
- A subagent session (`session_meta` whose `source` has `subagent`) marks its events sidechain. The chunk's
  session id is `payload.session_id`, else `payload.id` (for a subagent that is its parent's session).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field

from orcmem.ingest.common import (
    Record,
    chunk_of,
    complete_lines,
    cut_text,
    load_record,
    read_records,
    string,
    strip_orcmem_context,
    time_ms,
)
from orcmem.models.data_shapes import JsonObject
from orcmem.models.ledger import EventKind, LedgerEvent, TranscriptChunk
from orcmem.models.vocabulary import Agent

_IGNORED_TYPES = frozenset({"world_state", "token_usage_record"})
_INJECTED_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<skills_instructions>",
    "<permissions instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
)
_PATCH_LINE = re.compile(r"^\*\*\* (Update File|Add File|Delete File|Move to): *(.+?)\s*$", re.M)
_PATCH_KINDS = {"Update File": "edit", "Add File": "add", "Delete File": "delete", "Move to": "move"}
_EXIT_LINE = re.compile(r"^(?:Exit code:|Process exited with code) *(-?\d+)", re.M)
_MAX_SEARCH_DEPTH = 8  # patch text sits at most a level or two down in a call's arguments


@dataclass(slots=True)
class _State:
    """What one parse accumulates while walking the records of a chunk."""

    events: list[LedgerEvent] = field(default_factory=list)
    tool_names: dict[str, str] = field(default_factory=dict)  # call_id -> tool name
    # agent-message texts written by one source and still waiting for their twin from the other
    awaiting_item: Counter[str] = field(default_factory=Counter)
    awaiting_event: Counter[str] = field(default_factory=Counter)
    # the same for user prompts
    prompt_item: Counter[str] = field(default_factory=Counter)
    prompt_event: Counter[str] = field(default_factory=Counter)
    session_id: str | None = None
    cwd: str | None = None
    model: str | None = None
    sidechain: bool = False


def parse_codex(data: bytes, start_offset: int = 0) -> TranscriptChunk:
    """Ledger events of a Codex rollout's complete lines from start_offset (data is the whole file)."""
    lines, end_offset = complete_lines(data, start_offset)
    header = None
    if start_offset > 0:
        first_end = data.find(b"\n")
        if 0 <= first_end < start_offset:
            header = data[:first_end]
    return parse_lines(lines, end_offset, header)


def parse_lines(lines: list[bytes], end_offset: int, header: bytes | None) -> TranscriptChunk:
    """A chunk from already split complete lines; header is the file's first line when it lies before them."""
    state = _State()
    header_record = load_record(header) if header else None
    if header_record is not None and header_record.get("type") == "session_meta":
        _session_meta(header_record, state)
    skipped = read_records(lines, lambda record: _handle(record, state))
    return chunk_of(Agent.CODEX, state, end_offset=end_offset, skipped_lines=skipped)


def _handle(record: Record, state: _State) -> bool:
    kind = record.get("type")
    if not isinstance(kind, str):
        return False
    if kind in _IGNORED_TYPES:
        return True
    payload = record.get("payload")
    if not isinstance(payload, dict):
        return False
    at = time_ms(record.get("timestamp"))
    if kind == "response_item":
        return _response_item(payload, at, state)
    if kind == "event_msg":
        return _event_msg(payload, at, state)
    if kind == "session_meta":
        return _session_meta(record, state)
    if kind == "turn_context":
        state.model = string(payload.get("model")) or state.model
        state.cwd = state.cwd or string(payload.get("cwd"))
        return True
    if kind == "compacted":
        state.events.append(LedgerEvent(kind=EventKind.COMPACTION, at=at, sidechain=state.sidechain))
        return True
    return False


def _session_meta(record: Record, state: _State) -> bool:
    payload = record.get("payload")
    if not isinstance(payload, dict):
        return False
    state.session_id = state.session_id or string(payload.get("session_id")) or string(payload.get("id"))
    state.cwd = state.cwd or string(payload.get("cwd"))
    source = payload.get("source")
    state.sidechain = isinstance(source, dict) and "subagent" in source
    return True


def _event_msg(payload: Record, at: int, state: _State) -> bool:
    kind = payload.get("type")
    if kind == "user_message":
        message = payload.get("message")
        if not isinstance(message, str):
            return False
        if payload.get("kind") not in (None, "plain"):
            return True  # older versions echoed injected instructions and environment context here
        _prompt(message, at, state, mine=state.prompt_event, twins=state.prompt_item)
        return True
    if kind == "agent_message":
        message = payload.get("message")
        if not isinstance(message, str):
            return False
        _agent_text(message, at, state, mine=state.awaiting_event, twins=state.awaiting_item)
        return True
    if kind == "error":
        message = string(payload.get("message")) or "error"
        state.events.append(
            LedgerEvent(
                kind=EventKind.MESSAGE,
                at=at,
                role="assistant",
                text=cut_text(message),
                name="error",
                is_error=True,
                sidechain=state.sidechain,
            )
        )
    return True  # token counts, reasoning, task and exec bookkeeping: nothing extraction reads


def _prompt(text: str, at: int, state: _State, mine: Counter[str], twins: Counter[str]) -> None:
    """Emit a user prompt unless it was injected by Codex or its twin from the other source came first."""
    text = strip_orcmem_context(text).strip()
    if not text or text.startswith(_INJECTED_PREFIXES):
        return
    if twins[text] > 0:
        twins[text] -= 1
        return
    mine[text] += 1
    state.awaiting_item.clear()
    state.awaiting_event.clear()
    state.events.append(
        LedgerEvent(kind=EventKind.MESSAGE, at=at, role="user", text=cut_text(text), sidechain=state.sidechain)
    )


def _typed_by_user(payload: Record) -> bool:
    """False when 0.171's content metadata says no part of the message came from the user."""
    passthrough = payload.get("internal_chat_message_metadata_passthrough")
    metadata = passthrough.get("content_item_metadata") if isinstance(passthrough, dict) else None
    if not isinstance(metadata, list) or not metadata:
        return True
    provenances = [
        item.get("provenance", {}).get("type")
        for item in metadata
        if isinstance(item, dict) and isinstance(item.get("provenance"), dict)
    ]
    return not provenances or "user" in provenances


def _agent_text(text: str, at: int, state: _State, mine: Counter[str], twins: Counter[str]) -> None:
    """Emit an agent message unless its twin from the other source came first."""
    key = text.strip()
    if not key:
        return
    if twins[key] > 0:
        twins[key] -= 1
        return
    mine[key] += 1
    state.events.append(
        LedgerEvent(kind=EventKind.MESSAGE, at=at, role="assistant", text=cut_text(text), sidechain=state.sidechain)
    )


def _response_item(payload: Record, at: int, state: _State) -> bool:
    kind = payload.get("type")
    if kind == "message":
        content = payload.get("content")
        role = payload.get("role")
        if role not in ("assistant", "user"):
            return True  # developer and system instructions
        if isinstance(content, str):
            text = content
        elif isinstance(content, list):
            text = "\n".join(
                block["text"]
                for block in content
                if isinstance(block, dict)
                and block.get("type") in ("output_text", "input_text", "text")
                and isinstance(block.get("text"), str)
            )
        else:
            return False
        if role == "user":
            if _typed_by_user(payload):
                _prompt(text, at, state, mine=state.prompt_item, twins=state.prompt_event)
            return True
        _agent_text(text, at, state, mine=state.awaiting_item, twins=state.awaiting_event)
        return True
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        return _tool_call(payload, at, state)
    if kind in ("function_call_output", "custom_tool_call_output"):
        return _tool_output(payload, at, state)
    return True  # reasoning, web searches and other items extraction does not read


def _tool_call(payload: Record, at: int, state: _State) -> bool:
    kind = payload.get("type")
    name = string(payload.get("name")) or ("local_shell" if kind == "local_shell_call" else None)
    call_id = string(payload.get("call_id"))
    if name is None:
        return False
    namespace = string(payload.get("namespace"))
    if namespace is not None:
        name = f"{namespace.rstrip('_')}__{name}"
    if call_id is not None:
        state.tool_names[call_id] = name
    state.events.append(
        LedgerEvent(kind=EventKind.TOOL_STARTED, at=at, tool_call_id=call_id, name=name, sidechain=state.sidechain)
    )
    for change, path in _patched_files(payload.get("arguments", payload.get("input", payload.get("action"))), name):
        state.events.append(
            LedgerEvent(
                kind=EventKind.FILE_CHANGED,
                at=at,
                text=cut_text(path),
                tool_call_id=call_id,
                name=change,
                sidechain=state.sidechain,
            )
        )
    return True


def _patched_files(arguments: object, tool: str) -> list[tuple[str, str]]:
    """(change kind, path) for each file a patch in the call's arguments touches, in patch order, once each."""
    if isinstance(arguments, str) and arguments.lstrip().startswith(("{", "[")):
        with contextlib.suppress(ValueError, RecursionError):
            arguments = json.loads(arguments)
    changes: list[tuple[str, str]] = []
    for text in _strings(arguments, _MAX_SEARCH_DEPTH):
        if "*** " not in text or (tool != "apply_patch" and "*** Begin Patch" not in text):
            continue
        for match in _PATCH_LINE.finditer(text):
            change = (_PATCH_KINDS[match.group(1)], match.group(2))
            if change not in changes:
                changes.append(change)
    return changes


def _strings(value: object, depth: int) -> list[str]:
    if isinstance(value, str):
        return [value]
    if depth <= 0:
        return []
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [text for item in value for text in _strings(item, depth - 1)]
    return []


def _tool_output(payload: Record, at: int, state: _State) -> bool:
    call_id = string(payload.get("call_id"))
    if call_id is None and "output" not in payload:
        return False
    text, failed = _output_text(payload.get("output"))
    state.events.append(
        LedgerEvent(
            kind=EventKind.TOOL_COMPLETED,
            at=at,
            text=cut_text(strip_orcmem_context(text, drop_unclosed=False)),
            tool_call_id=call_id,
            name=state.tool_names.get(call_id) if call_id else None,
            is_error=failed,
            sidechain=state.sidechain,
        )
    )
    return True


def _output_text(output: object) -> tuple[str, bool]:
    """A tool output's text and whether it reports a failure."""
    if isinstance(output, str):
        stripped = output.strip()
        if stripped.startswith("{") and stripped.endswith("}"):
            try:
                envelope = json.loads(stripped)
            except (ValueError, RecursionError):
                envelope = None
            # older shell tools wrapped their output as {"output": ..., "metadata": {"exit_code": ...}}
            if isinstance(envelope, dict) and isinstance(envelope.get("output"), str):
                return _object_output(envelope)
        header = output.split("\nOutput:", 1)[0][:1000]
        exit_code = _EXIT_LINE.search(header)
        return output, exit_code is not None and int(exit_code.group(1)) != 0
    if isinstance(output, dict):
        return _object_output(output)
    if isinstance(output, list):
        pieces = [item["text"] for item in output if isinstance(item, dict) and isinstance(item.get("text"), str)]
        return "\n".join(pieces), False
    if output is None:
        return "", False
    return json.dumps(output, ensure_ascii=False), False


def _object_output(output: JsonObject) -> tuple[str, bool]:
    text = output.get("output", output.get("content"))
    if not isinstance(text, str):
        text = json.dumps(output, ensure_ascii=False, default=str)
    metadata = output.get("metadata")
    codes = [output.get("exit_code"), metadata.get("exit_code") if isinstance(metadata, dict) else None]
    failed = output.get("success") is False or any(
        isinstance(code, int) and not isinstance(code, bool) and code != 0 for code in codes
    )
    return text, failed
