"""The public surface is explicit and pinned."""

import orcmem


def test_public_names_are_pinned() -> None:
    assert sorted(orcmem.__all__) == [
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
    for name in orcmem.__all__:
        assert hasattr(orcmem, name)


def test_every_error_is_an_orcmem_error() -> None:
    for name in ("ExportError", "MemoryOffError", "NotFoundError", "OwnershipError", "StoreError", "ValidationError"):
        assert issubclass(getattr(orcmem, name), orcmem.OrcmemError)
