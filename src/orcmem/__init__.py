"""orcmem: project memory for coding agents, in one local SQLite file.

The public names load on first use (PEP 562), so `import orcmem.hooks` stays cheap for agent hooks.
"""

from __future__ import annotations

from orcmem.lazy import lazy_getattr

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the hooks milliseconds

__version__ = "0.1.0"

_PUBLIC = {
    "ExportError": "orcmem.errors",
    "MemoryOffError": "orcmem.errors",
    "NotFoundError": "orcmem.errors",
    "OrcmemError": "orcmem.errors",
    "OwnershipError": "orcmem.errors",
    "StoreError": "orcmem.errors",
    "ValidationError": "orcmem.errors",
    "Memory": "orcmem.models",
    "MemoryFilter": "orcmem.models",
    "MemoryType": "orcmem.models",
    "NewMemory": "orcmem.models",
    "Project": "orcmem.models",
    "Scope": "orcmem.models",
    "SearchHit": "orcmem.models",
    "Source": "orcmem.models",
    "Status": "orcmem.models",
    "MemoryService": "orcmem.service",
}

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

if TYPE_CHECKING:
    from orcmem.errors import (
        ExportError,
        MemoryOffError,
        NotFoundError,
        OrcmemError,
        OwnershipError,
        StoreError,
        ValidationError,
    )
    from orcmem.models import Memory, MemoryFilter, MemoryType, NewMemory, Project, Scope, SearchHit, Source, Status
    from orcmem.service import MemoryService


__getattr__ = lazy_getattr(__name__, _PUBLIC)
