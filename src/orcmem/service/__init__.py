"""Service layer: MemoryService, the one API every entry point calls."""
