"""Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`) -> ledger events.

Decisions, for the reader of the events:
- An API message is written as one line per content block sharing `message.id`; within one chunk its text blocks
  become ONE message event, placed where its first text block was. Lines of one message that straddle two chunks
  come out as two message events (same `message_id`), one per chunk.
- A synthetic API-error record (`isApiErrorMessage`, e.g. a rate limit) is kept as an assistant message with
  `is_error=True` and `name` = the error code (e.g. "rate_limit"), so extraction can see the run hit an error and
  leave it out of what the agent "said"; it does not answer a turn. Other `<synthetic>` records ("No response
  requested.") are skipped.
- Not user prompts: tool results, `isMeta` caveats, the `isCompactSummary` recap, `<local-command-...>`,
  `<bash-...>` and `<task-notification>` echoes, "[Request interrupted by user...]", and bare slash commands.
  A slash command with arguments becomes the prompt "/name args". `<system-reminder>` blocks and orcmem's own
  `<orcmem-context>` blocks are cut out of user text (closed blocks out of tool output too, since orcmem's own
  MCP tools may return fenced memories); `hook_additional_context` attachments are skipped.
- A mid-turn prompt the user queued (`attachment` of type `queued_command`, mode "prompt") is a user prompt.
- file.changed comes from the call of Edit, MultiEdit, NotebookEdit ("edit") or Write ("write"), whatever its
  result; the file path is the only tool input kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from orcmem.ingest.common import (
    Record,
    chunk_of,
    complete_lines,
    cut_text,
    read_records,
    string,
    strip_orcmem_context,
    time_ms,
)
from orcmem.models.ledger import EventKind, LedgerEvent, TranscriptChunk
from orcmem.models.vocabulary import Agent

_FILE_TOOLS = {"Edit": "edit", "MultiEdit": "edit", "NotebookEdit": "edit", "Write": "write"}
_FILE_PATH_INPUTS = ("file_path", "notebook_path")
_TITLE_KEYS = {"custom-title": "customTitle", "ai-title": "aiTitle", "summary": "summary"}
_TITLE_ORDER = ("custom-title", "ai-title", "summary")  # a user's rename beats the generated title
_METADATA_TYPES = frozenset(
    {
        "queue-operation",  # its enqueued text reappears as the user record or a queued_command attachment
        "last-prompt",
        "file-history-snapshot",
        "mode",
        "permission-mode",
        "progress",
        "agent-name",
        "tag",
        "pr-link",
        "worktree-state",
    }
)
_NOISE_PREFIXES = ("<local-command-", "<bash-input>", "<bash-stdout>", "<bash-stderr>", "<task-notification>")
_INTERRUPTED = "[Request interrupted by user"
_SYSTEM_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)


@dataclass(slots=True)
class _State:
    """What one parse accumulates while walking the records of a chunk."""

    events: list[LedgerEvent] = field(default_factory=list)
    message_parts: dict[int, list[str]] = field(default_factory=dict)  # event index -> text blocks to merge
    message_index: dict[str, int] = field(default_factory=dict)  # message.id -> index of its message event
    tool_names: dict[str, str] = field(default_factory=dict)  # tool_use id -> tool name
    seen_uuids: set[str] = field(default_factory=set)
    titles: dict[str, str] = field(default_factory=dict)
    session_id: str | None = None
    cwd: str | None = None
    model: str | None = None


def parse_claude(data: bytes, start_offset: int = 0) -> TranscriptChunk:
    """Ledger events of a Claude Code transcript's complete lines from start_offset (data is the whole file)."""
    lines, end_offset = complete_lines(data, start_offset)
    return parse_lines(lines, end_offset)


def parse_lines(lines: list[bytes], end_offset: int) -> TranscriptChunk:
    """A chunk from already split complete lines; end_offset is the file offset just after them."""
    state = _State()
    skipped = read_records(lines, lambda record: _handle(record, state))
    for index, parts in state.message_parts.items():
        state.events[index] = replace(state.events[index], text=cut_text("\n\n".join(parts)))
    title = next((state.titles[kind] for kind in _TITLE_ORDER if kind in state.titles), None)
    return chunk_of(Agent.CLAUDE, state, end_offset=end_offset, skipped_lines=skipped, title=title)


