"""The words orcmem's interfaces share, as enums: click choices, MCP schemas, hook tables and page labels are built
from these, so a new word is added in one place.

Free of dataclasses and typing: hooks import it.
"""

from __future__ import annotations

from enum import StrEnum


class Agent(StrEnum):
    """The coding agents orcmem reads transcripts of, sets up, and can distil a run with."""

    CLAUDE = "claude"
    CODEX = "codex"
    GEMINI = "gemini"
    COPILOT = "copilot"
    OPENCODE = "opencode"
    CURSOR = "cursor"  # set up only: its hooks and MCP server (no session files orcmem reads, no distilling)


class Answer(StrEnum):
    """What the person answers when an agent asks to change memory: allow once, for the session or the workspace."""

    ONCE = "once"
    SESSION = "session"
    WORKSPACE = "workspace"
    DENY = "deny"


class HookName(StrEnum):
    """`orcmem hook NAME`: what an agent's hook entry runs."""

    SESSION_START = "session-start"
    PROMPT = "prompt"
    PRE_TOOL_USE = "pre-tool-use"
    STOP = "stop"
    SESSION_END = "session-end"


class TaskStatus(StrEnum):
    """Where a task stands."""

    OPEN = "open"
    IN_PROGRESS = "in_progress"
    REVIEW = "review"
    DONE = "done"


class JobState(StrEnum):
    """Where an extraction job stands."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped"


class UsageCall(StrEnum):
    """Which call of a distillation a cost-ledger row is: the distillation itself, or the contradiction judgement
    (the second, short call made when new memories have older ones they may contradict)."""

    DISTILL = "distill"
    JUDGEMENT = "judgement"


class ExtractionProvider(StrEnum):
    """Who distils finished runs: `auto` picks the signed-in agent CLI; `off` stops learning alone."""

    AUTO = "auto"
    CLAUDE = "claude"
    CODEX = "codex"
    GEMINI = "gemini"
    OPENCODE = "opencode"
    APIKEY = "apikey"
    OFF = "off"


class Mode(StrEnum):
    """How much an agent may change memory on its own."""

    PLAN = "plan"  # writes refused: the finding belongs in the plan
    REVIEW = "review"  # ask the user first
    ACCEPT_EDITS = "accept-edits"  # allowed
    AUTONOMOUS = "autonomous"  # allowed
    AUTO = "auto"  # an automatic review decides
    YOLO = "yolo"  # no checks at all (ownership rules still hold)


class ManageAction(StrEnum):
    """What `memory_manage` does."""

    CREATE = "create"
    UPDATE = "update"
    FORGET = "forget"


class ManageScope(StrEnum):
    """Which memories `memory_manage` addresses: the workspace's (a project memory) or every project's."""

    WORKSPACE = "workspace"
    GLOBAL = "global"


class ImportKind(StrEnum):
    """What an `orcmem import` batch read (docs/importing.md); `orcmem import list` shows it."""

    INSTRUCTIONS = "instructions"  # CLAUDE.md, AGENTS.md, GEMINI.md
    CLAUDE_MEMORY = "claude-memory"  # Claude Code's auto memory folder
    CODEX_MEMORY = "codex-memory"  # Codex's memories folder
    CLAUDE_MEM = "claude-mem"  # a claude-mem database or its JSON export
    JSONL = "jsonl"  # an orcmem backup


def values(vocabulary: type[StrEnum]) -> tuple[str, ...]:
    """A vocabulary's words, in their order (for click choices and schemas)."""
    return tuple(member.value for member in vocabulary)


class Meaning(StrEnum):
    """Whether a search used the query's meaning, and why not when it did not (only words then matched)."""

    USED = "used"
    OFF = "off"  # not asked for (memory off, or the caller searched by words)
    UNAVAILABLE = "unavailable"  # no model here, or no vector table
    LOADING = "loading"  # the model is still loading: words answer at once
    LATE = "late"  # the query's vector came after the time limit (a busy machine)
    FAILED = "failed"  # the model or the scan failed
