"""The one error the embed package raises on purpose."""

from __future__ import annotations

from orcmem.errors import OrcmemError


class ModelError(OrcmemError):
    """The embedding model could not be downloaded, unpacked, verified or loaded; nothing half-done was kept."""
