"""What a setup run is asked to do (SetupOptions), and what it changed, file by file, for the CLI to print."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from orcmem.models.data_shapes import JsonObject

Scope = Literal["user", "project"]  # the user's own config, or the project's (committed with it)
ItemAction = Literal["added", "updated", "removed", "unchanged"]
FileAction = Literal["created", "updated", "deleted", "unchanged"]

_WOULD = {"created": "would be created", "updated": "would be updated", "deleted": "would be deleted"}


@dataclass(frozen=True)
class SetupOptions:
    """What an agent's setup takes whatever the agent: the project, where backups go, the orcmem to run (None: this
    one), whether to take orcmem out, only say what would change, accept a run cache's path, and the profile an MCP
    server started with a minimal environment needs named."""

    project_dir: Path
    backup_dir: Path
    orcmem_command: Sequence[str] | None = None
    remove: bool = False
    dry_run: bool = False
    allow_ephemeral: bool = False
    profile_home: Path | None = None


@dataclass(frozen=True)
class ItemChange:
    """One entry orcmem manages in a file (a hook of one event, the MCP server) and what happened to it."""

    item: str
    action: ItemAction
    detail: str = ""


@dataclass(frozen=True)
class FileReport:
    """One configuration file: what happened to it, to each of orcmem's entries, and where its backup went."""

    path: Path
    action: FileAction
    items: tuple[ItemChange, ...] = ()
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        """True when the file was (or, in a dry run, would be) written or deleted."""
        return self.action != "unchanged"


@dataclass(frozen=True)
class SetupReport:
    """The outcome of an agent's setup (`setup_claude`, `setup_codex`, `setup_gemini`, `setup_copilot`,
    `setup_opencode`, `setup_cursor`): every file looked at, and notes for the user."""

    agent: Literal["claude", "codex", "gemini", "copilot", "opencode", "cursor"]
    scope: str
    remove: bool
    dry_run: bool
    files: tuple[FileReport, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def changed(self) -> bool:
        """True when any file was (or would be) changed."""
        return any(report.changed for report in self.files)

    def lines(self) -> list[str]:
        """Human-readable lines: one per file, one per orcmem entry that changed, then the notes."""
        out: list[str] = []
        if self.dry_run:
            out.append("Dry run: nothing was written.")
        for report in self.files:
            state = _WOULD.get(report.action, report.action) if self.dry_run else report.action
            line = f"{report.path}: {state}"
            if report.backup is not None:
                line += f" (backup: {report.backup.name})"
            out.append(line)
            for item in report.items:
                if item.action == "unchanged" and not item.detail:
                    continue
                text = f"  {item.action:<9} {item.item}"
                if item.detail:
                    text += f": {item.detail}"
                out.append(text)
        out.extend(f"Note: {note}" for note in self.notes)
        return out

    def as_dict(self) -> JsonObject:
        """A JSON-ready form (paths as strings)."""
        return {
            "agent": self.agent,
            "scope": self.scope,
            "remove": self.remove,
            "dry_run": self.dry_run,
            "changed": self.changed,
            "files": [
                {
                    "path": str(report.path),
                    "action": report.action,
                    "backup": str(report.backup) if report.backup else None,
                    "items": [{"item": i.item, "action": i.action, "detail": i.detail} for i in report.items],
                }
                for report in self.files
            ],
            "notes": list(self.notes),
        }
