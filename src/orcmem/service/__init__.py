"""Service layer: MemoryService, the one API every entry point calls."""

from orcmem.service.memory_service import MEMORY_OFF_MESSAGE, MemoryService, now_ms

__all__ = ["MEMORY_OFF_MESSAGE", "MemoryService", "now_ms"]
