"""Shared fixtures: every test gets its own ORCMEM_HOME and never touches the user's profile."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from orcmem.models import NewMemory, Project, Source
from orcmem.service import MemoryService
from orcmem.workspace import locate


@pytest.fixture(autouse=True)
def orcmem_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh profile folder for each test."""
    home = tmp_path / "orcmem-home"
    monkeypatch.setenv("ORCMEM_HOME", str(home))
    return home


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """A plain project folder (not a git repository)."""
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


class Clock:
    """A settable clock in milliseconds."""

    def __init__(self, start: int = 1_800_000_000_000) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now

    def advance_days(self, days: float) -> None:
        self.now += int(days * 86_400_000)


@pytest.fixture
def clock() -> Clock:
    """A clock tests can move."""
    return Clock()


@pytest.fixture
def service(orcmem_home: Path, clock: Clock) -> Iterator[MemoryService]:
    """A service on the test's profile with memory turned on."""
    svc = MemoryService.open(orcmem_home)
    svc.clock = clock
    svc.set_enabled(True)
    yield svc
    svc.close()


@pytest.fixture
def project(service: MemoryService, project_dir: Path) -> Project:
    """The project of `project_dir`."""
    found = service.project(locate(project_dir))
    assert found is not None
    return found


def user_memory(title: str = "Use the forks pool", body: str = "vitest --pool=forks avoids crashes", **kw) -> NewMemory:
    """A memory as the user would add it."""
    return NewMemory(type=kw.pop("type", "lesson"), title=title, body=body, source=kw.pop("source", Source.USER), **kw)
