"""The Store facade: one open profile database and its repositories."""

from __future__ import annotations

from pathlib import Path

from orcmem.store.audit import AuditRepository
from orcmem.store.audit_pairs import AuditPairRepository
from orcmem.store.audit_scan import AuditScanRepository
from orcmem.store.citations import CitationRepository
from orcmem.store.connection import Database
from orcmem.store.grants import GrantRepository
from orcmem.store.imports import ImportRepository
from orcmem.store.jobs import JobRepository
from orcmem.store.links import LinkRepository
from orcmem.store.memories import MemoryRepository
from orcmem.store.projects import ProjectRepository
from orcmem.store.runs import RunRepository
from orcmem.store.settings import SettingsRepository
from orcmem.store.stats import StatsRepository
from orcmem.store.summaries import SummaryRepository
from orcmem.store.tasks import TaskRepository
from orcmem.store.team import TeamRepository
from orcmem.store.team_links import TeamLinkRepository
from orcmem.store.usage import UsageRepository
from orcmem.store.vectors import VectorRepository


class Store:
    """One open profile database and its repositories."""

    def __init__(self, db: Database) -> None:
        """Every repository over an open database."""
        self.db = db
        self.memories = MemoryRepository(db)
        self.projects = ProjectRepository(db)
        self.settings = SettingsRepository(db)
        self.audit = AuditRepository(db)
        self.vectors = VectorRepository(db)
        self.runs = RunRepository(db)
        self.jobs = JobRepository(db)
        self.summaries = SummaryRepository(db)
        self.tasks = TaskRepository(db)
        self.grants = GrantRepository(db)
        self.stats = StatsRepository(db)
        self.team = TeamRepository(db, self.memories, self.vectors)
        self.citations = CitationRepository(db)
        self.imports = ImportRepository(db)
        self.usage = UsageRepository(db)
        self.links = LinkRepository(db)
        self.team_links = TeamLinkRepository(db)
        self.audit_scan = AuditScanRepository(db)
        self.audit_pairs = AuditPairRepository(db)

    @classmethod
    def open(cls, path: Path, *, vectors: bool = True) -> Store:
        """Open (and migrate) the database file at `path`."""
        return cls(Database(path, vectors=vectors))

    def close(self) -> None:
        """Close the database."""
        self.db.close()
