"""`orcmem setup claude --scope project` never writes through a link a repository planted: a `.mcp.json`, a
`.claude` folder or `.claude/settings.json` that leads outside the project is refused with one line and nothing is
written anywhere; a link that stays inside the project is followed; a FIFO in their place is refused at once."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from orcmem.models.errors import OrcmemError
from orcmem.setup_agents.claude import setup_claude
from orcmem.setup_agents.report import SetupOptions
from tests.setup.support import ORCMEM_BACKUPS, snapshot_tree


def project_setup(home: Path, project: Path, orcmem_bin: Path, **kwargs: object):
    options = SetupOptions(project, home / ORCMEM_BACKUPS, [str(orcmem_bin)], **kwargs)  # type: ignore[arg-type]
    return setup_claude("project", home=home, options=options)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder of the user's outside the project, with a JSON file a link could aim at."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "victim.json").write_text('{"keep": true}\n')
    return folder


def plant(project: Path, outside: Path, how: str) -> None:
    """A repository's link leading out of the project, planted the way `how` names."""
    if how == "mcp.json to a file":
        (project / ".mcp.json").symlink_to(outside / "victim.json")
    elif how == "mcp.json dangling":
        (project / ".mcp.json").symlink_to(outside / "created-by-orcmem.json")
    elif how == "mcp.json through an inside hop":
        (project / "docs").mkdir()
        (project / "docs" / "hop.json").symlink_to(outside / "victim.json")
        (project / ".mcp.json").symlink_to(os.path.join("docs", "hop.json"))
    elif how == ".claude folder":
        (project / ".claude").symlink_to(outside, target_is_directory=True)
    elif how == "settings.json to a file":
        (project / ".claude").mkdir()
        (project / ".claude" / "settings.json").symlink_to(outside / "victim.json")


@pytest.mark.parametrize(
    "how",
    [
        "mcp.json to a file",
        "mcp.json dangling",
        "mcp.json through an inside hop",
        ".claude folder",
        "settings.json to a file",
    ],
)
def test_a_link_leading_outside_the_project_is_refused_and_nothing_is_written(
    home: Path, project: Path, orcmem_bin: Path, outside: Path, how: str
) -> None:
    plant(project, outside, how)
    before_outside, before_project = snapshot_tree(outside), snapshot_tree(project)
    with pytest.raises(OrcmemError, match="leads outside the project") as raised:
        project_setup(home, project, orcmem_bin)
    assert "\n" not in str(raised.value)
    assert snapshot_tree(outside) == before_outside
    assert snapshot_tree(project) == before_project


def test_a_link_inside_the_project_is_followed_and_stays(home: Path, project: Path, orcmem_bin: Path) -> None:
    (project / "config").mkdir()
    (project / "config" / "mcp.json").write_text("{}\n")
    (project / ".mcp.json").symlink_to(os.path.join("config", "mcp.json"))
    project_setup(home, project, orcmem_bin)
    assert (project / ".mcp.json").is_symlink()
    assert "orcmem" in (project / "config" / "mcp.json").read_text()


def test_a_fifo_in_place_of_a_config_file_is_refused_at_once(home: Path, project: Path, orcmem_bin: Path) -> None:
    os.mkfifo(project / ".mcp.json")
    errors: list[BaseException] = []

    def attempt() -> None:
        try:
            project_setup(home, project, orcmem_bin)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            errors.append(exc)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(20)
    assert not worker.is_alive(), "setup blocked on the FIFO"
    assert len(errors) == 1 and isinstance(errors[0], OrcmemError) and "not a regular file" in str(errors[0])
    assert not (project / ".claude" / "settings.json").exists()  # planned first: nothing is written