def _handle(record: Record, state: _State) -> bool:
    kind = record.get("type")
    if not isinstance(kind, str):
        return False
    if kind in _METADATA_TYPES:
        return True
    if kind in _TITLE_KEYS:
        title = string(record.get(_TITLE_KEYS[kind])) or string(record.get("title"))
        if title is None:
            return False
        state.titles[kind] = title
        return True
    if kind not in ("user", "assistant", "system", "attachment"):
        return False
    uuid = string(record.get("uuid"))
    if uuid is not None:
        if uuid in state.seen_uuids:
            return True  # the same record written twice
        state.seen_uuids.add(uuid)
    state.session_id = state.session_id or string(record.get("sessionId"))
    state.cwd = state.cwd or string(record.get("cwd"))
    if kind == "user":
        return _user(record, state)
    if kind == "assistant":
        return _assistant(record, state)
    if kind == "system":
        return _system(record, state)
    return _attachment(record, state)


def _user(record: Record, state: _State) -> bool:
    message = record.get("message")
    if not isinstance(message, dict):
        return False
    content = message.get("content")
    at = time_ms(record.get("timestamp"))
    sidechain = record.get("isSidechain") is True
    texts: list[str] = []
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            block_type = block.get("type")
            if block_type == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block_type == "tool_result":
                _tool_result(block, at, sidechain, state)
    else:
        return False
    if record.get("isMeta") is True or record.get("isCompactSummary") is True:
        return True
    prompt = _prompt_text("\n".join(texts))
    if prompt is not None:
        state.events.append(
            LedgerEvent(
                kind=EventKind.MESSAGE,
                at=at,
                role="user",
                text=cut_text(prompt),
                message_id=string(record.get("uuid")),
                sidechain=sidechain,
            )
        )
    return True


def _prompt_text(text: str) -> str | None:
    """What the user typed, or None when the text is an echo, a bare command or injected context."""
    text = strip_orcmem_context(text)
    if "<system-reminder>" in text:
        text = _SYSTEM_REMINDER.sub("", text)
    text = text.strip()
    if not text or text.startswith(_NOISE_PREFIXES) or text.startswith(_INTERRUPTED):
        return None
    if text.startswith("<command-"):
        name = _COMMAND_NAME.search(text)
        args = _COMMAND_ARGS.search(text)
        if name is None or args is None or not args.group(1).strip():
            return None
        command = name.group(1).strip()
        return f"{command if command.startswith('/') else '/' + command} {args.group(1).strip()}"
    return text


def _tool_result(block: Record, at: int, sidechain: bool, state: _State) -> None:
    call_id = string(block.get("tool_use_id"))
    content = block.get("content")
    if isinstance(content, str):
        output = content
    elif isinstance(content, list):
        pieces = []
        for item in content:
            if isinstance(item, dict):
                if item.get("type") == "text" and isinstance(item.get("text"), str):
                    pieces.append(item["text"])
                elif item.get("type") == "image":
                    pieces.append("[image]")
        output = "\n".join(pieces)
    else:
        output = ""
    state.events.append(
        LedgerEvent(
            kind=EventKind.TOOL_COMPLETED,
            at=at,
            text=cut_text(strip_orcmem_context(output, drop_unclosed=False)),
            tool_call_id=call_id,
            name=state.tool_names.get(call_id) if call_id else None,
            is_error=block.get("is_error") is True,
            sidechain=sidechain,
        )
    )


