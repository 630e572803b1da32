"""orcmem: project memory for coding agents, in one local SQLite file."""

from orcmem.errors import (
    ExportError,
    MemoryOffError,
    NotFoundError,
    OrcmemError,
    OwnershipError,
    StoreError,
    ValidationError,
)
from orcmem.models import (
    Memory,
    MemoryFilter,
    MemoryType,
    NewMemory,
    Project,
    Scope,
    SearchHit,
    Source,
    Status,
)
from orcmem.service import MemoryService

__version__ = "0.1.0"

__all__ = [
    "ExportError",
    "Memory",
    "MemoryFilter",
    "MemoryOffError",
    "MemoryService",
    "MemoryType",
    "NewMemory",
    "NotFoundError",
    "OrcmemError",
    "OwnershipError",
    "Project",
    "Scope",
    "SearchHit",
    "Source",
    "Status",
    "StoreError",
    "ValidationError",
    "__version__",
]
