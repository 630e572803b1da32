"""The ledger of agent runs: what transcripts become, and what extraction reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from orcmem.models.vocabulary import Agent


class EventKind(StrEnum):
    """The kinds of ledger events extraction reads (named as in docs/learning.md)."""

    MESSAGE = "message.completed"  # a user prompt or an agent message
    TOOL_STARTED = "tool.started"  # a tool call: its name (inputs are never stored)
    TOOL_COMPLETED = "tool.completed"  # a tool result: its output (cut) and whether it failed
    FILE_CHANGED = "file.changed"  # a file the agent edited or wrote
    COMPACTION = "compaction"  # the agent compacted its context here


@dataclass(frozen=True, slots=True)
class LedgerEvent:
    """One event of a run, in transcript order. `text` holds a message, a tool output, or a file change's path."""

    kind: EventKind
    at: int  # milliseconds since the epoch (0 when the transcript gave no time)
    role: str | None = None  # "user" or "assistant" for messages
    text: str = ""
    message_id: str | None = None
    tool_call_id: str | None = None
    name: str | None = None  # tool name, or the change kind ("edit", "write", "add") for file.changed
    is_error: bool = False
    sidechain: bool = False  # from a subagent rather than the main conversation


@dataclass(frozen=True, slots=True)
class TurnState:
    """Prompts still waiting for an answer when a chunk ends, per chain (main conversation, subagents).

    Kept in the run between ingests: Claude Code runs its `Stop` hook before it writes the turn's last answer, so
    a prompt seen by one ingest is often answered only in the next one.
    """

    pending: int = 0
    pending_sidechain: int = 0


NO_PENDING_TURN = TurnState()


@dataclass(slots=True)
class TranscriptChunk:
    """What parsing a transcript from a byte offset produced."""

    agent: Agent
    events: list[LedgerEvent] = field(default_factory=list)
    session_id: str | None = None
    cwd: str | None = None
    model: str | None = None
    title: str | None = None
    turns: int = 0  # user turns that got an answer in this chunk
    end_offset: int = 0  # byte offset after the last complete line read
    skipped_lines: int = 0  # malformed or unknown lines, counted and skipped
    more: bool = False  # the file holds more complete lines after end_offset (it is read a slice at a time)