def _assistant(record: Record, state: _State) -> bool:
    message = record.get("message")
    if not isinstance(message, dict):
        return False
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return False
    at = time_ms(record.get("timestamp"))
    sidechain = record.get("isSidechain") is True
    model = string(message.get("model"))
    if record.get("isApiErrorMessage") is True:
        text = "\n".join(_texts(content)) or string(record.get("errorDetails")) or "API error"
        state.events.append(
            LedgerEvent(
                kind=EventKind.MESSAGE,
                at=at,
                role="assistant",
                text=cut_text(text),
                name=string(record.get("error")) or "api_error",
                is_error=True,
                sidechain=sidechain,
            )
        )
        return True
    if model == "<synthetic>":
        return True
    if model is not None:
        state.model = model
    message_id = string(message.get("id")) or string(record.get("uuid"))
    for block in content:
        if not isinstance(block, dict):
            continue
        block_type = block.get("type")
        if block_type == "text":
            said = block.get("text")
            if isinstance(said, str) and said.strip():
                _add_text(said, message_id, at, sidechain, state)
        elif block_type == "tool_use":
            _tool_use(block, message_id, at, sidechain, state)
    return True


def _texts(content: list[object]) -> list[str]:
    return [
        block["text"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    ]


def _add_text(text: str, message_id: str | None, at: int, sidechain: bool, state: _State) -> None:
    if message_id is not None and message_id in state.message_index:
        state.message_parts[state.message_index[message_id]].append(text)
        return
    index = len(state.events)
    state.events.append(
        LedgerEvent(kind=EventKind.MESSAGE, at=at, role="assistant", message_id=message_id, sidechain=sidechain)
    )
    state.message_parts[index] = [text]
    if message_id is not None:
        state.message_index[message_id] = index


def _tool_use(block: Record, message_id: str | None, at: int, sidechain: bool, state: _State) -> None:
    name = string(block.get("name"))
    call_id = string(block.get("id"))
    if name is None:
        return
    if call_id is not None:
        state.tool_names[call_id] = name
    state.events.append(
        LedgerEvent(
            kind=EventKind.TOOL_STARTED,
            at=at,
            message_id=message_id,
            tool_call_id=call_id,
            name=name,
            sidechain=sidechain,
        )
    )
    change = _FILE_TOOLS.get(name)
    tool_input = block.get("input")
    if change is None or not isinstance(tool_input, dict):
        return
    path = next((tool_input[key] for key in _FILE_PATH_INPUTS if string(tool_input.get(key))), None)
    if path is not None:
        state.events.append(
            LedgerEvent(
                kind=EventKind.FILE_CHANGED,
                at=at,
                text=cut_text(path),
                message_id=message_id,
                tool_call_id=call_id,
                name=change,
                sidechain=sidechain,
            )
        )


def _system(record: Record, state: _State) -> bool:
    if record.get("subtype") != "compact_boundary":
        return True  # turn durations, hook summaries, retry notices: nothing extraction reads
    metadata = record.get("compactMetadata")
    trigger = string(metadata.get("trigger")) if isinstance(metadata, dict) else None
    state.events.append(
        LedgerEvent(
            kind=EventKind.COMPACTION,
            at=time_ms(record.get("timestamp")),
            name=trigger,
            sidechain=record.get("isSidechain") is True,
        )
    )
    return True


def _attachment(record: Record, state: _State) -> bool:
    attachment = record.get("attachment")
    if not isinstance(attachment, dict):
        return False
    if attachment.get("type") != "queued_command":
        return True  # hook_additional_context (orcmem's own injection among them), memory files, hook results
    origin = attachment.get("origin")
    human = not isinstance(origin, dict) or origin.get("kind") in (None, "human")
    prompt = attachment.get("prompt")
    if attachment.get("commandMode") not in (None, "prompt") or not human or not isinstance(prompt, str):
        return True
    text = _prompt_text(prompt)
    if text is not None:
        state.events.append(
            LedgerEvent(
                kind=EventKind.MESSAGE,
                at=time_ms(record.get("timestamp") or attachment.get("timestamp")),
                role="user",
                text=cut_text(text),
                message_id=string(record.get("uuid")),
                sidechain=record.get("isSidechain") is True,
            )
        )
    return True
