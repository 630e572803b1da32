"""Enums and dataclasses shared by every layer."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class MemoryType(StrEnum):
    """What kind of knowledge a memory holds: ten kinds (docs/learning.md)."""

    DECISION = "decision"
    SPEC = "spec"
    LESSON = "lesson"
    PREFERENCE = "preference"
    CONVENTION = "convention"
    COMMAND = "command"
    ENV_QUIRK = "env_quirk"
    OWNERSHIP = "ownership"
    FACT = "fact"
    WORKFLOW = "workflow"


class Scope(StrEnum):
    """Where a memory applies: one project, or every project on this machine."""

    PROJECT = "project"
    GLOBAL = "global"


class Source(StrEnum):
    """Who saved a memory."""

    USER = "user"
    AGENT = "agent"
    EXTRACTION = "extraction"
    TOOL = "tool"


class Status(StrEnum):
    """A memory's standing: only active memories are searched, briefed and recalled."""

    ACTIVE = "active"
    STALE = "stale"
    RETRACTED = "retracted"


class Verdict(StrEnum):
    """Feedback on a memory."""

    HELPFUL = "helpful"
    WRONG = "wrong"
    STALE = "stale"


@dataclass(frozen=True, slots=True)
class Project:
    """A project, identified by its canonical root (the git common dir, or the resolved folder)."""

    id: str
    canonical_root: str
    root_path: str
    name: str
    created_at: int
    last_seen_at: int

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Memory:
    """One stored memory; times are milliseconds since the epoch."""

    id: str
    scope: Scope
    project_id: str | None
    type: MemoryType
    topic_key: str | None
    title: str
    body: str
    confidence: float
    status: Status
    source: Source
    source_run_id: str | None
    source_task_id: str | None
    evidence_count: int
    files: tuple[str, ...]
    created_at: int
    updated_at: int
    last_confirmed_at: int
    origin_root: str | None = None
    flagged: bool = False
    author: str | None = None  # the person it was written by or for (docs/team.md)
    author_agent: str | None = None  # the agent that wrote it on their behalf; None when the person did
    stale_reason: str | None = None  # why the code it cites may have moved on (docs/freshness.md); None: it has not

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output, enums as strings and files as a list."""
        data = asdict(self)
        data["files"] = list(self.files)
        for key in ("scope", "type", "status", "source"):
            data[key] = str(data[key])
        return data


@dataclass(frozen=True, slots=True)
class NewMemory:
    """What a caller asks to record; the service validates, redacts and normalises it."""

    type: str
    title: str
    body: str
    source: Source
    topic_key: str | None = None
    scope: Scope = Scope.PROJECT
    confidence: float | None = None
    files: tuple[str, ...] = ()
    source_run_id: str | None = None
    source_task_id: str | None = None


@dataclass(frozen=True, slots=True)
class RecordResult:
    """The memory as stored, and whether the write merged into an existing one."""

    memory: Memory
    merged: bool


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Filters for listing memories; empty tuples mean no filter."""

    types: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    limit: int = 200
    offset: int = 0


@dataclass(frozen=True, slots=True)
class ScoreParts:
    """Each factor of a search score, for --explain."""

    word_rank: int | None
    meaning_rank: int | None
    fused: float
    type_weight: float
    confidence_factor: float
    recency_factor: float
    score: float
    freshness_factor: float = 1.0  # POSSIBLY_STALE_FACTOR when the code it cites moved on
    word_score: float | None = None  # BM25 relevance of the words (higher is better), when the words found it
    similarity: float | None = None  # cosine similarity to the query, when meaning found it


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A memory found by search, with its score and how it was made."""

    memory: Memory
    score: float
    parts: ScoreParts


@dataclass(frozen=True, slots=True)
class MemorySettings:
    """Memory settings as stored."""

    enabled: bool
    provider: str
    models: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output."""
        return asdict(self)


def new_memory_id() -> str:
    """A fresh public memory id: `mem_` and 32 lowercase hex characters from 128 random bits."""
    import secrets

    return "mem_" + secrets.token_hex(16)
