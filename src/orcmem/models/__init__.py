"""The lowest layer: constants, enums and dataclasses, with no dependencies on the rest of orcmem.

Names load on first use (see orcmem.lazy), so `orcmem.models.constants` alone stays cheap.
"""

from __future__ import annotations

from orcmem.lazy import lazy_getattr

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the hooks milliseconds

if TYPE_CHECKING:
    from orcmem.models.ledger import Agent, EventKind, LedgerEvent, TranscriptChunk, TurnState
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
    "TranscriptChunk",
    "TurnState",
    "Verdict",
    "new_memory_id",
]

__getattr__ = lazy_getattr(
    __name__,
    {
        "Agent": "orcmem.models.ledger",
        "EventKind": "orcmem.models.ledger",
        "LedgerEvent": "orcmem.models.ledger",
        "TranscriptChunk": "orcmem.models.ledger",
        "TurnState": "orcmem.models.ledger",
        "Memory": "orcmem.models.types",
        "MemoryFilter": "orcmem.models.types",
        "MemorySettings": "orcmem.models.types",
        "MemoryType": "orcmem.models.types",
        "NewMemory": "orcmem.models.types",
        "Project": "orcmem.models.types",
        "RecordResult": "orcmem.models.types",
        "Scope": "orcmem.models.types",
        "ScoreParts": "orcmem.models.types",
        "SearchHit": "orcmem.models.types",
        "Source": "orcmem.models.types",
        "Status": "orcmem.models.types",
        "Verdict": "orcmem.models.types",
        "new_memory_id": "orcmem.models.types",
    },
)
