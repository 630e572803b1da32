"""The lowest layer: constants, enums and dataclasses, with no dependencies on the rest of orcmem."""

from orcmem.models.ledger import Agent, EventKind, LedgerEvent, TranscriptChunk
from orcmem.models.types import (
    Memory,
    MemoryFilter,
    MemorySettings,
    MemoryType,
    NewMemory,
    Project,
    RecordResult,
    Scope,
    ScoreParts,
    SearchHit,
    Source,
    Status,
    Verdict,
    new_memory_id,
)

__all__ = [
    "Agent",
    "EventKind",
    "LedgerEvent",
    "TranscriptChunk",
    "Memory",
    "MemoryFilter",
    "MemorySettings",
    "MemoryType",
    "NewMemory",
    "Project",
    "RecordResult",
    "Scope",
    "ScoreParts",
    "SearchHit",
    "Source",
    "Status",
    "Verdict",
    "new_memory_id",
]
