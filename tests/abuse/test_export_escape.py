"""Export never writes outside the project root, whatever symlinks a repository holds (tests/test_export.py covers
a CLAUDE.md that links straight out, and a link that stays inside). Each escape is tried through the service, the
CLI and the Memory page: the file outside keeps its bytes, nothing new appears outside, and the answer is a clean
error, never a traceback or a 500.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from orcmem.models.constants import EXPORT_HEADING
from orcmem.models.errors import ExportError
from orcmem.models.types import NewMemory, Project, Source
from orcmem.service.memory_service import MemoryService
from tests.web.support import form

PRECIOUS = "precious: do not touch\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the project, holding files a malicious repository would like to overwrite."""
    folder = tmp_path / "outside"
    folder.mkdir()
    for name in ("CLAUDE.md", "AGENTS.md", "authorized_keys"):
        (folder / name).write_text(PRECIOUS)
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# Each layout makes `name` in the project lead outside; returns what it set up.
Layout = Callable[[Path, Path, str], None]


def direct_relative(project: Path, outside: Path, name: str) -> None:
    os.symlink(os.path.relpath(outside / name, project), project / name)


def dangling(project: Path, outside: Path, name: str) -> None:
    os.symlink(outside / "new-file.md", project / name)  # does not exist yet: export must not create it


def chain(project: Path, outside: Path, name: str) -> None:
    (project / "docs").mkdir()
    os.symlink(outside / "authorized_keys", project / "docs" / "hop.md")  # an inside link that leads out
    os.symlink(project / "docs" / "hop.md", project / name)


def symlinked_folder(project: Path, outside: Path, name: str) -> None:
    os.symlink(outside, project / "shared")  # a folder of the repository that is really somewhere else
    os.symlink(Path("shared") / name, project / name)


def to_the_parent(project: Path, outside: Path, name: str) -> None:
    os.symlink(project.parent, project / "up")
    os.symlink(Path("up") / "outside" / name, project / name)


def loop(project: Path, outside: Path, name: str) -> None:
    os.symlink(name, project / name)


def ping_pong(project: Path, outside: Path, name: str) -> None:
    os.symlink(project / "b.md", project / name)
    os.symlink(project / name, project / "b.md")


LAYOUTS = [direct_relative, dangling, chain, symlinked_folder, to_the_parent, loop, ping_pong]


@pytest.fixture
def memory_id(service: MemoryService, project: Project) -> str:
    new = NewMemory(type="lesson", title="Exported rule", body="stays in the project", source=Source.USER)
    return service.record(project, new).memory.id


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("name", ["CLAUDE.md", "AGENTS.md"])
def test_the_service_refuses_every_escape(
    service: MemoryService, project: Project, project_dir: Path, outside: Path, memory_id: str, layout: Layout, name
) -> None:
    layout(project_dir, outside, name)
    before, parent_before = snapshot(outside), sorted(os.listdir(project_dir.parent))
    with pytest.raises(ExportError):
        service.export(project, memory_id, name, project_dir)
    assert snapshot(outside) == before
    assert sorted(os.listdir(project_dir.parent)) == parent_before
    assert [p.name for p in project_dir.iterdir() if p.name.startswith(f".{name}.")] == []  # no temp file left


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda f: f.__name__)
def test_the_cli_says_why_in_one_line(run, project_dir: Path, outside: Path, memory_id: str, layout: Layout) -> None:
    layout(project_dir, outside, "CLAUDE.md")
    before = snapshot(outside)
    result = run("export", memory_id, "--to", "CLAUDE.md", ok=False)  # any other exception fails the test
    assert result.exit_code != 0 and result.stdout == ""
    assert result.stderr.startswith("orcmem: ") and len(result.stderr.strip().splitlines()) == 1
    assert snapshot(outside) == before


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda f: f.__name__)
def test_the_memory_page_shows_an_error_notice(
    web: TestClient, project: Project, project_dir: Path, outside: Path, memory_id: str, layout: Layout
) -> None:
    layout(project_dir, outside, "AGENTS.md")
    before = snapshot(outside)
    response = web.post(
        f"/memories/{memory_id}/export",
        data=form(project=project.id, file="AGENTS.md"),
        headers={"accept": "application/json"},
    )
    assert response.status_code == 400 and response.json()["ok"] is False, response.text
    assert snapshot(outside) == before


def test_a_hard_link_to_a_file_outside_is_replaced_not_written_through(
    service: MemoryService, project: Project, project_dir: Path, outside: Path, memory_id: str
) -> None:
    os.link(outside / "CLAUDE.md", project_dir / "CLAUDE.md")
    service.export(project, memory_id, "CLAUDE.md", project_dir)
    assert (outside / "CLAUDE.md").read_text() == PRECIOUS  # the rename gave the project its own file
    assert (project_dir / "CLAUDE.md").read_text().startswith(PRECIOUS.rstrip() + "\n\n" + EXPORT_HEADING)


def test_a_project_reached_through_a_symlinked_parent_is_written_in_place(
    service: MemoryService, project: Project, project_dir: Path, tmp_path: Path, memory_id: str
) -> None:
    # The project folder opened through a link (/work -> /mnt/disk/work): the real folder is the project.
    link = tmp_path / "link-to-parent"
    os.symlink(project_dir.parent, link)
    target, changed = service.export(project, memory_id, "CLAUDE.md", link / project_dir.name)
    assert changed and target == (project_dir / "CLAUDE.md").resolve()
    assert "- Exported rule: stays in the project" in (project_dir / "CLAUDE.md").read_text()
