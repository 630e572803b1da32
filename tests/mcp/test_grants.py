"""Grants: what "allow for this session / workspace" stores, and what it covers."""

from __future__ import annotations

import pytest

from orcmem.host.workspace import locate
from orcmem.models.errors import ValidationError
from orcmem.models.types import Project
from orcmem.service.memory_service import MemoryService
from orcmem.store.grants import GrantRepository


@pytest.fixture
def grants(service: MemoryService) -> GrantRepository:
    return GrantRepository(service.store.db)


def test_a_session_grant_covers_only_its_session(grants: GrantRepository, project: Project) -> None:
    assert not grants.covers("memory_write", project.id, "s1")
    grants.add("memory_write", project.id, "session", "s1", now=1)
    assert grants.covers("memory_write", project.id, "s1")
    assert not grants.covers("memory_write", project.id, "s2")
    assert not grants.covers("other_action", project.id, "s1")


def test_a_workspace_grant_covers_every_session_of_its_project_only(
    grants: GrantRepository, service: MemoryService, project: Project, tmp_path
) -> None:
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    other = service.project(locate(other_dir))
    assert other is not None
    grants.add("memory_write", project.id, "workspace", "s1", now=1)
    assert grants.covers("memory_write", project.id, "s2")
    assert grants.covers("memory_write", project.id, None)
    assert not grants.covers("memory_write", other.id, "s1")


def test_adding_the_same_grant_twice_keeps_one_row(grants: GrantRepository, project: Project) -> None:
    first = grants.add("memory_write", project.id, "workspace", "s1", now=1)
    second = grants.add("memory_write", project.id, "workspace", "s2", now=2)
    assert first.pk == second.pk
    assert first.session_id is None  # a workspace grant belongs to no session
    assert len(grants.list(project.id)) == 1


def test_remove_and_clear(grants: GrantRepository, project: Project) -> None:
    session = grants.add("memory_write", project.id, "session", "s1", now=1)
    grants.add("memory_write", project.id, "session", "s2", now=1)
    grants.add("memory_write", project.id, "workspace", None, now=1)
    assert grants.remove(session.pk)
    assert not grants.remove(session.pk)
    assert grants.clear(project.id, session_id="s2") == 1
    assert [g.scope for g in grants.list()] == ["workspace"]
    assert grants.clear() == 1
    assert grants.list() == []


def test_bad_scopes_are_refused(grants: GrantRepository, project: Project) -> None:
    with pytest.raises(ValidationError, match="Unknown grant scope"):
        grants.add("memory_write", project.id, "forever", "s1", now=1)
    with pytest.raises(ValidationError, match="session's id"):
        grants.add("memory_write", project.id, "session", None, now=1)
