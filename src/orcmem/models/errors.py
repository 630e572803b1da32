"""The error hierarchy; entry points turn these into one-line messages, tool errors or silent hook logs."""

from __future__ import annotations


class OrcmemError(Exception):
    """Base of every error orcmem raises on purpose; its message is fit to show a user."""


class ValidationError(OrcmemError):
    """Input broke a rule (a limit, an unknown type, a malformed id); nothing changed."""


class NotFoundError(OrcmemError):
    """The memory, project or file asked for does not exist here."""


class OwnershipError(OrcmemError):
    """Someone other than the user tried to replace or judge a memory the user wrote."""


class MemoryOffError(OrcmemError):
    """Memory is turned off, so the operation is refused."""


class StoreError(OrcmemError):
    """The database could not be opened, read or written."""


class ExportError(OrcmemError):
    """A memory could not be added to CLAUDE.md or AGENTS.md; the file was left as it was."""


class ModelError(OrcmemError):
    """The embedding model could not be downloaded, unpacked, verified or loaded; nothing half-done was kept."""


class ModelHostUnreachable(ModelError):
    """The model's download host could not be reached (no network, a proxy, a firewall): nothing was received."""


class KeyStoreError(OrcmemError):
    """The OS secret store could not be used."""


class PermissionDenied(OrcmemError):
    """The mode, the automatic review or the user refused a change to memory; nothing changed."""


class TeamError(OrcmemError):
    """The team pool could not be reached, set up or synced; the local memories are unchanged."""
